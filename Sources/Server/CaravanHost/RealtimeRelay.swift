import CaravanCore
import Foundation
import CaravanPostgres
import CaravanRealtime
import Logging
import ServiceLifecycle

/// Realtime broadcast across the instances of a PostgreSQL deployment: each broadcast that originates here is sent
/// on the `caravan_broadcast` NOTIFY channel with this instance's id, and every other instance delivers it to its own
/// sockets. Presence stays per instance.
struct PostgresBroadcastRelay: BroadcastRelay {
    static let channelName = "caravan_broadcast"
    let channel: PostgresNotificationChannel
    /// This instance's id: its own notifications come back and are skipped.
    let origin: String

    /// `{"origin", "topic", "event", "private", "payload"}`, or `"bytes"` (base64) for a raw payload.
    func publish(_ broadcast: Broadcast) async throws {
        var members: [(key: String, value: JSONValue)] = [
            ("origin", .string(origin)), ("topic", .string(broadcast.topic)), ("event", .string(broadcast.event)), ("private", .bool(broadcast.isPrivate)),
        ]
        switch broadcast.payload {
        case .json(let payload): members.append(("payload", payload))
        case .bytes(let bytes): members.append(("bytes", .string(Data(bytes).base64EncodedString())))
        }
        try await channel.notify(JSONValue.object(members).jsonText)
    }
}

/// Delivers the other instances' broadcasts to this instance's sockets.
struct BroadcastRelayReceiver: Service {
    let relay: PostgresBroadcastRelay
    let hub: RealtimeHub
    let logger: Logger

    func run() async throws {
        for await text in relay.channel.payloads.cancelOnGracefulShutdown() {
            let message: JSONValue
            do {
                message = try JSONParser.parse(text)
            } catch {
                logger.error("realtime: a relayed broadcast is not JSON; dropped", metadata: ["error": "\(error)"])
                continue
            }
            guard case .string(let origin)? = message["origin"], origin != relay.origin,
                  case .string(let topic)? = message["topic"], case .string(let event)? = message["event"] else { continue }
            var payload = BroadcastPayload.json(message["payload"] ?? .object([]))
            if case .string(let base64)? = message["bytes"] {
                guard let data = Data(base64Encoded: base64) else {
                    logger.error("realtime: a relayed raw broadcast is not base64; dropped")
                    continue
                }
                payload = .bytes(Array(data))
            }
            var isPrivate = false
            if case .bool(true)? = message["private"] { isPrivate = true }
            await hub.broadcast(Broadcast(topic: topic, event: event, payload: payload, isPrivate: isPrivate), sender: nil, includeSelf: true, relayed: true)
        }
    }
}
