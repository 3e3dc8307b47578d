import CaravanAuth
import CaravanCore
import CaravanTesting
import CaravanSQLite
import Foundation
import GRDB
import Logging
import NIOPosix
import Places
import Synchronization
import Testing

/// A log handler that keeps every record, for assertions on levels and content.
final class CapturingLogHandler: LogHandler {
    struct Record: Sendable {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
    }

    private let records = Mutex<[Record]>([])
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String, line: UInt) {
        let record = Record(level: level, message: message.description, metadata: self.metadata.merging(metadata ?? [:]) { $1 })
        records.withLock { $0.append(record) }
    }

    var logged: [Record] { records.withLock { $0 } }
}

/// A handler that shares one `CapturingLogHandler`'s records (LogHandler is a value-semantics protocol).
struct SharedCapture: LogHandler {
    let capture: CapturingLogHandler
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String, line: UInt) {
        capture.log(level: level, message: message, metadata: self.metadata.merging(metadata ?? [:]) { $1 }, source: source, file: file,
                    function: function, line: line)
    }
}

@Suite("Auth flow fixes")
struct AuthFlowFixesTests {
    /// Development codes are secrets: the outbox logs them at debug only, never at a level production keeps.
    @Test func outboxLogsCodesAtDebugOnly() async throws {
        let fixture = try await AuthFixture(.sqlite)
        let capture = CapturingLogHandler()
        let logger = Logger(label: "test.outbox") { _ in SharedCapture(capture: capture) }
        let outbox = OutboxSender(pipeline: WritePipeline(store: fixture.store, publisher: fixture.changes), catalog: fixture.catalog,
                                  logger: logger, clock: WallClock { fixture.clock.now })
        try await outbox.send(OutgoingMessage(channel: .email, recipient: "dev@example.com", subject: "Your sign-in code",
                                              body: "Your code is 424242. It expires in 5 minutes."))
        let mentions = capture.logged.filter { record in
            record.message.contains("424242") || record.metadata.values.contains { "\($0)".contains("424242") }
        }
        #expect(!mentions.isEmpty, "the code is still available at debug level")
        #expect(mentions.allSatisfy { $0.level <= .debug }, "levels: \(mentions.map(\.level))")
        #expect(try await fixture.count(AuthSchema.outbox) == 1)
    }

    /// Corrupt JSON in a NOT NULL metadata column fails loudly (a typed `unexpected_failure` naming the column in
    /// its internal detail) instead of reading as `{}`.
    @Test func corruptStoredMetadataThrowsInsteadOfReadingAsEmpty() async throws {
        let directory = NSTemporaryDirectory() + "caravan-auth-corrupt-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let fixture = try await AuthFixture(.sqlite, path: directory + "/caravan.sqlite")
        guard case .session(let session) = try await fixture.auth.signUp(email: "corrupt@example.com", phone: nil, password: "long-enough-1",
                                                                         data: .object([("theme", .string("dark"))]), client: fixture.client) else {
            Issue.record("expected a session"); return
        }
        let identity = try await fixture.identity(session)
        let database = try DatabaseQueue(path: directory + "/caravan.sqlite")
        try await database.write { db in
            try db.execute(sql: "PRAGMA ignore_check_constraints = ON")
            try db.execute(sql: "UPDATE \(SystemModule.users.name) SET user_metadata = '{\"theme\": ' WHERE id = ?", arguments: [session.user.id])
        }
        try database.close()
        do {
            let user = try await fixture.auth.currentUser(identity)
            Issue.record("expected a decoding failure, got metadata \(user.userMetadata)")
        } catch let error as AuthError {
            #expect(error.code == .unexpectedFailure)
            #expect(error.internalDetail?.contains("user_metadata") == true)
            #expect(!error.message.contains("theme"), "the stored value stays out of the message")
        }
    }

    /// The injected clock and id generator are the ones used: token `iat`/`exp` and ids under fixed ones.
    @Test func sessionsUseTheInjectedClockAndIDs() async throws {
        let fixture = try await AuthFixture(.sqlite, ids: .sequential())
        let now = fixture.clock.now / 1_000_000
        guard case .session(let session) = try await fixture.auth.signUp(email: nil, phone: nil, password: nil, data: nil, client: fixture.client) else {
            Issue.record("expected an anonymous session"); return
        }
        #expect(session.expiresAt == now + 3600)
        let claims = try Self.claims(of: session.accessToken)
        #expect(claims["iat"] == .integer(now))
        #expect(claims["exp"] == .integer(now + 3600))
        #expect(claims["session_id"] == .string("00000000-0000-4000-8000-000000000001"))
        #expect(session.user.id == "00000000-0000-4000-8000-000000000002")
        fixture.clock.advance(seconds: 90)
        let refreshed = try await fixture.auth.refresh(session.refreshToken, client: fixture.client)
        #expect(refreshed.expiresAt == now + 90 + 3600)
    }

    /// The payload of a JWT, parsed.
    static func claims(of token: String) throws -> JSONValue {
        let parts = token.split(separator: ".")
        try #require(parts.count == 3)
        var base64 = parts[1].replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        let data = try #require(Data(base64Encoded: base64))
        return try JSONParser.parse(String(decoding: data, as: UTF8.self))
    }
}
