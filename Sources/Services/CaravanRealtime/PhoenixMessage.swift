package import CaravanCore

/// The Phoenix serializer a socket speaks, chosen per connection by the `vsn` query parameter (wire-protocol §4.1).
package enum ProtocolVersion: String, Sendable, Hashable {
    /// JSON objects `{topic, event, payload, ref}`: realtime-py 2.34.1.
    case v1 = "1.0.0"
    /// JSON arrays `[join_ref, ref, topic, event, payload]`: supabase-swift ≥ 2.44.
    case v2 = "2.0.0"

    /// The version of a `vsn` query value; a missing value means 1.0.0, an unknown one is nil.
    package init?(vsn: String?) {
        guard let vsn else { self = .v1; return }
        self.init(rawValue: vsn)
    }
}

/// One inbound Phoenix message, decoded.
package struct PhoenixMessage: Sendable, Hashable {
    package var joinRef: String?
    package var ref: String?
    package var topic: String
    package var event: String
    package var payload: JSONValue

    package init(joinRef: String?, ref: String?, topic: String, event: String, payload: JSONValue) {
        self.joinRef = joinRef
        self.ref = ref
        self.topic = topic
        self.event = event
        self.payload = payload
    }
}

/// One outbound frame, ready to encode: the payload is already JSON text, so a fan-out encodes a shared payload once.
package struct OutboundFrame: Sendable, Hashable {
    package var joinRef: String?
    package var ref: String?
    package var topic: String
    package var event: String
    /// The payload as JSON object text.
    package var payload: String

    package init(joinRef: String?, ref: String?, topic: String, event: String, payload: String) {
        self.joinRef = joinRef
        self.ref = ref
        self.topic = topic
        self.event = event
        self.payload = payload
    }

    package init(joinRef: String?, ref: String?, topic: String, event: String, payload: JSONValue) {
        self.init(joinRef: joinRef, ref: ref, topic: topic, event: event, payload: payload.jsonText)
    }
}

/// Encodes and decodes Phoenix text frames in both serializer versions.
package enum PhoenixCodec {
    /// Decodes a text frame; a malformed frame is a `RealtimeError` (the socket logs and ignores it).
    package static func decode(_ text: String, version: ProtocolVersion) throws(RealtimeError) -> PhoenixMessage {
        let document: JSONValue
        do {
            document = try JSONParser.parse(text)
        } catch {
            throw RealtimeError(.malformedFrame, "frame is not JSON")
        }
        switch (version, document) {
        case (.v1, .object):
            guard case .string(let topic)? = document["topic"], case .string(let event)? = document["event"] else {
                throw RealtimeError(.malformedFrame, "frame lacks topic or event")
            }
            return PhoenixMessage(joinRef: optionalString(document["join_ref"]), ref: optionalString(document["ref"]),
                                  topic: topic, event: event, payload: document["payload"] ?? .object([]))
        case (.v2, .array(let items)) where items.count == 5:
            guard case .string(let topic) = items[2], case .string(let event) = items[3] else {
                throw RealtimeError(.malformedFrame, "frame lacks topic or event")
            }
            return PhoenixMessage(joinRef: optionalString(items[0]), ref: optionalString(items[1]), topic: topic, event: event, payload: items[4])
        default:
            throw RealtimeError(.malformedFrame, "frame does not have the shape of vsn \(version.rawValue)")
        }
    }

    /// Refs are strings; a client that sends a number gets it back as text.
    private static func optionalString(_ value: JSONValue?) -> String? {
        switch value {
        case .string(let s)?: s
        case .integer(let i)?: String(i)
        default: nil
        }
    }

    /// Encodes a frame. V1 always carries `ref` (null when unused) and never `join_ref`, as Supabase's V1 serializer.
    package static func encode(_ frame: OutboundFrame, version: ProtocolVersion) -> String {
        var writer = JSONWriter(reservingCapacity: frame.payload.utf8.count + frame.topic.utf8.count + 64)
        switch version {
        case .v1:
            writer.writeRaw(#"{"topic":"#)
            writer.writeString(frame.topic)
            writer.writeRaw(#","event":"#)
            writer.writeString(frame.event)
            writer.writeRaw(#","payload":"#)
            writer.writeRaw(frame.payload)
            writer.writeRaw(#","ref":"#)
            writeOptional(frame.ref, to: &writer)
            writer.writeRaw("}")
        case .v2:
            writer.writeRaw("[")
            writeOptional(frame.joinRef, to: &writer)
            writer.writeRaw(",")
            writeOptional(frame.ref, to: &writer)
            writer.writeRaw(",")
            writer.writeString(frame.topic)
            writer.writeRaw(",")
            writer.writeString(frame.event)
            writer.writeRaw(",")
            writer.writeRaw(frame.payload)
            writer.writeRaw("]")
        }
        return writer.string
    }

    private static func writeOptional(_ text: String?, to writer: inout JSONWriter) {
        if let text { writer.writeString(text) } else { writer.writeRaw("null") }
    }
}
