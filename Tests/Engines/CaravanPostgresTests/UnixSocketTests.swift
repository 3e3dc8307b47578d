import CaravanCore
import CaravanPostgres
import Foundation
import Logging
import Testing

/// `postgres://user@/database?host=/socket/directory`: the store (its pool and its LISTEN connection) reaches
/// PostgreSQL through the Unix-domain socket, as libpq does.
@Suite("PostgreSQL over a Unix-domain socket")
struct UnixSocketTests {
    @Test func aHostParameterStartingWithASlashNamesTheSocketDirectory() throws {
        let configuration = try PostgresStoreConfiguration(url: "postgres://caravan:secret@/app?host=/var/run/postgresql&sslmode=disable")
        #expect(configuration.host == "/var/run/postgresql")
        #expect(configuration.usesUnixSocket)
        #expect(configuration.port == 5432)
        #expect(configuration.database == "app")
        #expect(configuration.username == "caravan")

        let tcp = try PostgresStoreConfiguration(url: "postgres://caravan@db.internal:6543/app")
        #expect(tcp.host == "db.internal")
        #expect(!tcp.usesUnixSocket)

        let relative = #expect(throws: CaravanError.self) { try PostgresStoreConfiguration(url: "postgres://caravan@/app?host=run/postgresql") }
        #expect(relative?.code == .invalidValue)
        let hostless = #expect(throws: CaravanError.self) { try PostgresStoreConfiguration(url: "postgres://caravan@/app") }
        #expect(hostless?.code == .invalidValue)
    }

    /// The test cluster's own socket directory: a store there writes, reads and hears the change log's
    /// announcements like the TCP one, and the server sees a socket connection (no server address).
    @Test func aStoreOnTheSocketWritesReadsAndListens() async throws {
        let tcp = try await makeNotesStore()
        let directories = try await tcp.unsafeRows("SHOW unix_socket_directories")
        let directory = try #require(directories.first?.first??.split(separator: ",").first.map { String($0).trimmingCharacters(in: .whitespaces) })
        var configuration = tcp.configuration
        configuration.host = directory
        #expect(configuration.usesUnixSocket)
        let socket = PostgresStore(configuration: configuration)
        await socket.start()

        #expect(try await socket.unsafeRows("SELECT (inet_server_addr() IS NULL)::text") == [["true"]])
        #expect(try await tcp.unsafeRows("SELECT (inet_server_addr() IS NULL)::text") == [["false"]])

        let instance = ListeningInstance(on: socket, after: try await socket.latestChangeSeq(), pollInterval: .seconds(600))
        #expect(await instance.listening())

        try await socket.insertNotes([note(1)])
        try await tcp.insertNotes([note(2)])
        #expect(try await tcp.unsafeRows(#"SELECT "body" FROM "notes" ORDER BY "id""#) == [["note 1"], ["note 2"]])
        // Its own write by the in-process wake-up, the TCP store's by NOTIFY through the socket connection.
        #expect(await eventually(within: .seconds(30)) { instance.received.changes.count == 2 })
        #expect(instance.received.changes.map(\.primaryKey) == [#"{"id":1}"#, #"{"id":2}"#])

        await instance.stop()
        await socket.shutdown()
        await tcp.shutdown()
    }
}
