package import Logging
package import ServiceLifecycle
import Synchronization

/// Code deliveries that follow an answer already given. With sign-ups off, the code endpoints (`/otp`, `/recover`,
/// `/resend`) answer a known address as they answer an unknown one — at once, alike — and the code is issued and sent
/// here: neither a slow mail server nor a failed delivery tells a caller that an address has an account. A failure is
/// logged, never answered.
///
/// At most `capacity` deliveries are under way; past it, a new one is dropped and logged (the caller may ask again).
/// A service of the server's group: graceful shutdown waits for the deliveries under way.
package final class DeferredCodeDeliveries: Service, Sendable {
    private struct State {
        var next = 0
        var running: [Int: Task<Void, Never>] = [:]
    }

    private let state = Mutex(State())
    private let capacity: Int
    private let logger: Logger

    package init(capacity: Int = 256, logger: Logger) {
        self.capacity = capacity
        self.logger = logger
    }

    /// Starts `delivery` without waiting for it; `false` when `capacity` deliveries are already under way.
    @discardableResult
    package func submit(_ delivery: @escaping @Sendable () async throws -> Void) -> Bool {
        let started = state.withLock { state in
            guard state.running.count < capacity else { return false }
            let key = state.next
            state.next += 1
            state.running[key] = Task { [self] in
                do {
                    try await delivery()
                } catch {
                    logger.error("auth code not delivered", metadata: ["error": .string("\(error)")])
                }
                _ = self.state.withLock { $0.running.removeValue(forKey: key) }
            }
            return true
        }
        if !started {
            logger.error("auth code delivery dropped: too many deliveries under way", metadata: ["capacity": .stringConvertible(capacity)])
        }
        return started
    }

    /// Waits until every delivery submitted before the call has finished.
    package func settled() async {
        let running = state.withLock { Array($0.running.values) }
        for task in running { await task.value }
    }

    /// Runs until graceful shutdown or cancellation, then waits for the deliveries under way.
    package func run() async throws {
        try? await gracefulShutdown()
        await settled()
    }
}
