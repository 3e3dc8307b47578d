import CaravanCore
import CaravanSQL
import Logging
import PostgresNIO
import Synchronization

/// Which statement shapes run as named server-side prepared statements: PostgreSQL then parses (and, once it
/// settles on a generic plan, plans) a shape once per connection instead of on every request.
///
/// A shape is the statement's text and the kinds of its bound values (the parameter types PostgreSQL is told when
/// it prepares). Statement texts come only from the serializer, with every value bound, so a shape is one read or
/// write pattern, not one request. Bounded, because prepared statements live in the server for as long as the
/// connection does and nothing evicts them: a shape is admitted the second time it is seen, at most `capacity`
/// shapes ever get a name, and the others keep running as unnamed statements.
final class PreparedStatements: Sendable {
    /// A shape's name, unique in this process (so on each of its connections).
    struct Name: Sendable, Hashable {
        let text: String
    }

    private struct State {
        var names: [String: Name] = [:]
        /// Shapes seen once, not yet admitted (cleared when it fills).
        var candidates: Set<String> = []
        /// Shapes never to prepare again (their preparation failed for a passing reason).
        var refused: Set<String> = []
        var nextNumber = 1
    }

    let capacity: Int
    let candidateCapacity: Int
    private let state = Mutex(State())

    init(capacity: Int = 512, candidateCapacity: Int = 4096) {
        self.capacity = capacity
        self.candidateCapacity = candidateCapacity
    }

    /// The name to run `sql` under, or nil to run it unnamed (first sighting, refused, or no room left).
    func name(for sql: String, bindings: [Value]) -> Name? {
        let shape = Self.shape(sql, bindings)
        return state.withLock { state in
            if let name = state.names[shape] { return name }
            guard state.names.count < capacity, !state.refused.contains(shape) else { return nil }
            guard state.candidates.contains(shape) else {
                if state.candidates.count >= candidateCapacity { state.candidates.removeAll(keepingCapacity: true) }
                state.candidates.insert(shape)
                return nil
            }
            state.candidates.remove(shape)
            let name = Name(text: "caravan_\(state.nextNumber)")
            state.nextNumber += 1
            state.names[shape] = name
            return name
        }
    }

    /// Stops preparing `sql`: a connection that failed to prepare it keeps that failure for the name, so a failure
    /// that might pass (a lock or statement timeout, a dropped table being recreated, an aborted transaction)
    /// must not stick to the shape. It runs unnamed from now on.
    func refuse(_ sql: String, bindings: [Value]) {
        let shape = Self.shape(sql, bindings)
        state.withLock { state in
            state.names[shape] = nil
            state.refused.insert(shape)
        }
    }

    var count: Int { state.withLock { $0.names.count } }

    private static func shape(_ sql: String, _ bindings: [Value]) -> String {
        var shape = sql
        shape.append("\u{0}")
        for value in bindings {
            let kind: Character = switch value {
            case .null: "n"
            case .bool: "b"
            case .integer: "i"
            case .double: "d"
            case .text, .json: "t"
            }
            shape.append(kind)
        }
        return shape
    }

    /// Whether a failed statement's error may have come from a preparation that could succeed later: an aborted
    /// transaction, a conflict or lock timeout, a cancelled statement, a missing resource, a table not there yet.
    /// Data, constraint and privilege errors come from executing; syntax errors would fail the same way every
    /// time; a lost connection takes its prepared statements with it.
    static func mayPassLater(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, error.code == .server, let state = error.serverInfo?[.sqlState] else { return false }
        return state == "42P01" || ["25", "40", "53", "55", "57", "58", "XX"].contains { state.hasPrefix($0) }
    }
}

/// A statement run under a name from `PreparedStatements`. postgres-nio keeps, per connection, which names it has
/// prepared (and prepares on first use); its API takes the name and text from the statement's type, so this type
/// reads them from a task-local set around each execution.
struct NamedStatement: PostgresPreparedStatement {
    typealias Row = PostgresRow

    struct Shape: Sendable {
        let name: String
        let sql: String
    }

    @TaskLocal static var current = Shape(name: "", sql: "")

    static var name: String { current.name }
    static var sql: String { current.sql }

    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }

    /// Runs `sql` as the prepared statement `name` (from `statements`) on `connection` and hands each row to
    /// `row`. A failure that may have come from a preparation that can pass later retires the shape's name.
    static func run(_ sql: PostgresSQL, named name: PreparedStatements.Name, of statements: PreparedStatements, on connection: PostgresConnection,
                    logger: Logger, row: (PostgresRow) throws -> Void) async throws {
        let query = sql.query
        do {
            try await $current.withValue(Shape(name: name.text, sql: query.sql)) {
                for try await next in try await connection.execute(NamedStatement(bindings: query.binds), logger: logger) {
                    try row(next)
                }
            }
        } catch {
            if PreparedStatements.mayPassLater(error) { statements.refuse(sql.text, bindings: sql.bindings) }
            throw error
        }
    }
}
