import CaravanCore
@testable import CaravanRealtime
import Testing

/// Binary broadcasts of the vsn 2.0.0 serializer, built here byte for byte as supabase-swift's
/// `RealtimeBinaryEncoder.encodeUserBroadcastPush` builds them: kind 3, the lengths of join_ref, ref, topic, user event
/// and metadata, the payload encoding (1 JSON, 0 raw), the five strings, the payload.
@Suite struct UserBroadcastPushTests {
    static func frame(joinRef: String, ref: String, topic: String, event: String, metadata: String = "", encoding: UInt8 = 1,
                      payload: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = [3]
        for field in [joinRef, ref, topic, event, metadata] { bytes.append(UInt8(field.utf8.count)) }
        bytes.append(encoding)
        for field in [joinRef, ref, topic, event, metadata] { bytes += Array(field.utf8) }
        return bytes + payload
    }

    @Test func aJSONBroadcastReadsAsTheTextPushItStandsFor() throws {
        let bytes = Self.frame(joinRef: "1", ref: "7", topic: "realtime:room-1", event: "typing", payload: Array(#"{"user":"سارة","n":2}"#.utf8))
        let text = try #require(UserBroadcastPush(bytes: bytes).textMessage)
        #expect(try JSONParser.parse(text) == .array([
            .string("1"), .string("7"), .string("realtime:room-1"), .string("broadcast"),
            .object([("type", .string("broadcast")), ("event", .string("typing")),
                     ("payload", .object([("user", .string("سارة")), ("n", .integer(2))]))]),
        ]))
        // And the session reads that text as a broadcast push of that topic.
        let message = try PhoenixCodec.decode(text, version: .v2)
        #expect(message.topic == "realtime:room-1" && message.event == "broadcast" && message.ref == "7")
    }

    @Test func emptyRefsBecomeNullAndMetadataIsSkipped() throws {
        let bytes = Self.frame(joinRef: "", ref: "", topic: "realtime:r", event: "e", metadata: #"{"k":1}"#, payload: Array("[1,2]".utf8))
        let text = try #require(UserBroadcastPush(bytes: bytes).textMessage)
        #expect(text == #"[null,null,"realtime:r","broadcast",{"type":"broadcast","event":"e","payload":[1,2]}]"#)
    }

    @Test func framesThatAreNotAWellFormedJSONBroadcastAreRefused() {
        let good = Self.frame(joinRef: "1", ref: "2", topic: "realtime:r", event: "e", payload: Array("{}".utf8))
        #expect(throws: UserBroadcastPush.Refusal.notAUserBroadcastPush) { try UserBroadcastPush(bytes: [4] + good.dropFirst()) }
        #expect(throws: UserBroadcastPush.Refusal.notAUserBroadcastPush) { try UserBroadcastPush(bytes: [3, 1]) }
        #expect(throws: UserBroadcastPush.Refusal.malformed) { try UserBroadcastPush(bytes: Array(good.prefix(12))) }
        #expect(throws: UserBroadcastPush.Refusal.malformed) {
            try UserBroadcastPush(bytes: Self.frame(joinRef: "1", ref: "2", topic: "realtime:r", event: "e", payload: Array("{nope".utf8)))
        }
        #expect(throws: UserBroadcastPush.Refusal.malformed) {
            try UserBroadcastPush(bytes: Self.frame(joinRef: "1", ref: "2", topic: "realtime:r", event: "e", encoding: 7, payload: [0xff, 0x00]))
        }
        var badUTF8 = good
        badUTF8[7] = 0xff
        #expect(throws: UserBroadcastPush.Refusal.malformed) { try UserBroadcastPush(bytes: badUTF8) }
    }

    @Test func aRawPayloadTravelsAsBytesBesideItsBroadcast() throws {
        let bytes = Self.frame(joinRef: "3", ref: "", topic: "realtime:cursor", event: "move", encoding: 0, payload: [0x00, 0xff, 0x10])
        let push = try UserBroadcastPush(bytes: bytes)
        #expect(push.payload == .bytes([0x00, 0xff, 0x10]) && push.textMessage == nil)
        #expect(push.joinRef == "3" && push.ref == nil && push.topic == "realtime:cursor" && push.event == "move")
        let empty = try UserBroadcastPush(bytes: Self.frame(joinRef: "3", ref: "4", topic: "realtime:c", event: "e", encoding: 0, payload: []))
        #expect(empty.payload == .bytes([]))
    }

    /// supabase-swift's `RealtimeSerializer.decodeBinary`, restated: kind 4, topic/event/metadata lengths, encoding,
    /// then topic, event, metadata (skipped) and the payload.
    static func decodeKind4(_ data: [UInt8]) -> (topic: String, event: String, encoding: UInt8, payload: [UInt8])? {
        guard data.count >= 5, data[0] == 4 else { return nil }
        let topicLength = Int(data[1]), eventLength = Int(data[2]), metaLength = Int(data[3])
        guard data.count >= 5 + topicLength + eventLength + metaLength else { return nil }
        let topic = String(decoding: data[5..<5 + topicLength], as: UTF8.self)
        let event = String(decoding: data[5 + topicLength..<5 + topicLength + eventLength], as: UTF8.self)
        return (topic, event, data[4], Array(data[(5 + topicLength + eventLength + metaLength)...]))
    }

    @Test func aRawBroadcastGoesOutAsTheKind4FrameTheSDKDecodes() throws {
        let frame = try #require(UserBroadcastFrame.encode(topic: "realtime:cursor", event: "move", bytes: [1, 2, 250]))
        let decoded = try #require(Self.decodeKind4(frame))
        #expect(decoded.topic == "realtime:cursor" && decoded.event == "move" && decoded.encoding == 0 && decoded.payload == [1, 2, 250])
        #expect(UserBroadcastFrame.encode(topic: String(repeating: "t", count: 256), event: "e", bytes: []) == nil)
    }
}
