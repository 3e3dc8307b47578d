package import CaravanCore
import Synchronization

/// One open channel as the admin console lists it.
package struct ChannelSummary: Sendable, Hashable {
    /// The socket's number on this instance.
    package let socket: Int
    package let topic: String
    /// The joiner's role and user id (nil for the anon and service roles).
    package let role: Role
    package let userID: String?
    /// The tables its `postgres_changes` bindings cover, sorted.
    package let tables: [String]
    /// The channel's presences on this instance.
    package let presences: Int
    /// Frames queued for the channel's socket and not yet written.
    package let pendingFrames: Int
    package let protocolVersion: ProtocolVersion
}

extension RealtimeHub {
    /// Every channel registered on this instance, by socket then topic (a read of the hub's state under its lock;
    /// sockets that joined no channel appear only in `metrics.snapshot.sockets`).
    package func channelSummaries() -> [ChannelSummary] {
        let channels = state.withLock { state in
            state.channels.map { id, channel in (id, channel, state.presences[id.topic]?.count ?? 0) }
        }
        return channels.map { id, channel, presences in
            ChannelSummary(socket: id.socket, topic: id.topic, role: channel.request.identity.role, userID: channel.request.identity.userID,
                           tables: Set(channel.request.bindings.flatMap(\.tables)).sorted(), presences: presences,
                           pendingFrames: channel.outbox.pendingFrames, protocolVersion: channel.outbox.version)
        }.sorted { ($0.socket, $0.topic) < ($1.socket, $1.topic) }
    }
}
