@testable import CaravanPostgres
import Testing

/// The one ticker that bounds every request's wait for a pooled connection.
@Suite("Lease watch")
struct LeaseWatchTests {
    /// Waits (at most 10 s) until `watch` holds `count` waits: a wait registers asynchronously.
    func registered(_ count: Int, in watch: LeaseWatch) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while watch.waiting != count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(1)) }
        try #require(watch.waiting == count)
    }

    @Test func aWaitWithNoConnectionByItsDeadlineTimesOutAndAbandonsTheLease() async throws {
        let watch = LeaseWatch()
        let lease = LeaseState()
        let start = ContinuousClock.now
        let waiting = Task { try await watch.wait(for: lease, deadline: start + .seconds(10)) }
        try await registered(1, in: watch)
        watch.check(at: start + .seconds(9))  // not due yet
        watch.check(at: start + .seconds(10))
        #expect(try await waiting.value == .timedOut)
        #expect(watch.waiting == 0)
        #expect(!lease.abandon(), "the watch abandoned it: a connection lent now is refused")
    }

    @Test func aWaitBeforeItsDeadlineEndsWhenItsRequestIsDone() async throws {
        let watch = LeaseWatch()
        let lease = LeaseState()
        let waiting = Task { try await watch.wait(for: lease, deadline: .now + .seconds(10)) }
        try await registered(1, in: watch)
        waiting.cancel()  // what `withConnection` does once its body returns
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(watch.waiting == 0)
        watch.check(at: .now + .seconds(20))
        #expect(lease.abandon(), "a finished wait leaves the lease alone")
    }

    @Test func aWaitCancelledBeforeItRegistersStillEnds() async throws {
        let watch = LeaseWatch()
        let waiting = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await watch.wait(for: LeaseState(), deadline: .now + .seconds(10))
        }
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }
}
