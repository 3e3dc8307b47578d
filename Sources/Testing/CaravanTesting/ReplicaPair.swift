import CaravanCore
import CaravanPostgres
import Foundation

/// A private primary (`scripts/postgres-cluster start`) and its streaming standby (`scripts/postgres-cluster
/// standby`: `pg_basebackup -R`), each with a state directory of its own, deleted afterwards. Skipped (or failed,
/// under `CARAVAN_REQUIRE_POSTGRES=1`) without PostgreSQL.
package struct ReplicaPair: Sendable {
    let primaryState: String
    let standbyState: String
    let primaryBase: String
    let standbyBase: String

    package static func with(_ body: (ReplicaPair) async throws -> Void) async throws {
        guard Engine.postgresURL != nil else { try Engine.skipWithoutPostgres("read replica test") }
        let id = UUID().uuidString.prefix(8).lowercased()
        let primaryState = NSTemporaryDirectory() + "caravan-pg-primary-" + id
        let standbyState = NSTemporaryDirectory() + "caravan-pg-standby-" + id
        do {
            let primary = try await script(["start"], state: primaryState)
            let port = try String(contentsOfFile: primaryState + "/port", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
            let standby = try await script(["standby", port], state: standbyState)
            try await body(ReplicaPair(primaryState: primaryState, standbyState: standbyState, primaryBase: try base(primary), standbyBase: try base(standby)))
        } catch {
            _ = try? await script(["stop"], state: standbyState)
            _ = try? await script(["stop"], state: primaryState)
            throw error
        }
        _ = try await script(["stop"], state: standbyState)
        _ = try await script(["stop"], state: primaryState)
    }

    /// `postgres://…@host:port/` of the script's export line.
    private static func base(_ output: String) throws -> String {
        guard let line = output.split(separator: "\n").last, let range = line.range(of: "CARAVAN_TEST_DATABASE_URL="),
              let end = line.range(of: "/postgres?") else {
            throw CaravanError(.internalFailure, "scripts/postgres-cluster printed no URL", internalDetail: output)
        }
        return String(line[range.upperBound..<end.lowerBound])
    }

    package func primaryURL(_ database: String) -> String { "\(primaryBase)/\(database)?sslmode=disable" }
    package func standbyURL(_ database: String) -> String { "\(standbyBase)/\(database)?sslmode=disable" }

    /// libpq's multi-host URL: the primary, then the standby, keeping the first that takes writes.
    package func bothURL(_ database: String) -> String {
        "\(primaryBase),\(standbyBase.split(separator: "@").last ?? "")/\(database)?sslmode=disable&target_session_attrs=read-write"
    }

    package func primarySQL(_ sql: String) async throws { try await Self.sql(sql, url: primaryURL("postgres")) }
    package func standbySQL(_ sql: String) async throws { try await Self.sql(sql, url: standbyURL("postgres")) }

    private static func sql(_ sql: String, url: String) async throws {
        _ = try await PostgresStore.withRunning(try PostgresStoreConfiguration(url: url)) { try await $0.unsafeRows(sql) }
    }

    /// What the primary has logged so far.
    package func primaryLog() -> String {
        (try? String(contentsOfFile: primaryState + "/server.log", encoding: .utf8)) ?? ""
    }

    /// What the standby has logged so far.
    package func standbyLog() -> String {
        (try? String(contentsOfFile: standbyState + "/server.log", encoding: .utf8)) ?? ""
    }

    package func stopStandby() async throws { _ = try await Self.script(["pause"], state: standbyState) }
    package func startStandbyAgain() async throws { _ = try await Self.script(["resume"], state: standbyState) }
    /// Commits on the primary wait for the standby to have flushed their WAL (returns once the standby is synchronous).
    package func makeSynchronous() async throws { _ = try await Self.script(["synchronous"], state: primaryState) }
    /// Stops the primary at once, as a crash (`pg_ctl stop -m immediate`).
    package func crashPrimary() async throws { _ = try await Self.script(["crash"], state: primaryState) }
    /// Promotes the standby (`pg_ctl promote`; returns once it takes writes).
    package func promoteStandby() async throws { _ = try await Self.script(["promote"], state: standbyState) }

    private static func script(_ arguments: [String], state: String) async throws -> String {
        try await PostgresClusterScript.run(arguments, state: state)
    }
}
