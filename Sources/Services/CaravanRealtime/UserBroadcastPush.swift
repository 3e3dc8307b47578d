package import CaravanCore

/// A broadcast sent as a binary frame by the vsn 2.0.0 serializer of supabase-swift and realtime-js
/// (`RealtimeBinaryEncoder.encodeUserBroadcastPush`, `Serializer._binaryEncodeUserBroadcastPush`): kind 3, then the
/// lengths of join_ref, ref, topic, the user's event and the metadata (one byte each), the payload encoding (1 JSON,
/// 0 raw bytes), those five strings, and the payload.
///
/// It is read here as the text push it stands for — `[join_ref, ref, topic, "broadcast", {"type": "broadcast",
/// "event": E, "payload": P}]` — so it follows exactly the path of a text broadcast: the channel's `self` and `ack`
/// settings, policies, and the other instances.
package enum UserBroadcastPush {
    static let kind: UInt8 = 3
    static let jsonEncoding: UInt8 = 1
    static let headerLength = 7

    /// Why a binary frame is not taken.
    package enum Refusal: Error, Equatable {
        /// Not kind 3 (the only kind a client sends).
        case notAUserBroadcastPush
        /// Shorter than its header says, or text that is not UTF-8, or a JSON payload that does not parse.
        case malformed
        /// A raw (encoding 0) payload: JSON messages cannot carry raw bytes.
        case rawPayload
    }

    /// The text push a binary user-broadcast frame stands for.
    package static func textMessage(from bytes: [UInt8]) throws(Refusal) -> String {
        guard bytes.count >= headerLength, bytes[0] == kind else { throw .notAUserBroadcastPush }
        let lengths = bytes[1...5].map(Int.init)
        let encoding = bytes[6]
        var offset = headerLength
        var fields: [String] = []
        for length in lengths {
            guard offset + length <= bytes.count, let text = String(validating: bytes[offset..<offset + length], as: UTF8.self) else {
                throw .malformed
            }
            fields.append(text)
            offset += length
        }
        guard encoding == jsonEncoding else { throw .rawPayload }
        let payload: JSONValue
        do {
            payload = try JSONParser.parse(bytes: Array(bytes[offset...]))
        } catch {
            throw .malformed
        }
        let (joinRef, ref, topic, event) = (fields[0], fields[1], fields[2], fields[3])
        func optional(_ text: String) -> JSONValue { text.isEmpty ? .null : .string(text) }
        let message = JSONValue.array([
            optional(joinRef), optional(ref), .string(topic), .string("broadcast"),
            .object([("type", .string("broadcast")), ("event", .string(event)), ("payload", payload)]),
        ])
        return message.jsonText
    }
}
