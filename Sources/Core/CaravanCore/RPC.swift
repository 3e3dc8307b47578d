/// One parameter of an RPC function.
public struct RPCParameter: Sendable, Hashable {
    public let name: String
    public let type: ColumnType
    /// The value when the caller omits the argument; nil makes the argument required.
    public let defaultValue: Value?

    public init(_ name: String, _ type: ColumnType, default defaultValue: Value? = nil) {
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
    }
}

/// What an RPC returns, as PostgREST shapes it.
public enum RPCResult: Sendable {
    /// A scalar: bare JSON (`42`).
    case scalar(Value)
    /// `setof <table>`: the rows of `table` matching `filter`; the request's filters, order, limit, count and
    /// `single()` then apply, and so does the caller's select policy.
    case rows(of: TableSchema, where: BoundPredicate)
    /// A set of rows computed by the function (`returns table(...)`): the request's filters, order, limit, count and
    /// `single()` apply to them in memory.
    case table(columns: [Column], rows: [[Value]])
    /// `void`: 204.
    case void
}

/// The arguments of a call, typed and validated against the parameters.
public struct RPCArguments: Sendable {
    public let values: [String: Value]

    public init(_ values: [String: Value]) { self.values = values }

    public subscript(name: String) -> Value { values[name] ?? .null }

    /// The text of argument `name`, or nil when NULL.
    public func text(_ name: String) -> String? {
        if case .text(let text) = self[name] { return text }
        return nil
    }
}

/// A Swift function exposed at `/rest/v1/rpc/<name>`. It runs inside one transaction of the write pipeline, as the
/// caller, so policies and the change log apply to everything it does. Its body is async (the storage port is), but
/// it holds the transaction — SQLite's only writer, a PostgreSQL connection — for as long as it runs: a function
/// that waits on anything outside the database is an `AsyncRPCFunction`.
public struct RPCFunction: Sendable {
    public let name: String
    public let parameters: [RPCParameter]
    /// Read-only functions may also be called with GET (and HEAD).
    public let isReadOnly: Bool
    public let body: @Sendable (RPCArguments, any StoreTransaction) async throws -> RPCResult

    public init(_ name: String, parameters: [RPCParameter], readOnly: Bool,
                body: @escaping @Sendable (RPCArguments, any StoreTransaction) async throws -> RPCResult) {
        self.name = name
        self.parameters = parameters
        self.isReadOnly = readOnly
        self.body = body
    }

    /// Types `given` against the parameters: unknown or missing arguments are PGRST202, bad values 22P02.
    public func bind(_ given: [String: JSONValue]) throws(CaravanError) -> RPCArguments {
        let known = Set(parameters.map(\.name))
        let unknown = given.keys.filter { !known.contains($0) }.sorted()
        var values: [String: Value] = [:]
        var missing: [String] = []
        for parameter in parameters {
            if let json = given[parameter.name] {
                do {
                    values[parameter.name] = try parameter.type.value(fromJSON: json)
                } catch {
                    throw CaravanError(.invalidValue, "\(error.message) (argument \(parameter.name) of \(name))")
                }
            } else if let fallback = parameter.defaultValue {
                values[parameter.name] = fallback
            } else {
                missing.append(parameter.name)
            }
        }
        if !unknown.isEmpty || !missing.isEmpty {
            let signature = given.keys.sorted().joined(separator: ", ")
            throw CaravanError(
                .unknownFunction,
                "Could not find the function public.\(name)(\(signature)) in the schema cache",
                hint: "Its parameters are (\(parameters.map(\.name).joined(separator: ", ")))"
            )
        }
        return RPCArguments(values)
    }
}

/// What an `AsyncRPCFunction` runs with: the caller, and the pipeline and catalog to open its own transactions.
public struct AsyncRPCContext: Sendable {
    public let identity: Identity
    public let pipeline: WritePipeline
    public let catalog: Catalog
    /// The user's stored files for `export_my_data` (nil when the server serves no storage).
    public let exportFiles: (any UserExportFiles)?

    public init(identity: Identity, pipeline: WritePipeline, catalog: Catalog, exportFiles: (any UserExportFiles)? = nil) {
        self.identity = identity
        self.pipeline = pipeline
        self.catalog = catalog
        self.exportFiles = exportFiles
    }
}

/// A Swift function at `/rest/v1/rpc/<name>` (POST) that must wait on something outside the database, such as a
/// translation provider: it runs outside any transaction and opens its own short ones through the context, so no
/// transaction (or write lock) is held across the wait. It answers a scalar or nothing.
public struct AsyncRPCFunction: Sendable {
    public let name: String
    public let parameters: [RPCParameter]
    /// Whether the function only reads (PostgreSQL's STABLE): then it may also be called with GET.
    public let isReadOnly: Bool
    public let body: @Sendable (RPCArguments, AsyncRPCContext) async throws -> RPCResult

    public init(_ name: String, parameters: [RPCParameter], readOnly: Bool = false,
                body: @escaping @Sendable (RPCArguments, AsyncRPCContext) async throws -> RPCResult) {
        self.name = name
        self.parameters = parameters
        self.isReadOnly = readOnly
        self.body = body
    }

    /// The signature as an `RPCFunction` (for binding arguments and reading them from a request); its body is never run.
    public var signature: RPCFunction {
        RPCFunction(name, parameters: parameters, readOnly: isReadOnly) { _, _ in
            throw CaravanError(.internalFailure, "an asynchronous function runs outside a transaction")
        }
    }
}
