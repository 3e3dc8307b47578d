import CaravanCore

/// PostgREST's OpenAPI description (Swagger 2.0) of `/rest/v1`, served at its root: the tables the caller may use,
/// with their columns (types, formats, keys, foreign keys, which are required on insert), the operations on them and
/// their parameters, and the RPC functions with their arguments. API explorers and client generators read it.
enum RESTOpenAPI {
    /// The operations' shared parameters, named as PostgREST names them.
    static let sharedParameters: [(String, JSONValue)] = [
        ("preferParams", header("Prefer", "Preference", values: ["params=single-object"])),
        ("preferReturn", header("Prefer", "Preference", values: ["return=representation", "return=minimal", "return=none"])),
        ("preferCount", header("Prefer", "Preference", values: ["count=none"])),
        ("preferPost", header("Prefer", "Preference", values: ["return=representation", "return=minimal", "return=none",
                                                                "resolution=ignore-duplicates", "resolution=merge-duplicates"])),
        ("select", query("select", "Filtering Columns")),
        ("on_conflict", query("on_conflict", "On Conflict")),
        ("order", query("order", "Ordering")),
        ("range", .object([("name", .string("Range")), ("description", .string("Limiting and Pagination")), ("required", .bool(false)),
                           ("in", .string("header")), ("type", .string("string"))])),
        ("rangeUnit", .object([("name", .string("Range-Unit")), ("description", .string("Limiting and Pagination")), ("required", .bool(false)),
                               ("in", .string("header")), ("type", .string("string")), ("default", .string("items"))])),
        ("offset", query("offset", "Limiting and Pagination")),
        ("limit", query("limit", "Limiting and Pagination")),
    ]

    static let mediaTypes: JSONValue = .array(["application/json", "application/vnd.pgrst.object+json;nulls=stripped",
                                               "application/vnd.pgrst.object+json", "text/csv"].map { .string($0) })

    /// The description for `identity`: the tables it has a policy on (every table for the service role) and every
    /// function (each checks its caller itself).
    static func document(_ catalog: Catalog, for identity: Identity, host: String?) throws(CaravanError) -> JSONValue {
        var tables: [TableSchema] = []
        for table in catalog.exposedTables.sorted(by: { $0.name < $1.name }) where try usable(table, by: identity, in: catalog) { tables.append(table) }
        var paths: [(String, JSONValue)] = [("/", .object([("get", .object([
            ("produces", .array([.string("application/openapi+json"), .string("application/json")])),
            ("responses", .object([("200", .object([("description", .string("OK"))]))])),
            ("summary", .string("OpenAPI description (this document)")),
            ("tags", .array([.string("Introspection")])),
        ]))]))]
        var parameters = sharedParameters
        var definitions: [(String, JSONValue)] = []
        for table in tables {
            paths.append(("/\(table.name)", tablePath(table)))
            definitions.append((table.name, try definition(table)))
            parameters.append(("body.\(table.name)", .object([
                ("name", .string(table.name)), ("description", .string(table.name)), ("required", .bool(false)), ("in", .string("body")),
                ("schema", .object([("$ref", .string("#/definitions/\(table.name)"))])),
            ])))
            for column in table.columns {
                parameters.append(("rowFilter.\(table.name).\(column.name)", .object([
                    ("name", .string(column.name)), ("required", .bool(false)), ("format", .string(format(column.type))),
                    ("in", .string("query")), ("type", .string("string")),
                ])))
            }
        }
        let functions = (catalog.modules.flatMap(\.functions) + catalog.modules.flatMap(\.asyncFunctions).map(\.signature)).sorted { $0.name < $1.name }
        for function in functions { paths.append(("/rpc/\(function.name)", functionPath(function))) }
        var document: [(String, JSONValue)] = [
            ("swagger", .string("2.0")),
            ("info", .object([("title", .string("Caravan REST API")), ("description", .string("PostgREST-compatible API of this deployment")),
                              ("version", .string("12"))])),
        ]
        if let host { document.append(("host", .string(host))) }
        document += [
            ("basePath", .string("/rest/v1")),
            ("schemes", .array([.string("http"), .string("https")])),
            ("consumes", mediaTypes),
            ("produces", mediaTypes),
            ("paths", .object(paths)),
            ("definitions", .object(definitions)),
            ("parameters", .object(parameters)),
            ("externalDocs", .object([("description", .string("PostgREST Documentation")),
                                      ("url", .string("https://postgrest.org/en/v12/references/api.html"))])),
        ]
        return .object(document)
    }

    /// Whether any command of `table` is open to `identity` at all (the service role passes every policy).
    static func usable(_ table: TableSchema, by identity: Identity, in catalog: Catalog) throws(CaravanError) -> Bool {
        if identity.role == .serviceRole { return true }
        for command in [PolicyCommand.select, .insert, .update, .delete] {
            if try catalog.policies.rule(command, on: table, for: identity, catalog: catalog) != .constant(false) { return true }
        }
        return false
    }

    static func tablePath(_ table: TableSchema) -> JSONValue {
        let filters = table.columns.map { ref("parameters", "rowFilter.\(table.name).\($0.name)") }
        let tags: JSONValue = .array([.string(table.name)])
        let body = ref("parameters", "body.\(table.name)")
        func answer(_ status: String, _ description: String, schema: JSONValue? = nil) -> JSONValue {
            .object([(status, .object([("description", .string(description))] + (schema.map { [("schema", $0)] } ?? [])))])
        }
        return .object([
            ("get", .object([
                ("parameters", .array(filters + ["select", "order", "range", "rangeUnit", "offset", "limit", "preferCount"].map { ref("parameters", $0) })),
                ("responses", .object([
                    ("200", .object([("description", .string("OK")),
                                     ("schema", .object([("items", ref("definitions", table.name)), ("type", .string("array"))]))])),
                    ("206", .object([("description", .string("Partial Content"))])),
                ])),
                ("tags", tags),
            ])),
            ("post", .object([("parameters", .array([body, ref("parameters", "select"), ref("parameters", "preferPost")])),
                              ("responses", answer("201", "Created")), ("tags", tags)])),
            ("delete", .object([("parameters", .array(filters + [ref("parameters", "preferReturn")])),
                                ("responses", answer("204", "No Content")), ("tags", tags)])),
            ("patch", .object([("parameters", .array(filters + [body, ref("parameters", "preferReturn")])),
                               ("responses", answer("204", "No Content")), ("tags", tags)])),
        ])
    }

    /// A table's columns as a schema object. Required: NOT NULL without a default (what an insert must send).
    static func definition(_ table: TableSchema) throws(CaravanError) -> JSONValue {
        var properties: [(String, JSONValue)] = []
        for column in table.columns {
            var notes: [String] = []
            if table.primaryKey.contains(column.name) { notes.append("This is a Primary Key.<pk/>") }
            for key in table.foreignKeys {
                guard let index = key.columns.firstIndex(of: column.name) else { continue }
                let target = key.referencedColumns[index]
                notes.append("This is a Foreign Key to `\(key.referencedTable).\(target)`.<fk table='\(key.referencedTable)' column='\(target)'/>")
            }
            var property = schema(column.type)
            if !notes.isEmpty { property.insert(("description", .string("Note:\n" + notes.joined(separator: "\n"))), at: 0) }
            if case .value(let value)? = column.defaultValue { property.append(("default", try json(value))) }
            properties.append((column.name, .object(property)))
        }
        let required = table.columns.filter { !$0.isNullable && $0.defaultValue == nil }.map { JSONValue.string($0.name) }
        return .object([("required", .array(required)), ("properties", .object(properties)), ("type", .string("object"))])
    }

    static func functionPath(_ function: RPCFunction) -> JSONValue {
        let tags: JSONValue = .array([.string("(rpc) \(function.name)")])
        let required = function.parameters.filter { $0.defaultValue == nil }.map { JSONValue.string($0.name) }
        let arguments: JSONValue = .object([
            ("required", .array(required)),
            ("properties", .object(function.parameters.map { ($0.name, .object(schema($0.type))) })),
            ("type", .string("object")),
        ])
        let responses: JSONValue = .object([("200", .object([("description", .string("OK"))]))])
        var operations: [(String, JSONValue)] = [("post", .object([
            ("parameters", .array([.object([("required", .bool(true)), ("schema", arguments), ("in", .string("body")), ("name", .string("args"))]),
                                   ref("parameters", "preferParams")])),
            ("produces", .array([.string("application/json"), .string("application/vnd.pgrst.object+json")])),
            ("responses", responses), ("tags", tags),
        ]))]
        if function.isReadOnly {
            let query = function.parameters.map { parameter -> JSONValue in
                .object([("name", .string(parameter.name)), ("required", .bool(parameter.defaultValue == nil)), ("in", .string("query"))]
                        + schema(parameter.type))
            }
            operations.insert(("get", .object([("parameters", .array(query)), ("responses", responses), ("tags", tags)])), at: 0)
        }
        return .object(operations)
    }

    /// A value's JSON schema: its JSON type and PostgreSQL's name for the column type as `format`.
    static func schema(_ type: ColumnType) -> [(String, JSONValue)] {
        let format: (String, JSONValue) = ("format", .string(format(type)))
        switch type {
        case .integer: return [format, ("type", .string("integer"))]
        case .double, .decimal: return [format, ("type", .string("number"))]
        case .boolean: return [format, ("type", .string("boolean"))]
        case .json: return [format]
        case .textArray: return [format, ("items", .object([("type", .string("string"))])), ("type", .string("array"))]
        case .text, .uuid, .timestamp, .date: return [format, ("type", .string("string"))]
        }
    }

    /// PostgreSQL's name of a column type, as PostgREST writes it in `format`.
    static func format(_ type: ColumnType) -> String {
        switch type {
        case .text: "text"
        case .integer: "bigint"
        case .double: "double precision"
        case .decimal(let precision, let scale): "numeric(\(precision),\(scale))"
        case .boolean: "boolean"
        case .uuid: "uuid"
        case .timestamp: "timestamp with time zone"
        case .date: "date"
        case .json: "jsonb"
        case .textArray: "text[]"
        }
    }

    /// A stored value as JSON (JSON text parsed, every other value its scalar).
    static func json(_ value: Value) throws(CaravanError) -> JSONValue {
        var writer = JSONWriter()
        writer.write(value)
        return try JSONParser.parse(bytes: writer.bytes)
    }

    static func ref(_ section: String, _ name: String) -> JSONValue {
        .object([("$ref", .string("#/\(section)/\(name)"))])
    }

    static func query(_ name: String, _ description: String) -> JSONValue {
        .object([("name", .string(name)), ("description", .string(description)), ("required", .bool(false)), ("in", .string("query")),
                 ("type", .string("string"))])
    }

    static func header(_ name: String, _ description: String, values: [String]) -> JSONValue {
        .object([("name", .string(name)), ("description", .string(description)), ("required", .bool(false)), ("in", .string("header")),
                 ("type", .string("string")), ("enum", .array(values.map { .string($0) }))])
    }
}
