package import CaravanAuth
package import CaravanCore
package import CaravanRealtime
import Foundation
package import Logging

/// Membership subqueries of select policies, answered by a read through the store as the service role (the
/// predicate already carries the subscriber's identity). It sees the database at delivery time (see
/// `MembershipReader`): each round's reader reads where `Store.currentRouting()` says — with read replicas, one
/// that has replayed the primary's position when the round began (the change being delivered had committed by
/// then), else the primary.
package struct StoreMembershipReader: MembershipReader {
    let store: any Store
    let routing: ReadRouting

    package init(store: any Store, routing: ReadRouting = .primary) {
        self.store = store
        self.routing = routing
    }

    package func exists(in table: TableSchema, where predicate: BoundPredicate) async throws -> Bool {
        let plan = try ReadPlan(table: table, query: Query(limit: 1), access: predicate, maxRows: 1, includeCount: false)
        return try await !store.routedFetch(plan, routing: routing).rows.isEmpty
    }

    package func forRound() async -> any MembershipReader {
        do {
            return StoreMembershipReader(store: store, routing: try await store.currentRouting())
        } catch {
            // The primary's position unknown: the primary answers this round (and reports its own failure, if any).
            return self
        }
    }
}

/// Builds the realtime service of a deployment: the hub (policies from `catalog`, memberships read through
/// `store`), token verification by `verifier`, the system clocks.
package func makeRealtimeService(store: any Store, catalog: Catalog, verifier: TokenVerifier, limits: RealtimeLimits,
                                relay: (any BroadcastRelay)? = nil, logger: Logger) -> RealtimeService {
    let clock = RealtimeClock(
        monotonic: { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 },
        epochSeconds: { Int64(Date().timeIntervalSince1970) }
    )
    let hub = RealtimeHub(catalog: catalog, limits: limits, membership: StoreMembershipReader(store: store), relay: relay,
                          logger: logger, now: clock.monotonic)
    return RealtimeService(hub: hub, catalog: catalog, limits: limits, authenticator: VerifierAuthenticator(verifier: verifier),
                           clock: clock, logger: logger)
}

extension RealtimeLimits {
    /// The `realtime_*` keys of `ServerConfiguration`.
    static let keys = [
        "realtime_max_sockets", "realtime_max_channels_per_socket", "realtime_joins_per_second", "realtime_events_per_second",
        "realtime_max_pending", "realtime_heartbeat_timeout", "realtime_stall_timeout",
    ]

    /// Reads the `realtime_*` keys (positive integers; timeouts in seconds).
    static func resolve(_ lookup: (String) -> String?) throws(CaravanError) -> RealtimeLimits {
        func positive(_ key: String) throws(CaravanError) -> Int? {
            guard let text = lookup(key) else { return nil }
            guard let value = Int(text), value > 0 else { throw CaravanError(.invalidValue, "\(key) must be a positive integer, got \"\(text)\"") }
            return value
        }
        var limits = RealtimeLimits()
        if let value = try positive("realtime_max_sockets") { limits.maxSockets = value }
        if let value = try positive("realtime_max_channels_per_socket") { limits.maxChannelsPerSocket = value }
        if let value = try positive("realtime_joins_per_second") { limits.joinsPerSecond = value }
        if let value = try positive("realtime_events_per_second") { limits.eventsPerSecond = value }
        if let value = try positive("realtime_max_pending") { limits.maxPendingFrames = value }
        if let value = try positive("realtime_heartbeat_timeout") { limits.heartbeatTimeout = .seconds(value) }
        if let value = try positive("realtime_stall_timeout") { limits.stallTimeout = .seconds(value) }
        return limits
    }
}
