import CaravanRealtime
@testable import CaravanServer
import NIOCore
import Testing

/// The realtime socket writer's frames against the unmasked examples of RFC 6455 §5.7, several frames in one buffer.
@Suite struct ServerWebSocketFramesTests {
    @Test func framesAreTheRFCExamplesBackToBack() {
        let medium = [UInt8](repeating: 7, count: 256)
        let large = [UInt8](repeating: 9, count: 65_536)
        let buffer = ServerWebSocketFrames.encode([.text("Hello"), .binary(medium), .binary(large)], allocator: ByteBufferAllocator())
        let bytes = Array(buffer.readableBytesView)
        // "A single-frame unmasked text message": 0x81 0x05 "Hello".
        #expect(Array(bytes[0..<7]) == [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f])
        // "256 bytes binary message in a single unmasked frame": 0x82 0x7E 0x0100.
        #expect(Array(bytes[7..<11]) == [0x82, 0x7E, 0x01, 0x00])
        #expect(Array(bytes[11..<267]) == medium)
        // "64KiB binary message in a single unmasked frame": 0x82 0x7F 0x0000000000010000.
        #expect(Array(bytes[267..<277]) == [0x82, 0x7F, 0, 0, 0, 0, 0, 0x01, 0, 0])
        #expect(Array(bytes[277...]) == large)
    }
}
