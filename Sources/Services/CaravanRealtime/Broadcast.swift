package import CaravanCore

/// A broadcast's payload: JSON (text frames, every client) or raw bytes (vsn 2.0.0 binary frames only).
package enum BroadcastPayload: Sendable, Equatable {
    case json(JSONValue)
    case bytes([UInt8])
}

/// A broadcast on its way to a topic's channels, from a socket, the REST endpoint or another instance.
package struct Broadcast: Sendable, Equatable {
    package let topic: String
    package let event: String
    package let payload: BroadcastPayload
    /// Sent on a private channel: only private channels of the topic receive it.
    package let isPrivate: Bool

    package init(topic: String, event: String, payload: BroadcastPayload, isPrivate: Bool = false) {
        self.topic = topic
        self.event = event
        self.payload = payload
        self.isPrivate = isPrivate
    }
}

/// What a channel may do, as the `realtime.messages` policies decide for a private channel (everything for a public
/// one): receive broadcasts or presence (select), send broadcasts or track presence (insert).
package struct ChannelPermissions: Sendable, Equatable {
    package var readBroadcast: Bool
    package var readPresence: Bool
    package var writeBroadcast: Bool
    package var writePresence: Bool

    package static let all = ChannelPermissions(readBroadcast: true, readPresence: true, writeBroadcast: true, writePresence: true)

    package init(readBroadcast: Bool, readPresence: Bool, writeBroadcast: Bool, writePresence: Bool) {
        self.readBroadcast = readBroadcast
        self.readPresence = readPresence
        self.writeBroadcast = writeBroadcast
        self.writePresence = writePresence
    }

    /// Whether the channel may be joined: it may read something.
    package var mayJoin: Bool { readBroadcast || readPresence }
}

/// The refusals of Supabase Realtime's authorization, worded as it words them (clients match on them).
package enum ChannelRefusal {
    package static func read(_ channel: String) -> String { "Unauthorized: You do not have permissions to read from this Channel topic: \(channel)" }
    package static func write(_ channel: String) -> String { "Unauthorized: You do not have permissions to write to this Channel topic: \(channel)" }
}
