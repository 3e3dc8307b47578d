@testable import CaravanServer
import CaravanCore
import Foundation
import Synchronization
import Testing

/// Each caller's latest write token, for reads from replicas by clients that do not send the token back.
@Suite struct RecentWritesTests {
    /// A clock the test moves.
    final class Now: Sendable {
        let value = Mutex<Int64>(1_800_000_000_000_000)
        var clock: WallClock { WallClock { [self] in value.withLock { $0 } } }
        func advance(seconds: Int64) { value.withLock { $0 += seconds * 1_000_000 } }
    }

    let ada = Identity(role: .authenticated, userID: "aaaaaaaa-0000-4000-8000-00000000000a")
    let eve = Identity(role: .authenticated, userID: "eeeeeeee-0000-4000-8000-00000000000e")

    @Test func eachCallerGetsItsOwnLatestWrite() {
        let recent = RecentWrites(clock: Now().clock)
        recent.record(ConsistencyToken(position: 100), by: ada)
        recent.record(ConsistencyToken(position: 200), by: .serviceRole)
        #expect(recent.latest(of: ada) == ConsistencyToken(position: 100))
        #expect(recent.latest(of: eve) == nil, "another user's write is not this caller's")
        #expect(recent.latest(of: .serviceRole) == ConsistencyToken(position: 200))
        #expect(recent.latest(of: Identity(role: .anon)) == nil)
        // The same user through another credential (its claims differ) is the same caller.
        #expect(recent.latest(of: Identity(role: .authenticated, userID: "AAAAAAAA-0000-4000-8000-00000000000A", claims: .object([("aal", .string("aal2"))])))
            == ConsistencyToken(position: 100))
    }

    @Test func anEarlierTokenNeverReplacesALaterOne() {
        let recent = RecentWrites(clock: Now().clock)
        recent.record(ConsistencyToken(position: 500), by: ada)
        recent.record(ConsistencyToken(position: 300), by: ada)  // a slower write's answer, finished second
        #expect(recent.latest(of: ada) == ConsistencyToken(position: 500))
    }

    @Test func aWriteIsForgottenAfterTheRetention() {
        let now = Now()
        let recent = RecentWrites(retention: .seconds(30), clock: now.clock)
        recent.record(ConsistencyToken(position: 100), by: ada)
        now.advance(seconds: 29)
        #expect(recent.latest(of: ada) == ConsistencyToken(position: 100))
        now.advance(seconds: 1)
        #expect(recent.latest(of: ada) == nil)
    }

    @Test func pastItsCapacityTheExpiredThenTheOldestGo() {
        let now = Now()
        let recent = RecentWrites(retention: .seconds(30), capacity: 4, clock: now.clock)
        let users = (0..<6).map { Identity(role: .authenticated, userID: String(format: "00000000-0000-4000-8000-%012d", $0)) }
        for user in users.prefix(2) { recent.record(ConsistencyToken(position: 1), by: user) }
        now.advance(seconds: 31)
        for user in users[2..<5] { recent.record(ConsistencyToken(position: 2), by: user) }
        #expect(recent.count == 3, "the two expired entries went when the fifth came")
        now.advance(seconds: 1)
        recent.record(ConsistencyToken(position: 3), by: users[5])
        recent.record(ConsistencyToken(position: 3), by: ada)
        #expect(recent.count <= 4)
        #expect(recent.latest(of: ada) == ConsistencyToken(position: 3), "the newest entry stays")
        #expect(recent.latest(of: users[5]) == ConsistencyToken(position: 3))
    }
}
