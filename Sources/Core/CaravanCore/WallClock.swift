public import Foundation
import Synchronization

/// The wall clock logic reads, injected: the executable passes `.system`, tests a fixed or hand-moved one, so that
/// no flow calls `Date()` itself (timestamps, token `iat`/`exp`, code expiry, outbox pruning).
///
/// ```swift
/// let clock = WallClock.fixed(microseconds: 1_800_000_000_000_000)
/// clock.seconds  // 1_800_000_000
/// ```
public struct WallClock: Sendable {
    private let read: @Sendable () -> Int64

    /// A clock reading `microseconds` (since 1970) on every call.
    public init(microseconds: @escaping @Sendable () -> Int64) {
        self.read = microseconds
    }

    /// Now, in microseconds since 1970.
    public var microseconds: Int64 { read() }

    /// Now, in whole seconds since 1970.
    public var seconds: Int64 { read() / 1_000_000 }

    /// The system's clock.
    public static let system = WallClock { Int64(Date().timeIntervalSince1970 * 1_000_000) }

    /// A clock that never moves.
    public static func fixed(microseconds: Int64) -> WallClock {
        WallClock { microseconds }
    }
}

/// Where new row and session ids come from, injected like the clock: `.random` (UUIDv4) in the executable, a
/// deterministic sequence in tests that assert ids.
public struct IDGenerator: Sendable {
    private let make: @Sendable () -> UUID

    public init(_ make: @escaping @Sendable () -> UUID) {
        self.make = make
    }

    /// A new id as a canonical (lower-case) UUID string.
    public func next() -> String { make().uuidString.lowercased() }

    /// Random version-4 UUIDs.
    public static let random = IDGenerator { UUID() }

    /// `00000000-0000-4000-8000-000000000001`, `…0002`, …: predictable ids for tests.
    package static func sequential() -> IDGenerator {
        let counter = Mutex<UInt64>(0)
        return IDGenerator {
            let n = counter.withLock { value -> UInt64 in
                value += 1
                return value
            }
            let b = (0..<6).map { UInt8(truncatingIfNeeded: n >> (8 * (5 - $0))) }
            return UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, b[0], b[1], b[2], b[3], b[4], b[5]))
        }
    }
}
