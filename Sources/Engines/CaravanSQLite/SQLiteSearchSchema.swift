import CaravanCore
import CaravanSQL

/// The SQLite objects of a table's declared search (`SQLiteSearchNames`), rendered for a migration: created, filled
/// from the table's rows, and kept in step by AFTER INSERT / UPDATE / DELETE triggers. `places-0002-search` was
/// written by hand before search could be declared; `DeclaredSearchTests` checks that the declaration of `places`
/// renders to that file byte for byte.
struct SQLiteSearchSchema {
    let table: TableSchema
    let indexes: SearchIndexes
    private let t, key, keys, fts, fuzzy, geo: String
    private let fuzzyVocabulary: String
    private let columns: [String]

    static func statements(_ table: TableSchema, _ indexes: SearchIndexes) -> [String] {
        let schema = SQLiteSearchSchema(table: table, indexes: indexes)
        return schema.objects() + schema.fill() + schema.triggers()
    }

    private init(table: TableSchema, indexes: SearchIndexes) {
        self.table = table
        self.indexes = indexes
        let names = SQLiteSearchNames(table: table.name)
        t = SQLiteSyntax.quote(table.name)
        key = SQLiteSyntax.quote(table.primaryKey[0])
        keys = SQLiteSyntax.quote(names.keys)
        fts = SQLiteSyntax.quote(names.fullText)
        fuzzy = SQLiteSyntax.quote(names.fuzzy)
        fuzzyVocabulary = SQLiteSyntax.quote(names.fuzzyVocabulary)
        geo = SQLiteSyntax.quote(names.geo)
        columns = indexes.fullTextColumns.map(SQLiteSyntax.quote)
    }

    private var columnList: String { columns.joined(separator: ", ") }
    private var ftsInsert: String { "INSERT INTO \(fts) (rowid, \(columnList))" }
    private var geoInsert: String { "INSERT INTO \(geo) (\"id\", \"min_lat\", \"max_lat\", \"min_lng\", \"max_lng\", \"lat\", \"lng\")" }

    /// The stable id of the row `row` (`NEW` or `OLD`).
    private func stableID(_ row: String) -> String {
        "(SELECT \"search_rowid\" FROM \(keys) WHERE \"caravan_key\" = \(row).\(key))"
    }

    /// The folded text of the fuzzy columns of row `row` (`p` or `NEW`).
    private func fuzzyText(_ row: String) -> String {
        "caravan_fold(" + indexes.fuzzy.map { "COALESCE(\(row).\(SQLiteSyntax.quote($0)), '')" }.joined(separator: " || ' ' || ") + ")"
    }

    /// The R*Tree values of row `row`: the point as a zero-size box, and the exact coordinates.
    private func geoValues(_ row: String, _ point: SearchIndexes.GeoColumns) -> String {
        let lat = "\(row).\(SQLiteSyntax.quote(point.latitude))", lng = "\(row).\(SQLiteSyntax.quote(point.longitude))"
        return "\(lat), \(lat), \(lng), \(lng), \(lat), \(lng)"
    }

    private func hasPoint(_ row: String, _ point: SearchIndexes.GeoColumns) -> String {
        "\(row).\(SQLiteSyntax.quote(point.latitude)) IS NOT NULL AND \(row).\(SQLiteSyntax.quote(point.longitude)) IS NOT NULL"
    }

    private func objects() -> [String] {
        var statements = [
            "CREATE TABLE \(keys) (\n  \"search_rowid\" INTEGER PRIMARY KEY,\n  \"caravan_key\" TEXT NOT NULL UNIQUE\n)",
            "CREATE VIRTUAL TABLE \(fts) USING fts5(\n  \(columnList),\n  tokenize = 'caravan_fold stem'\n)",
        ]
        if !indexes.fuzzy.isEmpty {
            statements.append("CREATE VIRTUAL TABLE \(fuzzy) USING fts5(\"text\", tokenize = 'trigram')")
            statements.append("CREATE VIRTUAL TABLE \(fuzzyVocabulary) USING fts5vocab(\(fuzzy), 'row')")
        }
        if indexes.geo != nil {
            statements.append("CREATE VIRTUAL TABLE \(geo) USING rtree(\"id\", \"min_lat\", \"max_lat\", \"min_lng\", \"max_lng\", +\"lat\", +\"lng\")")
        }
        return statements
    }

    /// Fills the objects from the rows the table has.
    private func fill() -> [String] {
        let joined = "FROM \(t) AS p JOIN \(keys) AS k ON k.\"caravan_key\" = p.\(key)"
        var statements = [
            "INSERT INTO \(keys) (\"caravan_key\") SELECT \(key) FROM \(t) ORDER BY \(key)",
            "\(ftsInsert)\n  SELECT k.\"search_rowid\", \(columns.map { "p." + $0 }.joined(separator: ", "))\n  \(joined)",
        ]
        if !indexes.fuzzy.isEmpty {
            statements.append("INSERT INTO \(fuzzy) (rowid, \"text\")\n  SELECT k.\"search_rowid\", \(fuzzyText("p"))\n  \(joined)")
        }
        if let point = indexes.geo {
            statements.append("\(geoInsert)\n  SELECT k.\"search_rowid\", \(geoValues("p", point))\n  \(joined)\n  WHERE \(hasPoint("p", point))")
        }
        return statements
    }

    /// The AFTER INSERT, UPDATE OF (the indexed columns) and DELETE triggers.
    private func triggers() -> [String] {
        let newKey = "FROM \(keys) AS k WHERE k.\"caravan_key\" = NEW.\(key)"
        var afterInsert = [
            "INSERT INTO \(keys) (\"caravan_key\") VALUES (NEW.\(key));",
            "\(ftsInsert)\n    SELECT k.\"search_rowid\", \(columns.map { "NEW." + $0 }.joined(separator: ", "))\n    \(newKey);",
        ]
        var afterUpdate = [
            "UPDATE \(keys) SET \"caravan_key\" = NEW.\(key) WHERE \"caravan_key\" = OLD.\(key) AND NEW.\(key) IS NOT OLD.\(key);",
            "UPDATE \(fts) SET " + stride(from: 0, to: columns.count, by: 4).map { start in
                columns[start..<min(start + 4, columns.count)].map { "\($0) = NEW.\($0)" }.joined(separator: ", ")
            }.joined(separator: ",\n      ") + "\n    WHERE rowid = \(stableID("NEW"));",
        ]
        var afterDelete = ["DELETE FROM \(fts) WHERE rowid = \(stableID("OLD"));"]
        if !indexes.fuzzy.isEmpty {
            afterInsert.append("INSERT INTO \(fuzzy) (rowid, \"text\")\n    SELECT k.\"search_rowid\", \(fuzzyText("NEW"))\n    \(newKey);")
            afterUpdate.append("UPDATE \(fuzzy) SET \"text\" = \(fuzzyText("NEW"))\n    WHERE rowid = \(stableID("NEW"));")
            afterDelete.append("DELETE FROM \(fuzzy) WHERE rowid = \(stableID("OLD"));")
        }
        if let point = indexes.geo {
            let insertPoint = "\(geoInsert)\n    SELECT k.\"search_rowid\", \(geoValues("NEW", point))\n    \(newKey) AND \(hasPoint("NEW", point));"
            afterInsert.append(insertPoint)
            afterUpdate += ["DELETE FROM \(geo) WHERE \"id\" = \(stableID("NEW"));", insertPoint]
            afterDelete.append("DELETE FROM \(geo) WHERE \"id\" = \(stableID("OLD"));")
        }
        afterDelete.append("DELETE FROM \(keys) WHERE \"caravan_key\" = OLD.\(key);")
        let watched = SearchIndexes.watchedColumns(of: table, indexes).map(SQLiteSyntax.quote).joined(separator: ", ")
        return [trigger("insert", "INSERT", afterInsert), trigger("update", "UPDATE OF " + watched, afterUpdate), trigger("delete", "DELETE", afterDelete)]
    }

    private func trigger(_ name: String, _ event: String, _ body: [String]) -> String {
        "CREATE TRIGGER \(SQLiteSyntax.quote(table.name + "_search_after_" + name)) AFTER \(event) ON \(t) BEGIN\n"
            + body.map { "  " + $0 + "\n" }.joined() + "END"
    }
}
