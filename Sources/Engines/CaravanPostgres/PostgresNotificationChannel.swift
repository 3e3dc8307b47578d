import CaravanCore
package import Logging
import PostgresNIO
package import ServiceLifecycle

/// A `LISTEN`/`NOTIFY` channel shared by every instance of a deployment (realtime broadcast across instances).
///
/// `notify` sends a payload through the store's pool (`pg_notify`, at most 8000 bytes: longer payloads are refused,
/// as PostgreSQL would). `run()` (a Service) keeps a dedicated connection listening and yields every payload on
/// `payloads` — this instance's own included, so receivers skip what they sent themselves (put an origin in the
/// payload). Notifications sent while the listener is reconnecting are lost: broadcast is fire-and-forget, as in
/// Supabase.
package final class PostgresNotificationChannel: Service {
    package let name: String
    /// Every payload received, in arrival order.
    package let payloads: AsyncStream<String>
    private let continuation: AsyncStream<String>.Continuation
    private let store: PostgresStore
    private let logger: Logger

    package init(store: PostgresStore, name: String, logger: Logger) {
        self.store = store
        self.name = name
        self.logger = logger
        (payloads, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(10_000))
    }

    /// Sends `payload` to every listener of the channel.
    package func notify(_ payload: String) async throws {
        guard payload.utf8.count < 8000 else {
            throw CaravanError(.invalidValue, "A broadcast payload must be under 8000 bytes across instances")
        }
        let channel = name
        let logger = self.logger
        try await store.withConnection { connection in
            _ = try await connection.query("SELECT pg_notify(\(channel), \(payload))", logger: logger).collect()
        }
    }

    package func run() async throws {
        do {
            try await cancelWhenGracefulShutdown { try await self.listenForever() }
        } catch is CancellationError {
            // Cancellation and graceful shutdown are how the listener stops.
        }
        continuation.finish()
    }

    private func listenForever() async throws {
        var backoff: Duration = .milliseconds(100)
        while true {
            do {
                try await listenOnce { backoff = .milliseconds(100) }
            } catch {
                if Task.isCancelled { throw CancellationError() }
                logger.info("notification listener lost its connection; reconnecting", metadata: ["error": "\(String(reflecting: error))"])
            }
            try await Task.sleep(for: backoff)
            backoff = min(backoff * 2, .seconds(5))
        }
    }

    /// One connection's life: LISTEN, then yield payloads until the connection ends.
    private func listenOnce(onListening: () -> Void) async throws {
        let connection = try await store.connectToPrimary(id: 1, logger: logger)
        do {
            try await connection.listen(on: name) { notifications in
                onListening()
                for try await notification in notifications { continuation.yield(notification.payload) }
            }
        } catch {
            // The connection may already be gone; closing it is cleanup, the original error is the news.
            do { try await connection.close() } catch let closeError {
                logger.debug("closing the notification connection failed", metadata: ["error": "\(closeError)"])
            }
            throw error
        }
        try await connection.close()
    }
}
