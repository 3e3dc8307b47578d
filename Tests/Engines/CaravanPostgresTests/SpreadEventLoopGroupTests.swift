@testable import CaravanPostgres
import NIOCore
import NIOPosix
import Testing

/// The pool opens its connections from its own task; `any()` of an ordinary group answers the loop it is called
/// on, which put every connection (and all the work after each answer) on one loop. Through `SpreadEventLoopGroup`
/// the same calls are spread over every loop.
@Suite("Spreading the pool's connections over the event loops")
struct SpreadEventLoopGroupTests {
    @Test func anyFromInsideALoopHandsOutEveryLoopInTurn() async throws {
        let base = MultiThreadedEventLoopGroup(numberOfThreads: 3)
        let spread = SpreadEventLoopGroup(base)
        let loop = base.next()
        let (plain, spreadOut) = try await loop.submit { () -> (Set<ObjectIdentifier>, Set<ObjectIdentifier>) in
            let plain = Set((0..<6).map { _ in ObjectIdentifier(base.any()) })
            let spreadOut = Set((0..<6).map { _ in ObjectIdentifier(spread.any()) })
            return (plain, spreadOut)
        }.get()
        #expect(plain == [ObjectIdentifier(loop)])
        #expect(spreadOut.count == 3)
        try await base.shutdownGracefully()
    }

    @Test func aWarmPoolOpensItsConnectionsAtStart() async throws {
        let probe = try await makeNotesStore(connections: 1)
        var configuration = probe.configuration
        configuration.maximumConnections = 3
        configuration.minimumConnections = 3
        let store = PostgresStore(configuration: configuration)
        await store.start()
        let database = configuration.database
        let opened = try await eventually(within: .seconds(10)) {
            let rows = try await probe.unsafeRows("SELECT count(*)::text FROM pg_stat_activity WHERE datname = '\(database)' AND backend_type = 'client backend'")
            return rows.first?.first == "4"  // the warm pool's three and the probe's one
        }
        #expect(opened)
        await store.shutdown()
        await probe.shutdown()
    }
}
