public import CaravanCore
import Synchronization

/// A wall clock that moves only when the test moves it: pass `wallClock` where the code under test takes a
/// `WallClock`, then `advance(by:)` to cross an expiry or a schedule.
public final class ManualClock: Sendable {
    private let now: Mutex<Int64>

    /// Starts at `microseconds` since 1970 (default 2026-01-01T00:00:00Z).
    public init(microseconds: Int64 = 1_767_225_600_000_000) {
        now = Mutex(microseconds)
    }

    /// Microseconds since 1970, now.
    public var microseconds: Int64 { now.withLock { $0 } }

    public func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        now.withLock { $0 += seconds * 1_000_000 + attoseconds / 1_000_000_000_000 }
    }

    /// This clock as the `WallClock` the platform takes.
    public var wallClock: WallClock { WallClock { [self] in self.microseconds } }
}
