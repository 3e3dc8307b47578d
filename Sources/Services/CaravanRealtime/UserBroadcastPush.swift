package import CaravanCore

/// A broadcast sent as a binary frame by the vsn 2.0.0 serializer of supabase-swift and realtime-js
/// (`RealtimeSerializer.encodeBroadcastPush`, `Serializer._binaryEncodeUserBroadcastPush`): kind 3, then the
/// lengths of join_ref, ref, topic, the user's event and the metadata (one byte each), the payload encoding (1 JSON,
/// 0 raw bytes), those five strings, and the payload.
///
/// A JSON payload is read as the text push it stands for — `[join_ref, ref, topic, "broadcast", {"type": "broadcast",
/// "event": E, "payload": P}]` — so it follows exactly the path of a text broadcast: the channel's `self` and `ack`
/// settings, policies, and the other instances. A raw payload travels as bytes and reaches vsn 2.0.0 sockets only,
/// as a kind 4 frame (`UserBroadcastFrame`): JSON messages cannot carry it (Supabase Realtime does the same).
package struct UserBroadcastPush: Sendable, Equatable {
    static let kind: UInt8 = 3
    static let rawEncoding: UInt8 = 0
    static let jsonEncoding: UInt8 = 1
    static let headerLength = 7

    package let joinRef: String?
    package let ref: String?
    package let topic: String
    package let event: String
    package let payload: BroadcastPayload

    /// Why a binary frame is not taken.
    package enum Refusal: Error, Equatable {
        /// Not kind 3 (the only kind a client sends).
        case notAUserBroadcastPush
        /// Shorter than its header says, or text that is not UTF-8, or a JSON payload that does not parse, or an
        /// unknown payload encoding.
        case malformed
    }

    /// Reads a binary frame.
    package init(bytes: [UInt8]) throws(Refusal) {
        guard bytes.count >= Self.headerLength, bytes[0] == Self.kind else { throw .notAUserBroadcastPush }
        let lengths = bytes[1...5].map(Int.init)
        let encoding = bytes[6]
        var offset = Self.headerLength
        var fields: [String] = []
        for length in lengths {
            guard offset + length <= bytes.count, let text = String(validating: bytes[offset..<offset + length], as: UTF8.self) else {
                throw .malformed
            }
            fields.append(text)
            offset += length
        }
        let body = Array(bytes[offset...])
        switch encoding {
        case Self.jsonEncoding:
            do {
                payload = .json(try JSONParser.parse(bytes: body))
            } catch {
                throw .malformed
            }
        case Self.rawEncoding:
            payload = .bytes(body)
        default:
            throw .malformed
        }
        joinRef = fields[0].isEmpty ? nil : fields[0]
        ref = fields[1].isEmpty ? nil : fields[1]
        topic = fields[2]
        event = fields[3]
    }

    /// The text push a JSON user-broadcast frame stands for; nil for a raw payload.
    package var textMessage: String? {
        guard case .json(let payload) = payload else { return nil }
        func optional(_ text: String?) -> JSONValue { text.map(JSONValue.string) ?? .null }
        let message = JSONValue.array([
            optional(joinRef), optional(ref), .string(topic), .string("broadcast"),
            .object([("type", .string("broadcast")), ("event", .string(event)), ("payload", payload)]),
        ])
        return message.jsonText
    }

    /// The push as a Phoenix message (the raw payload left out: it travels beside it).
    var message: PhoenixMessage {
        PhoenixMessage(joinRef: joinRef, ref: ref, topic: topic, event: "broadcast",
                       payload: .object([("type", .string("broadcast")), ("event", .string(event))]))
    }
}

/// A broadcast sent to vsn 2.0.0 sockets as a binary frame (`RealtimeSerializer.decodeBinary` in supabase-swift,
/// `fastlane!(%UserBroadcast{})` in Supabase Realtime): kind 4, the lengths of the topic, the user's event and the
/// metadata, the payload encoding (0 raw), then those three strings and the payload.
package enum UserBroadcastFrame {
    static let kind: UInt8 = 4

    /// The frame of a raw payload; nil when the topic or the event is longer than 255 bytes.
    package static func encode(topic: String, event: String, bytes: [UInt8]) -> [UInt8]? {
        let topicBytes = Array(topic.utf8), eventBytes = Array(event.utf8)
        guard topicBytes.count <= 255, eventBytes.count <= 255 else { return nil }
        return [kind, UInt8(topicBytes.count), UInt8(eventBytes.count), 0, UserBroadcastPush.rawEncoding] + topicBytes + eventBytes + bytes
    }
}
