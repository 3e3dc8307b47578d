import CaravanCore
import CaravanSQL

/// The PostgreSQL objects of a table's declared search (`PostgresSearchNames`), rendered for a migration: the
/// `<table>_search` table (its key typed as the table's key), the PL/pgSQL entry function that computes a row's
/// document, folded trigram text and point, the trigger that keeps it in step, the fill from the rows the table has,
/// and the GIN and btree indexes. The functions they call (`caravan_fold`, `caravan_tsvector`, …) are the system
/// migration `system-0007-search-functions`. These are the objects `places-0003`/`places-0004` created by hand for
/// `places`, for any table.
enum PostgresSearchSchema {
    static func statements(_ table: TableSchema, _ indexes: SearchIndexes) -> [String] {
        let names = PostgresSearchNames(table: table.name)
        let t = PostgresSyntax.quote(table.name)
        let search = PostgresSyntax.quote(names.table)
        let keyColumn = table.column(named: table.primaryKey[0])
        let key = PostgresSyntax.quote(table.primaryKey[0])
        let entry = PostgresSyntax.quote(names.table + "_entry")
        let sync = PostgresSyntax.quote(names.table + "_sync")
        let letters = PostgresTextSearch.weightLetters(indexes)

        let document = zip(indexes.fullTextColumns, letters).map { name, letter in
            let column = "p." + PostgresSyntax.quote(name)
            let text = table.column(named: name)?.type == .textArray ? "array_to_string(\(column), ' ')" : column
            return "caravan_tsvector(\(text), '\(letter)')"
        }.joined(separator: "\n      || ")
        let fuzzy = indexes.fuzzy.isEmpty ? "''"
            : "caravan_fold(" + indexes.fuzzy.map { "COALESCE(p.\(PostgresSyntax.quote($0)), '')" }.joined(separator: " || ' ' || ") + ")"
        let point = indexes.geo.map { "p.\(PostgresSyntax.quote($0.latitude))::float8, p.\(PostgresSyntax.quote($0.longitude))::float8" }
            ?? "NULL::float8, NULL::float8"

        var watched = [table.primaryKey[0]] + indexes.fullTextColumns
        for column in indexes.fuzzy + [indexes.geo?.latitude, indexes.geo?.longitude].compactMap({ $0 }) where !watched.contains(column) {
            watched.append(column)
        }
        var statements = [
            """
            CREATE TABLE \(search) (
              "caravan_key" \(PostgresSyntax.typeName(keyColumn?.type ?? .text)) NOT NULL PRIMARY KEY,
              "caravan_document" tsvector NOT NULL,
              "caravan_fuzzy" text NOT NULL,
              "caravan_latitude" float8,
              "caravan_longitude" float8
            )
            """,
            """
            CREATE FUNCTION \(entry)(p \(t)) RETURNS \(search) LANGUAGE plpgsql STABLE AS $$
            DECLARE
              entry \(search);
            BEGIN
              SELECT p.\(key),
                \(document),
                \(fuzzy),
                \(point)
              INTO entry;
              RETURN entry;
            END
            $$
            """,
            """
            CREATE FUNCTION \(sync)() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
              IF TG_OP <> 'INSERT' THEN
                DELETE FROM \(search) WHERE "caravan_key" = OLD.\(key);
              END IF;
              IF TG_OP <> 'DELETE' THEN
                INSERT INTO \(search) SELECT * FROM \(entry)(NEW);
              END IF;
              RETURN NULL;
            END
            $$
            """,
            "CREATE TRIGGER \(sync) AFTER INSERT OR DELETE OR UPDATE OF \(watched.map(PostgresSyntax.quote).joined(separator: ", ")) ON \(t)"
                + " FOR EACH ROW EXECUTE FUNCTION \(sync)()",
            "INSERT INTO \(search) SELECT e.* FROM \(t) AS p CROSS JOIN LATERAL \(entry)(p) AS e",
            "CREATE INDEX \(PostgresSyntax.quote(names.table + "_document")) ON \(search) USING gin (\"caravan_document\")",
        ]
        if !indexes.fuzzy.isEmpty {
            statements.append("CREATE INDEX \(PostgresSyntax.quote(names.table + "_fuzzy")) ON \(search) USING gin (\"caravan_fuzzy\" gin_trgm_ops)")
        }
        if indexes.geo != nil {
            statements.append("CREATE INDEX \(PostgresSyntax.quote(names.table + "_geo")) ON \(search) (\"caravan_latitude\", \"caravan_longitude\")")
        }
        return statements
    }
}
