import CaravanRealtime
import NIOCore

/// A socket's queued frames as one buffer of unmasked server frames (RFC 6455 §5.2), which `RealtimeSocketHandler`
/// writes below NIO's frame encoder and flushes once: one system call for a batch instead of one per frame.
enum ServerWebSocketFrames {
    /// The frames as they go on the wire.
    static func encode(_ frames: [SocketFrame], allocator: ByteBufferAllocator) -> ByteBuffer {
        var size = 0
        for frame in frames {
            switch frame {
            case .text(let text): size += text.utf8.count + 10
            case .binary(let bytes): size += bytes.count + 10
            }
        }
        var buffer = allocator.buffer(capacity: size)
        for frame in frames {
            switch frame {
            case .text(let text):
                writeHeader(opcode: 0x1, length: text.utf8.count, to: &buffer)
                buffer.writeString(text)
            case .binary(let bytes):
                writeHeader(opcode: 0x2, length: bytes.count, to: &buffer)
                buffer.writeBytes(bytes)
            }
        }
        return buffer
    }

    /// FIN and the opcode, then the payload length in 7, 7 + 16 or 7 + 64 bits; no mask (a server's frames).
    static func writeHeader(opcode: UInt8, length: Int, to buffer: inout ByteBuffer) {
        buffer.writeInteger(0x80 | opcode)
        if length < 126 {
            buffer.writeInteger(UInt8(length))
        } else if length <= Int(UInt16.max) {
            buffer.writeInteger(UInt8(126))
            buffer.writeInteger(UInt16(length))
        } else {
            buffer.writeInteger(UInt8(127))
            buffer.writeInteger(UInt64(length))
        }
    }
}
