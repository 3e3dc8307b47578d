public import CaravanCore
public import Logging
import ServiceLifecycle

extension CaravanHost {
    /// Runs a host of `apps` over `settings` in a service group of its own while `body` runs with its address, then
    /// shuts it down gracefully, whether `body` returned or threw: a server for the length of a test or a tool.
    public nonisolated(nonsending) static func withServing<Result>(_ settings: [String: String], apps: [AppModule], logger: Logger,
                                           _ body: (Serving) async throws -> Result) async throws -> Result {
        let host = try CaravanHost(configuration: .init(settings: settings), apps: apps, logger: logger)
        let group = ServiceGroup(configuration: .init(services: [host], logger: logger))
        return try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let result: Result
            do {
                result = try await body(try await host.serving())
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            return result
        }
    }
}
