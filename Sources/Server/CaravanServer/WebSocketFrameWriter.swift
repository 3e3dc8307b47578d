import CaravanRealtime
import NIOCore

/// Writes a socket's queued frames to its connection as one buffer, flushed once (one system call for a batch
/// instead of one per frame): the frames are encoded here as unmasked server frames (RFC 6455 §5.2) and written below
/// the WebSocket handlers, at the head of the pipeline. The write completes when the bytes reached the kernel, so a
/// client that stops reading holds it (and realtime's stall check drops the socket).
struct WebSocketFrameWriter: Sendable {
    let channel: any Channel

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

    func write(_ frames: [SocketFrame]) async throws {
        let buffer = Self.encode(frames, allocator: channel.allocator)
        let channel = self.channel
        try await channel.eventLoop.flatSubmit { () -> EventLoopFuture<Void> in
            // The first handler of the pipeline (the connection guard, which only reads): writing from its context
            // reaches the socket directly.
            guard let first = try? channel.pipeline.syncOperations.context(handlerType: ConnectionGuard.self) else {
                return channel.eventLoop.makeFailedFuture(ChannelError.ioOnClosedChannel)
            }
            return first.writeAndFlush(NIOAny(buffer))
        }.get()
    }
}
