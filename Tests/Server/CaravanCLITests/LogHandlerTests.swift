@testable import CaravanCLI
import Logging
import Synchronization
import Testing

/// Collects what a handler writes.
final class CollectedLines: Sendable {
    private let lines = Mutex<[String]>([])
    var all: [String] { lines.withLock { $0 } }
    func write(_ string: String) { lines.withLock { $0.append(string) } }
}

struct CollectingStream: TextOutputStream, Sendable {
    let sink: CollectedLines
    mutating func write(_ string: String) { sink.write(string) }
}

@Suite("Log handler")
struct LogHandlerTests {
    /// The same logger calls through swift-log's StreamLogHandler and through the deferred handler write the same
    /// lines (the timestamp aside), metadata set on the logger, per message and by a provider included.
    @Test func writesWhatStreamLogHandlerWrites() {
        let reference = CollectedLines()
        let deferred = CollectedLines()
        let provider = Logger.MetadataProvider { ["trace": "t-1"] }
        var loggers = [
            Logger(label: "caravan") { StreamLogHandler(label: $0, stream: CollectingStream(sink: reference), metadataProvider: provider) },
            Logger(label: "caravan") { DeferredFormattingLogHandler(label: $0, stream: CollectingStream(sink: deferred), metadataProvider: provider) },
        ]
        for index in loggers.indices {
            loggers[index].logLevel = .info
            loggers[index][metadataKey: "request.id"] = "abc"
            loggers[index][metadataKey: "hb.request.id"] = "7"
            loggers[index][metadataKey: "request.id"] = "def"
            loggers[index].debug("not written")
            loggers[index].info("request", metadata: ["http.status": "200", "duration_ms": "1.5"])
            loggers[index][metadataKey: "hb.request.id"] = nil
            loggers[index].warning("slow")
        }
        func withoutTimestamp(_ lines: [String]) -> [String] { lines.map { String($0.drop { $0 != " " }) } }
        #expect(deferred.all.count == 2)
        #expect(withoutTimestamp(deferred.all) == withoutTimestamp(reference.all))
        #expect(deferred.all.first?.contains("duration_ms=1.5 hb.request.id=7 http.status=200 request.id=def trace=t-1") == true)
    }
}
