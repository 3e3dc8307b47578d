import Logging

/// swift-log's `StreamLogHandler`, except that a logger's metadata is formatted when a message is logged, not each
/// time a key is set. The server sets a request id on every request's logger (Hummingbird's and Caravan's own), and
/// at the default level most requests log nothing: `StreamLogHandler` sorted and formatted the whole metadata on every
/// set, about 3 % of a request's CPU. The output is `StreamLogHandler`'s own: it formats each message.
struct DeferredFormattingLogHandler: LogHandler {
    let label: String
    let stream: any TextOutputStream & Sendable
    var logLevel: Logger.Level = .info
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String, stream: any TextOutputStream & Sendable, metadataProvider: Logger.MetadataProvider? = nil) {
        self.label = label
        self.stream = stream
        self.metadataProvider = metadataProvider
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var handler = StreamLogHandler(label: label, stream: stream, metadataProvider: metadataProvider)
        handler.logLevel = logLevel
        handler.metadata = metadata
        handler.log(event: event)
    }
}

/// Standard error, one write per log line.
struct StandardErrorStream: TextOutputStream, Sendable {
    mutating func write(_ string: String) {
        writeStandardError(string)
    }
}
