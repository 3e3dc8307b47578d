import CaravanCore
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

    func publish(topic: String, event: String, payload: JSONValue) async throws {
        let message = JSONValue.object([("origin", .string(origin)), ("topic", .string(topic)), ("event", .string(event)), ("payload", payload)])
        try await channel.notify(message.jsonText)
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
            await hub.broadcast(topic: topic, event: event, payload: message["payload"] ?? .object([]), sender: nil, includeSelf: true, relayed: true)
        }
    }
}
