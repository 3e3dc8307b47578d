import Hummingbird
import NIOCore

extension Request {
    /// The whole body when it holds at most `limit` bytes. A larger body is refused with `tooLarge()` before it is
    /// buffered: at once when `Content-Length` declares more, else as soon as the streamed bytes pass the limit (the
    /// error of NIO's `collect(upTo:)`, and Hummingbird's 413, become the endpoint's own error).
    func body<Refusal: Error>(atMost limit: Int, orElse tooLarge: () -> Refusal) async throws -> ByteBuffer {
        if let declared = headers[.contentLength].flatMap(Int.init), declared > limit { throw tooLarge() }
        do {
            return try await body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw tooLarge()
        } catch let error as HTTPError where error.status == .contentTooLarge {
            throw tooLarge()
        }
    }
}
