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

@Suite struct SessionTests {
    /// A service on the real monotonic clock, with a short stall timeout and tick.
    func service() -> RealtimeService {
        var limits = RealtimeLimits()
        limits.stallTimeout = .milliseconds(100)
        limits.maxPendingFrames = 1_000
        let start = ContinuousClock.now
        let clock = RealtimeClock(monotonic: {
            let elapsed = ContinuousClock.now - start
            return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }, epochSeconds: { 1_000 })
        let hub = RealtimeHub(catalog: testCatalog, limits: limits, logger: Logger(label: "test"), now: clock.monotonic)
        return RealtimeService(hub: hub, catalog: testCatalog, limits: limits, authenticator: AnonAuthenticator(), clock: clock,
                               tickInterval: .milliseconds(10), logger: Logger(label: "test"))
    }

    static let join = #"{"topic":"realtime:s","event":"phx_join","ref":"1","payload":{"config":{"postgres_changes":[{"event":"*","schema":"public","table":"places"}]}}}"#

    @Test func aSocketThatStopsReadingIsDroppedWhileOthersKeepReceiving() async throws {
        let realtime = service()
        let stalled = try #require(realtime.openSession(version: .v1, apikey: "key"))
        let healthy = try #require(realtime.openSession(version: .v1, apikey: "key"))
        let (stalledInbound, stalledInput) = AsyncStream.makeStream(of: SocketFrame.self)
        let (healthyInbound, healthyInput) = AsyncStream.makeStream(of: SocketFrame.self)
        let received = Mutex<[String]>([])
        let (events, eventArrived) = AsyncStream.makeStream(of: Void.self)
        let stalledRun = Task {
            // The client never reads: every write blocks until the socket is dropped.
            // The service's ticker drops it: `terminate` ends its inbound, and the blocked write is cancelled.
            await stalled.run(inbound: stalledInbound, write: { _ in try await Task.sleep(for: .seconds(3_600)) }, terminate: { stalledInput.finish() })
        }
        let healthyRun = Task {
            await healthy.run(inbound: healthyInbound, write: { frames in
                for case .text(let text) in frames {
                    received.withLock { $0.append(text) }
                    if text.contains(#""event":"postgres_changes""#) { eventArrived.yield() }
                }
            }, terminate: { healthyInput.finish() })
        }
        stalledInput.yield(.text(Self.join))
        healthyInput.yield(.text(Self.join))
        while realtime.hub.channelCount < 2 { try await Task.sleep(for: .milliseconds(5)) }
        await realtime.hub.dispatch([change(.insert, table: "places", record: place("before", active: true), old: nil)])
        await stalledRun.value  // returns only when the stalled socket is dropped
        #expect(realtime.hub.channelCount == 1)
        await realtime.hub.dispatch([change(.insert, table: "places", record: place("after", active: true), old: nil)])
        var iterator = events.makeAsyncIterator()
        _ = await iterator.next()
        _ = await iterator.next()
        #expect(received.withLock { $0 }.filter { $0.contains(#""event":"postgres_changes""#) }.count == 2)
        healthyInput.finish()
        await healthyRun.value
        #expect(realtime.hub.metrics.snapshot.sockets == 0)
    }
}
