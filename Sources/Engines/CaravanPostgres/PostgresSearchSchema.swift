import CaravanCore
import CaravanSQL

/// The PostgreSQL objects of a table's declared search (`PostgresSearchNames`), rendered for a migration: the
/// `<table>_search` table (its key typed as the table's key), the PL/pgSQL entry function that computes a row's
/// document, folded trigram text and point, the trigger that keeps it in step, the fill from the rows the table has,
/// and the GIN and btree indexes. The functions they call (`caravan_fold`, `caravan_tsvector`, …) are the system
/// migration `system-0007-search-functions`. These are the objects `places-0003`/`places-0004` created by hand for
/// `places`, for any table.
struct PostgresSearchSchema {
    let table: TableSchema
    let indexes: SearchIndexes
    private let t, key, search, entry, sync: String
    private let searchName: String

    static func statements(_ table: TableSchema, _ indexes: SearchIndexes) -> [String] {
        let schema = PostgresSearchSchema(table: table, indexes: indexes)
        return [schema.searchTable(), schema.entryFunction(), schema.syncFunction()] + schema.triggerFillAndIndexes()
    }

    private init(table: TableSchema, indexes: SearchIndexes) {
        self.table = table
        self.indexes = indexes
        searchName = PostgresSearchNames(table: table.name).table
        t = PostgresSyntax.quote(table.name)
        key = PostgresSyntax.quote(table.primaryKey[0])
        search = PostgresSyntax.quote(searchName)
        entry = PostgresSyntax.quote(searchName + "_entry")
        sync = PostgresSyntax.quote(searchName + "_sync")
    }

    private func searchTable() -> String {
        let keyType = PostgresSyntax.typeName(table.column(named: table.primaryKey[0])?.type ?? .text)
        return """
            CREATE TABLE \(search) (
              "caravan_key" \(keyType) NOT NULL PRIMARY KEY,
              "caravan_document" tsvector NOT NULL,
              "caravan_fuzzy" text NOT NULL,
              "caravan_latitude" float8,
              "caravan_longitude" float8
            )
            """
    }

    /// The row's search entry: the full-text columns' tsvectors weighted A–D (`PostgresTextSearch.weightLetters`),
    /// array columns joined by spaces; the folded trigram text; the point.
    private func entryFunction() -> String {
        let document = zip(indexes.fullTextColumns, PostgresTextSearch.weightLetters(indexes)).map { name, letter in
            let column = "p." + PostgresSyntax.quote(name)
            let text = table.column(named: name)?.type == .textArray ? "array_to_string(\(column), ' ')" : column
            return "caravan_tsvector(\(text), '\(letter)')"
        }.joined(separator: "\n      || ")
        let fuzzy = indexes.fuzzy.isEmpty ? "''"
            : "caravan_fold(" + indexes.fuzzy.map { "COALESCE(p.\(PostgresSyntax.quote($0)), '')" }.joined(separator: " || ' ' || ") + ")"
        let point = indexes.geo.map { "p.\(PostgresSyntax.quote($0.latitude))::float8, p.\(PostgresSyntax.quote($0.longitude))::float8" }
            ?? "NULL::float8, NULL::float8"
        return """
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
            """
    }

    private func syncFunction() -> String {
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
        """
    }

    private func triggerFillAndIndexes() -> [String] {
        let watched = SearchIndexes.watchedColumns(of: table, indexes).map(PostgresSyntax.quote).joined(separator: ", ")
        var statements = [
            "CREATE TRIGGER \(sync) AFTER INSERT OR DELETE OR UPDATE OF \(watched) ON \(t) FOR EACH ROW EXECUTE FUNCTION \(sync)()",
            "INSERT INTO \(search) SELECT e.* FROM \(t) AS p CROSS JOIN LATERAL \(entry)(p) AS e",
            "CREATE INDEX \(PostgresSyntax.quote(searchName + "_document")) ON \(search) USING gin (\"caravan_document\")",
        ]
        if !indexes.fuzzy.isEmpty {
            statements.append("CREATE INDEX \(PostgresSyntax.quote(searchName + "_fuzzy")) ON \(search) USING gin (\"caravan_fuzzy\" gin_trgm_ops)")
        }
        if indexes.geo != nil {
            statements.append("CREATE INDEX \(PostgresSyntax.quote(searchName + "_geo")) ON \(search) (\"caravan_latitude\", \"caravan_longitude\")")
        }
        return statements
    }
}
