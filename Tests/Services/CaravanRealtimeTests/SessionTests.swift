import CaravanCore
import CaravanRealtime
import Foundation
import Logging
import Synchronization
import Testing

/// Accepts every token as `anon`.
struct AnonAuthenticator: TokenAuthenticator {
    func identity(for token: String) async throws -> Identity { anon }
}

/// Accepts every token as `anon` once the gate opens (a join held in its token check).
final class GatedAuthenticator: TokenAuthenticator {
    let (opened, open) = AsyncStream.makeStream(of: Void.self)

    func identity(for token: String) async throws -> Identity {
        for await _ in opened { break }
        return anon
    }
}

/// A connection as the session sees it: what was written, whether it was closed and asked to read again. A stalled
/// one never completes a write (a client that stopped reading). Closing it ends the session, as a real one does.
final class TestTransport: SocketTransport {
    let session: RealtimeSession
    let stalls: Bool
    let written = Mutex<[String]>([])
    let resumed = Mutex(0)
    let (closes, closed) = AsyncStream.makeStream(of: Void.self)
    let (writes, wrote) = AsyncStream.makeStream(of: Void.self)

    init(_ session: RealtimeSession, stalls: Bool = false) {
        self.session = session
        self.stalls = stalls
        session.start(on: self)
    }

    func write(_ frames: [SocketFrame], completion: @escaping @Sendable (Bool) -> Void) {
        guard !stalls else { return }
        written.withLock { written in
            for case .text(let text) in frames { written.append(text) }
        }
        completion(true)
        wrote.yield()
    }

    func close() {
        session.transportEnded()
        closed.yield()
        closed.finish()
    }

    func resumeReading() { resumed.withLock { $0 += 1 } }

    /// Waits until `count` frames holding `fragment` were written.
    func waitFor(_ count: Int, containing fragment: String) async {
        var iterator = writes.makeAsyncIterator()
        while written.withLock({ $0.filter { $0.contains(fragment) }.count }) < count {
            _ = await iterator.next()
        }
    }
}

@Suite struct SessionTests {
    /// A service on the real monotonic clock, with a short stall timeout and tick.
    func service(authenticator: any TokenAuthenticator = AnonAuthenticator()) -> RealtimeService {
        var limits = RealtimeLimits()
        limits.stallTimeout = .milliseconds(100)
        limits.maxPendingFrames = 1_000
        let start = ContinuousClock.now
        let clock = RealtimeClock(monotonic: {
            let elapsed = ContinuousClock.now - start
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }, epochSeconds: { 1_000 })
        let hub = RealtimeHub(catalog: testCatalog, limits: limits, logger: Logger(label: "test"), now: clock.monotonic)
        return RealtimeService(hub: hub, catalog: testCatalog, limits: limits, authenticator: authenticator, clock: clock,
                               tickInterval: .milliseconds(10), logger: Logger(label: "test"))
    }

    static let join = #"{"topic":"realtime:s","event":"phx_join","ref":"1","payload":{"config":{"postgres_changes":[{"event":"*","schema":"public","table":"places"}]}}}"#

    static func heartbeat(_ ref: Int) -> SocketFrame {
        .text(#"{"topic":"phoenix","event":"heartbeat","ref":"\#(ref)","payload":{}}"#)
    }

    @Test func aSocketThatStopsReadingIsDroppedWhileOthersKeepReceiving() async throws {
        let realtime = service()
        let stalled = TestTransport(try #require(realtime.openSession(version: .v1, apikey: "key")), stalls: true)
        let healthy = TestTransport(try #require(realtime.openSession(version: .v1, apikey: "key")))
        _ = stalled.session.receive(.text(Self.join))
        _ = healthy.session.receive(.text(Self.join))
        while realtime.hub.channelCount < 2 { try await Task.sleep(for: .milliseconds(5)) }
        await realtime.hub.dispatch([change(.insert, table: "places", record: place("before", active: true), old: nil)])
        // The service's ticker finds the stalled socket's writes making no progress, and closes its connection.
        for await _ in stalled.closes {}
        #expect(realtime.hub.channelCount == 1)
        await realtime.hub.dispatch([change(.insert, table: "places", record: place("after", active: true), old: nil)])
        await healthy.waitFor(2, containing: #""event":"postgres_changes""#)
        healthy.close()
        #expect(realtime.hub.metrics.snapshot.sockets == 0)
    }

    @Test func framesAreHandledInOrderAndReadingPausesWhileTooManyWait() async throws {
        let authenticator = GatedAuthenticator()
        let realtime = service(authenticator: authenticator)
        let socket = TestTransport(try #require(realtime.openSession(version: .v1, apikey: "key")))
        // The join waits in its token check: every heartbeat after it waits too, and past the bound the session asks
        // the connection to stop reading.
        #expect(socket.session.receive(.text(Self.join)))
        var answers: [Bool] = []
        for ref in 2...100 { answers.append(socket.session.receive(Self.heartbeat(ref))) }
        #expect(answers.prefix(62).allSatisfy { $0 }, "reading goes on while fewer than 64 frames wait")
        #expect(answers.dropFirst(62).allSatisfy { !$0 }, "and pauses from the 64th")
        #expect(socket.resumed.withLock { $0 } == 0)
        authenticator.open.yield()
        await socket.waitFor(99, containing: #""topic":"phoenix""#)
        let refs = socket.written.withLock { $0 }.filter { $0.contains(#""topic":"phoenix""#) }.compactMap { text -> Int? in
            guard case .string(let ref)? = try? JSONParser.parse(text)["ref"] else { return nil }
            return Int(ref)
        }
        #expect(refs == Array(2...100))
        #expect(socket.written.withLock { $0 }.first?.contains(#""status":"ok""#) == true, "the join's reply comes first")
        #expect(socket.resumed.withLock { $0 } == 1, "reading resumes once half the waiting frames are handled")
        socket.close()
    }

    @Test func aConnectionThatEndsDuringAJoinLeavesNoChannelBehind() async throws {
        let authenticator = GatedAuthenticator()
        let realtime = service(authenticator: authenticator)
        let socket = TestTransport(try #require(realtime.openSession(version: .v1, apikey: "key")))
        _ = socket.session.receive(.text(Self.join))
        socket.close()
        #expect(realtime.hub.metrics.snapshot.sockets == 1, "the socket ends once its join is handled")
        authenticator.open.yield()
        while realtime.hub.metrics.snapshot.sockets > 0 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(realtime.hub.channelCount == 0)
        #expect(socket.session.receive(Self.heartbeat(2)), "frames after the end are ignored")
    }
}
