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
        let text = try UserBroadcastPush.textMessage(from: bytes)
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
        let text = try UserBroadcastPush.textMessage(from: bytes)
        #expect(text == #"[null,null,"realtime:r","broadcast",{"type":"broadcast","event":"e","payload":[1,2]}]"#)
    }

    @Test func framesThatAreNotAWellFormedJSONBroadcastAreRefused() {
        let good = Self.frame(joinRef: "1", ref: "2", topic: "realtime:r", event: "e", payload: Array("{}".utf8))
        #expect(throws: UserBroadcastPush.Refusal.notAUserBroadcastPush) { try UserBroadcastPush.textMessage(from: [4] + good.dropFirst()) }
        #expect(throws: UserBroadcastPush.Refusal.notAUserBroadcastPush) { try UserBroadcastPush.textMessage(from: [3, 1]) }
        #expect(throws: UserBroadcastPush.Refusal.malformed) { try UserBroadcastPush.textMessage(from: Array(good.prefix(12))) }
        #expect(throws: UserBroadcastPush.Refusal.malformed) {
            try UserBroadcastPush.textMessage(from: Self.frame(joinRef: "1", ref: "2", topic: "realtime:r", event: "e", payload: Array("{nope".utf8)))
        }
        #expect(throws: UserBroadcastPush.Refusal.rawPayload) {
            try UserBroadcastPush.textMessage(from: Self.frame(joinRef: "1", ref: "2", topic: "realtime:r", event: "e", encoding: 0, payload: [0xff, 0x00]))
        }
        var badUTF8 = good
        badUTF8[7] = 0xff
        #expect(throws: UserBroadcastPush.Refusal.malformed) { try UserBroadcastPush.textMessage(from: badUTF8) }
    }
}
