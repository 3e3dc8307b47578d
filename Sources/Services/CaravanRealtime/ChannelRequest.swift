package import CaravanCore

/// What a joined channel asks of the hub: its identity, its bindings and its broadcast/presence options.
package struct ChannelRequest: Sendable {
    package let topic: String
    package let joinRef: String?
    package let identity: Identity
    package let bindings: [PostgresChangesBinding]
    /// `config.broadcast.self`: the sender receives its own broadcasts.
    package let broadcastSelf: Bool
    /// `config.presence.key`, or a key made for this channel when the client sent none.
    package let presenceKey: String
    /// Whether the client listens to presence (`presence_state` is pushed after the join).
    package let presenceEnabled: Bool
    /// `config.private`: the channel is authorized by the `realtime.messages` policies, and it shares broadcasts
    /// and presence only with the topic's other private channels.
    package var isPrivate: Bool = false

    /// The channel name of `realtime:<name>`, as system pushes carry it.
    package var channelName: String { RealtimeTopic.channelName(topic) }
}

/// Topic names.
package enum RealtimeTopic {
    /// `realtime:places` → `places`.
    package static func channelName(_ topic: String) -> String {
        topic.hasPrefix("realtime:") ? String(topic.dropFirst("realtime:".count)) : topic
    }
}

/// What the socket driver does for the state machine, in order.
package enum SocketAction: Sendable {
    /// Write a frame.
    case send(OutboundFrame)
    /// Register (or replace) the channel with the hub, then write `frames` (the join reply first): the registration
    /// and the enqueue are one step, so the subscription is live before the reply and no event precedes it.
    case register(ChannelRequest, frames: [OutboundFrame])
    /// Remove the channel from the hub (its presence leaves).
    case unregister(topic: String)
    /// Relay a broadcast to the topic's other channels (and the sender when `includeSelf`), then write `ack` (the
    /// reply a client that asked for acknowledgements waits for) — or, when the channel may not send, a refusal.
    case broadcast(Broadcast, includeSelf: Bool, ack: OutboundFrame?)
    /// Track this channel's presence, then write `ack` — or, when the channel may not track, a refusal.
    case track(topic: String, meta: JSONValue, ack: OutboundFrame?)
    /// Untrack this channel's presence.
    case untrack(topic: String)
    /// Close the socket.
    case close(reason: String)
}

/// System push payloads.
enum SystemPayload {
    static func ok(_ message: String, extension name: String, channel: String) -> JSONValue {
        .object([("extension", .string(name)), ("status", .string("ok")), ("message", .string(message)), ("channel", .string(channel))])
    }

    static func error(_ message: String, extension name: String = "system", channel: String) -> JSONValue {
        .object([("extension", .string(name)), ("status", .string("error")), ("message", .string(message)), ("channel", .string(channel))])
    }
}
