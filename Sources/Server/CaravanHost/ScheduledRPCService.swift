import CaravanCore
import Logging
import ServiceLifecycle

/// Runs an app's maintenance RPC (such as GroupDecisions' `expire_decisions`) as the service role every `interval`,
/// as a service of `caravan serve`'s group; the first run is at start. A failed run is logged and retried at the
/// next tick. Several instances may run it at once: the function itself must be safe for that (conditional updates).
struct ScheduledRPCService<C: Clock<Duration>>: Service {
    let function: RPCFunction
    let pipeline: WritePipeline
    let catalog: Catalog
    let interval: Duration
    let clock: C
    let logger: Logger

    func run() async throws {
        while !Task.isCancelled && !Task.isShuttingDownGracefully {
            do {
                let function = self.function
                let result = try await pipeline.run(catalog.access(for: .serviceRole)) { tx in try await function.body(RPCArguments([:]), tx) }
                if case .scalar(.integer(let changed)) = result, changed > 0 {
                    logger.info("scheduled function ran", metadata: ["rpc.name": .string(function.name), "rpc.changed": .stringConvertible(changed)])
                }
            } catch is CancellationError {
                return
            } catch {
                logger.error("scheduled function failed", metadata: ["rpc.name": .string(function.name), "error": "\(String(reflecting: error))"])
            }
            do {
                try await cancelWhenGracefulShutdown { try await clock.sleep(for: interval) }
            } catch {
                return
            }
        }
    }

    /// The services of the scheduled functions the served modules declare (`AppModule.schedules`), such as
    /// GroupDecisions' `expire_decisions` every minute. A schedule naming no function of the catalog is refused.
    static func services(catalog: Catalog, pipeline: WritePipeline, clock: C, logger: Logger) throws -> [any Service] {
        try catalog.modules.flatMap(\.schedules).map { schedule in
            ScheduledRPCService(function: try catalog.requireFunction(schedule.function), pipeline: pipeline, catalog: catalog,
                                interval: schedule.interval, clock: clock, logger: logger)
        }
    }
}
