import CaravanCore
import CaravanSQL

/// The SQLite objects of a table's declared search (`SQLiteSearchNames`), rendered for a migration: created, filled
/// from the table's rows, and kept in step by AFTER INSERT / UPDATE / DELETE triggers. `places-0002-search` was
/// written by hand before search could be declared; `SQLiteSearchSchemaTests` checks that the declaration of
/// `places` renders to that file byte for byte.
enum SQLiteSearchSchema {
    static func statements(_ table: TableSchema, _ indexes: SearchIndexes) -> [String] {
        let names = SQLiteSearchNames(table: table.name)
        let t = SQLiteSyntax.quote(table.name)
        let key = SQLiteSyntax.quote(table.primaryKey[0])
        let keys = SQLiteSyntax.quote(names.keys)
        let fts = SQLiteSyntax.quote(names.fullText)
        let fuzzy = SQLiteSyntax.quote(names.fuzzy)
        let geo = SQLiteSyntax.quote(names.geo)
        let columns = indexes.fullTextColumns.map(SQLiteSyntax.quote)
        let columnList = columns.joined(separator: ", ")
        let ftsInsert = "INSERT INTO \(fts) (rowid, \(columnList))"
        let geoInsert = "INSERT INTO \(geo) (\"id\", \"min_lat\", \"max_lat\", \"min_lng\", \"max_lng\", \"lat\", \"lng\")"
        let stableID = "(SELECT \"search_rowid\" FROM \(keys) WHERE \"caravan_key\" = NEW.\(key))"
        let oldStableID = "(SELECT \"search_rowid\" FROM \(keys) WHERE \"caravan_key\" = OLD.\(key))"

        /// The folded text of the fuzzy columns of row `row` (`p` or `NEW`).
        func fuzzyText(_ row: String) -> String {
            "caravan_fold(" + indexes.fuzzy.map { "COALESCE(\(row).\(SQLiteSyntax.quote($0)), '')" }.joined(separator: " || ' ' || ") + ")"
        }
        /// The R*Tree values of row `row`: the point as a zero-size box, and the exact coordinates.
        func geoValues(_ row: String, _ geo: SearchIndexes.GeoColumns) -> String {
            let lat = "\(row).\(SQLiteSyntax.quote(geo.latitude))", lng = "\(row).\(SQLiteSyntax.quote(geo.longitude))"
            return "\(lat), \(lat), \(lng), \(lng), \(lat), \(lng)"
        }
        func hasPoint(_ row: String, _ geo: SearchIndexes.GeoColumns) -> String {
            "\(row).\(SQLiteSyntax.quote(geo.latitude)) IS NOT NULL AND \(row).\(SQLiteSyntax.quote(geo.longitude)) IS NOT NULL"
        }

        var statements = [
            "CREATE TABLE \(keys) (\n  \"search_rowid\" INTEGER PRIMARY KEY,\n  \"caravan_key\" TEXT NOT NULL UNIQUE\n)",
            "CREATE VIRTUAL TABLE \(fts) USING fts5(\n  \(columnList),\n  tokenize = 'caravan_fold stem'\n)",
        ]
        if !indexes.fuzzy.isEmpty {
            statements.append("CREATE VIRTUAL TABLE \(fuzzy) USING fts5(\"text\", tokenize = 'trigram')")
            statements.append("CREATE VIRTUAL TABLE \(SQLiteSyntax.quote(names.fuzzyVocabulary)) USING fts5vocab(\(fuzzy), 'row')")
        }
        if indexes.geo != nil {
            statements.append("CREATE VIRTUAL TABLE \(geo) USING rtree(\"id\", \"min_lat\", \"max_lat\", \"min_lng\", \"max_lng\", +\"lat\", +\"lng\")")
        }

        // Fill from the rows the table has.
        let joined = "FROM \(t) AS p JOIN \(keys) AS k ON k.\"caravan_key\" = p.\(key)"
        statements.append("INSERT INTO \(keys) (\"caravan_key\") SELECT \(key) FROM \(t) ORDER BY \(key)")
        statements.append("\(ftsInsert)\n  SELECT k.\"search_rowid\", \(columns.map { "p." + $0 }.joined(separator: ", "))\n  \(joined)")
        if !indexes.fuzzy.isEmpty {
            statements.append("INSERT INTO \(fuzzy) (rowid, \"text\")\n  SELECT k.\"search_rowid\", \(fuzzyText("p"))\n  \(joined)")
        }
        if let point = indexes.geo {
            statements.append("\(geoInsert)\n  SELECT k.\"search_rowid\", \(geoValues("p", point))\n  \(joined)\n  WHERE \(hasPoint("p", point))")
        }

        // Keep them in step.
        let newKey = "FROM \(keys) AS k WHERE k.\"caravan_key\" = NEW.\(key)"
        var afterInsert = [
            "INSERT INTO \(keys) (\"caravan_key\") VALUES (NEW.\(key));",
            "\(ftsInsert)\n    SELECT k.\"search_rowid\", \(columns.map { "NEW." + $0 }.joined(separator: ", "))\n    \(newKey);",
        ]
        var afterUpdate = [
            "UPDATE \(keys) SET \"caravan_key\" = NEW.\(key) WHERE \"caravan_key\" = OLD.\(key) AND NEW.\(key) IS NOT OLD.\(key);",
            "UPDATE \(fts) SET " + stride(from: 0, to: columns.count, by: 4).map { start in
                columns[start..<min(start + 4, columns.count)].map { "\($0) = NEW.\($0)" }.joined(separator: ", ")
            }.joined(separator: ",\n      ") + "\n    WHERE rowid = \(stableID);",
        ]
        var afterDelete = ["DELETE FROM \(fts) WHERE rowid = \(oldStableID);"]
        if !indexes.fuzzy.isEmpty {
            afterInsert.append("INSERT INTO \(fuzzy) (rowid, \"text\")\n    SELECT k.\"search_rowid\", \(fuzzyText("NEW"))\n    \(newKey);")
            afterUpdate.append("UPDATE \(fuzzy) SET \"text\" = \(fuzzyText("NEW"))\n    WHERE rowid = \(stableID);")
            afterDelete.append("DELETE FROM \(fuzzy) WHERE rowid = \(oldStableID);")
        }
        if let point = indexes.geo {
            let insertPoint = "\(geoInsert)\n    SELECT k.\"search_rowid\", \(geoValues("NEW", point))\n    \(newKey) AND \(hasPoint("NEW", point));"
            afterInsert.append(insertPoint)
            afterUpdate.append("DELETE FROM \(geo) WHERE \"id\" = \(stableID);")
            afterUpdate.append(insertPoint)
            afterDelete.append("DELETE FROM \(geo) WHERE \"id\" = \(oldStableID);")
        }
        afterDelete.append("DELETE FROM \(keys) WHERE \"caravan_key\" = OLD.\(key);")

        var watched = [table.primaryKey[0]] + indexes.fullTextColumns
        for column in indexes.fuzzy + [indexes.geo?.latitude, indexes.geo?.longitude].compactMap({ $0 }) where !watched.contains(column) {
            watched.append(column)
        }
        func trigger(_ name: String, _ event: String, _ body: [String]) -> String {
            "CREATE TRIGGER \(SQLiteSyntax.quote(table.name + "_search_after_" + name)) AFTER \(event) ON \(t) BEGIN\n"
                + body.map { "  " + $0 + "\n" }.joined() + "END"
        }
        statements.append(trigger("insert", "INSERT", afterInsert))
        statements.append(trigger("update", "UPDATE OF " + watched.map(SQLiteSyntax.quote).joined(separator: ", "), afterUpdate))
        statements.append(trigger("delete", "DELETE", afterDelete))
        return statements
    }
}
