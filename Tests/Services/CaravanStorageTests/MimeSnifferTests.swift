import CaravanStorage
import Foundation
import Testing

/// The magic-byte sniffing that bucket MIME limits rely on: a claimed type is believed only as far as the bytes bear
/// it out.
@Suite struct MimeSnifferTests {
    static let jpeg = Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10]) + Data("JFIF".utf8)
    static let png = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00])
    static let gif = Data("GIF89a....".utf8)
    static let webp = Data("RIFF".utf8) + Data([0x10, 0, 0, 0]) + Data("WEBPVP8 ".utf8)
    static let pdf = Data("%PDF-1.7\n".utf8)

    @Test(arguments: [
        (jpeg, "image/jpeg"), (png, "image/png"), (gif, "image/gif"), (webp, "image/webp"), (pdf, "application/pdf"),
        (Data("hello, world\n".utf8), "text/plain"), (Data(#"{"a": [1, 2]}"#.utf8), "application/json"),
        (Data("[1, 2".utf8), "text/plain"), (Data([0x00, 0x01, 0x02, 0xFE]), "application/octet-stream"),
        (Data([0xC3, 0x28]), "application/octet-stream"), (Data("مرحبا".utf8), "text/plain"),
    ])
    func sniffsTheBytes(bytes: Data, expected: String) {
        #expect(MimeSniffer.sniff(bytes) == expected)
    }

    @Test func aClaimedSignatureTypeMustBeInTheBytes() {
        #expect(MimeSniffer.effectiveType(claimed: "image/jpeg", bytes: Data("not a jpeg".utf8)) == "text/plain")
        #expect(MimeSniffer.effectiveType(claimed: "image/jpeg", bytes: Data([0x00, 0x01, 0x02])) == "application/octet-stream")
        #expect(MimeSniffer.effectiveType(claimed: "image/jpeg", bytes: Self.jpeg) == "image/jpeg")
        // Bytes that carry a signature are what they show, whatever the claim.
        #expect(MimeSniffer.effectiveType(claimed: "text/plain", bytes: Self.png) == "image/png")
        #expect(MimeSniffer.effectiveType(claimed: "image/jpeg", bytes: Self.png) == "image/png")
    }

    @Test func textClaimsAreBelievedForText() {
        #expect(MimeSniffer.effectiveType(claimed: "text/csv; charset=utf-8", bytes: Data("a,b\n1,2\n".utf8)) == "text/csv")
        #expect(MimeSniffer.effectiveType(claimed: "application/json", bytes: Data(#"{"ok":true}"#.utf8)) == "application/json")
        #expect(MimeSniffer.effectiveType(claimed: "application/json", bytes: Data("{not json".utf8)) == "text/plain")
        #expect(MimeSniffer.effectiveType(claimed: nil, bytes: Data("plain".utf8)) == "text/plain")
        // A type Caravan cannot recognise is taken as claimed for binary bytes, never for text.
        #expect(MimeSniffer.effectiveType(claimed: "video/mp4", bytes: Data([0x00, 0x00, 0x00, 0x18, 0x66, 0x74])) == "video/mp4")
        #expect(MimeSniffer.effectiveType(claimed: "video/mp4", bytes: Data("just text".utf8)) == "text/plain")
    }

    @Test func allowedTypesMatchExactlyOrByWildcard() {
        #expect(MimeSniffer.isAllowed("image/jpeg", by: ["image/jpeg"]))
        #expect(MimeSniffer.isAllowed("image/png", by: ["image/*"]))
        #expect(!MimeSniffer.isAllowed("text/plain", by: ["image/*"]))
        #expect(MimeSniffer.isAllowed("text/plain", by: nil))
        #expect(MimeSniffer.isAllowed("text/plain", by: []))
        #expect(MimeSniffer.isAllowed("IMAGE/JPEG", by: ["image/jpeg"]))
        #expect(!MimeSniffer.isAllowed("image/png", by: ["image/jpeg"]))
    }
}
