@testable import CaravanHost
import CaravanCore
import CaravanTesting
import Foundation
@testable import GroupDecisions
import Logging
import Testing

/// Item 3's background expiry: `caravan serve` adds the `ScheduledRPCService` of `expire_decisions` to its service
/// group when GroupDecisions is served; run here on a real store, it settles a decision whose deadline passed
/// without anyone calling the RPC or reading the decision.
@Suite("GroupDecisions expiry service")
struct ExpiryServiceTests {
    @Test("the scheduled service expires an overdue decision on its own", arguments: Engine.allCases)
    func expiresInTheBackground(engine: Engine) async throws {
        let f = try await F(engine: engine)
        let (_, collection) = try await DecisionFunctionsTests.seed(f)
        let id = try await DecisionFunctionsTests.create(f, "manual", collection: collection)
        let services = try ScheduledRPCService.services(catalog: f.catalog, pipeline: f.pipeline, clock: ContinuousClock(),
                                                    logger: Logger(label: "expiry-test"))
        #expect(services.count == 1, "expire_decisions is scheduled when the module is in the catalog")
        let scheduled = try #require(services.first as? ScheduledRPCService<ContinuousClock>)
        #expect(scheduled.function.name == "expire_decisions")
        #expect(scheduled.interval == .seconds(60))
        f.now.advance(seconds: 3601)
        // The same service on a short interval, so the test need not wait a minute for a second tick.
        let service = ScheduledRPCService(function: scheduled.function, pipeline: f.pipeline, catalog: f.catalog,
                                          interval: .milliseconds(50), clock: ContinuousClock(), logger: scheduled.logger)
        let running = Task { try await service.run() }
        defer { running.cancel() }
        var status: Value?
        for _ in 0..<200 {
            status = try await f.rows(S.decisions, where: try S.decisions.equals("id", .text(id))).first?["status"]
            if status == .text("expired") { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(status == .text("expired"))
    }

}
