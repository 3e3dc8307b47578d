public import CaravanCore
public import Testing
import Foundation

/// What an app module's tests share: a migrated store, the catalog and the write pipeline, with helpers to act as
/// the service role or a signed-in user, call the module's RPCs and read tables back. A module's fixture declares
/// the three properties and gets the rest.
public protocol ModuleFixture: Sendable {
    var store: any Store { get }
    var catalog: Catalog { get }
    var pipeline: WritePipeline { get }
}

extension ModuleFixture {
    /// The test users' ids: `uuid(7)` is `00000000-0000-4000-8000-000000000007`.
    public static func uuid(_ n: Int) -> String { String(format: "00000000-0000-4000-8000-%012d", n) }

    public func asService<T: Sendable>(_ body: @escaping @Sendable (any StoreTransaction) async throws -> T) async throws -> T {
        try await pipeline.run(catalog.access(for: .serviceRole), body)
    }

    public func asUser<T: Sendable>(_ id: String, _ body: @escaping @Sendable (any StoreTransaction) async throws -> T) async throws -> T {
        try await pipeline.run(catalog.access(for: Identity(role: .authenticated, userID: id)), body)
    }

    /// Calls the module's RPC `name` as `user` (nil: the service role); an asynchronous function runs outside a
    /// transaction, as the server runs it.
    public func call(_ name: String, as user: String?, _ arguments: [String: JSONValue]) async throws -> RPCResult {
        if let function = catalog.asyncFunction(named: name) {
            let identity = user.map { Identity(role: .authenticated, userID: $0) } ?? .serviceRole
            return try await function.body(try function.signature.bind(arguments), AsyncRPCContext(identity: identity, pipeline: pipeline, catalog: catalog))
        }
        let function = try catalog.requireFunction(name)
        let bound = try function.bind(arguments)
        let identity = user.map { Identity(role: .authenticated, userID: $0) } ?? .serviceRole
        return try await pipeline.run(catalog.access(for: identity)) { tx in try await function.body(bound, tx) }
    }

    /// Invokes the module's edge function `name` as `user` (nil: anon) with a JSON body, as `POST
    /// /functions/v1/<name>` would.
    public func invoke(_ name: String, as user: String?, body: JSONValue? = nil) async throws -> FunctionResponse {
        guard let function = catalog.edgeFunction(named: name) else {
            throw CaravanError(.unknownFunction, "no edge function \(name)")
        }
        let identity = user.map { Identity(role: .authenticated, userID: $0) } ?? Identity(role: .anon)
        let request = FunctionRequest(method: "POST", subpath: "", query: [], headers: [("content-type", "application/json")],
                                      body: body.map { Array($0.jsonText.utf8) } ?? [])
        return try await function.handler(request, FunctionContext(identity: identity, pipeline: pipeline, catalog: catalog))
    }

    /// Every row of `table` (service role) as dictionaries.
    public func rows(_ table: TableSchema, where filter: BoundPredicate = .constant(true)) async throws -> [[String: Value]] {
        let result = try await store.fetch(try ReadPlan(table: table, query: Query(), access: filter, maxRows: nil, includeCount: false))
        return result.rows.map { Dictionary(uniqueKeysWithValues: zip(result.outputs.map(\.name), $0)) }
    }
}

/// Expects `body` to fail with `code`, its message, details or hint mentioning `field`.
public func expectFailure(_ code: CaravanError.Code, naming field: String, sourceLocation: SourceLocation = #_sourceLocation,
                          _ body: () async throws -> Void) async {
    do {
        try await body()
        Issue.record("expected \(code) naming \(field), but it succeeded", sourceLocation: sourceLocation)
    } catch let error as CaravanError {
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        let text = error.message + " " + (error.details ?? "") + " " + (error.hint ?? "")
        #expect(text.contains(field), "\(error) details \(error.details ?? "-")", sourceLocation: sourceLocation)
    } catch {
        Issue.record("expected CaravanError \(code), got \(error)", sourceLocation: sourceLocation)
    }
}

/// What a write attempted in a policy matrix did: the rows it touched, or the code it was refused with.
public enum Outcome: Equatable, Sendable, CustomStringConvertible {
    case rows(Int)
    case refused(CaravanError.Code)

    public var description: String {
        switch self {
        case .rows(let n): "\(n) row(s)"
        case .refused(let code): "refused \(code)"
        }
    }
}

extension ModuleFixture {
    /// How many rows of `table` `identity` reads under its select policy.
    public func visibleCount(of table: TableSchema, as identity: Identity) async throws -> Int {
        let rule = try catalog.access(for: identity).readRule(table)
        return try await store.fetch(try ReadPlan(table: table, query: Query(), access: rule, maxRows: nil, includeCount: false)).rows.count
    }

    /// Runs `body` as `identity` in a transaction rolled back afterwards: what it touched, or how it was refused.
    public func attempt(as identity: Identity, _ body: @escaping @Sendable (any StoreTransaction) async throws -> WriteOutcome) async -> Outcome {
        do {
            let outcome = try await pipeline.run(catalog.access(for: identity), rollback: true, body)
            return .rows(outcome.inserted + outcome.updated + outcome.deleted)
        } catch let error as CaravanError {
            return .refused(error.code)
        } catch {
            return .refused(.internalFailure)
        }
    }
}
