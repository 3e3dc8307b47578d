@testable import CaravanCLI
import CaravanCore
import CaravanHost
import CaravanTesting
import Foundation
import Logging
import Places
import ServiceLifecycle
import Testing

/// `caravan bench realtime`: its counting (a synthetic delivery stream with a lost and a duplicated event), its
/// percentiles against a sorted-array oracle, its time parsing, and one short run against an in-process server.
@Suite struct RealtimeBenchTests {
    @Test func aDroppedAndADuplicatedEventAreCountedAsMissingAndDuplicate() {
        var ledger = RealtimeDeliveryLedger()
        // Two users, three sockets: ada has 0 and 1, bob has 2.
        ledger.subscribed(socket: 0, user: "ada")
        ledger.subscribed(socket: 1, user: "ada")
        ledger.subscribed(socket: 2, user: "bob")
        let rows = [("r1", "ada"), ("r2", "bob"), ("r3", "ada"), ("r4", "bob")]
        // Every (socket, row) pair the owner policy lets through is delivered once, except (1, r3), which is lost;
        // (2, r2) arrives twice; one receipt outruns its write's answer.
        ledger.wrote(row: "r1", owner: "ada")
        var latency = 1.0
        for (row, owner) in rows {
            for socket in owner == "ada" ? [0, 1] : [2] where !(socket == 1 && row == "r3") {
                ledger.received(socket: socket, row: row, commitToReceiptMs: latency, sendToReceiptMs: latency + 10)
                latency += 1
            }
            if row != "r1" { ledger.wrote(row: row, owner: owner) }
        }
        ledger.received(socket: 2, row: "r2", commitToReceiptMs: 100, sendToReceiptMs: 100)
        // Bob's socket receiving ada's row is a leak of the policy, not a delivery.
        ledger.received(socket: 2, row: "r1", commitToReceiptMs: 1, sendToReceiptMs: 1)

        let report = ledger.report()
        #expect(report.rows == 4)
        #expect(report.expected == 6)  // r1 and r3 to two sockets each, r2 and r4 to one
        #expect(report.received == 5)
        #expect(report.missing == 1)
        #expect(report.duplicates == 1)
        #expect(report.unexpected == 1)
        // The duplicate's latency is not counted again.
        #expect(report.commitToReceiptMs.max == 5)
    }

    @Test func percentilesAreTheNearestRankOfTheSortedValues() {
        var generator = SplitMix64(state: 37)
        for count in [1, 2, 99, 100, 101, 1_000] {
            let values = (0..<count).map { _ in Double(Int.random(in: 0..<10_000, using: &generator)) / 7 }
            let summary = LatencySummary(values)
            let sorted = values.sorted()
            // The oracle: the first value of the sorted array with at least p % of the values at or below it.
            func oracle(_ percent: Double) -> Double {
                sorted.first { value in Double(sorted.filter { $0 <= value }.count) >= percent / 100 * Double(count) }!
            }
            #expect(summary.p50 == oracle(50), "count \(count)")
            #expect(summary.p99 == oracle(99), "count \(count)")
            #expect(summary.max == sorted.last)
        }
        #expect(LatencySummary([]).p99 == nil)
    }

    @Test func bothServersTimesReadAsEpochSeconds() throws {
        let caravan = try #require(epochSeconds(iso: "2026-12-07T02:10:58.123Z"))
        let expected = try #require(ISO8601DateFormatter().date(from: "2026-12-07T02:10:58Z")).timeIntervalSince1970 + 0.123
        #expect(abs(caravan - expected) < 1e-6)
        #expect(epochSeconds(iso: "2026-12-07 02:10:58.123Z") == caravan)  // PocketBase's form
        #expect(epochSeconds(iso: "yesterday") == nil)
    }

    /// The harness against the places app in-process: 4 sockets of 2 users, 2 writers for about 2 s; every event
    /// the owner policy lets through arrives once.
    @Test(arguments: ["1.0.0", "2.0.0"])
    func aShortRunAgainstAnInProcessServerReceivesEveryEventOnce(vsn: String) async throws {
        try await Self.withServer { serving in
            let options = RealtimeBenchOptions(url: serving.baseURL, target: .caravan, serviceKey: serving.serviceRoleKey, sockets: 4, users: 2,
                                               writers: 2, seconds: vsn == "1.0.0" ? 2 : 1, batch: vsn == "1.0.0" ? 1 : 3, vsn: vsn,
                                               serverPID: getpid(), places: 2000, drain: 5)
            let figures = try await RealtimeLoad.run(options, progress: { _ in })
            #expect(figures["expected"] == figures["received"])
            #expect(figures["rows"] != .integer(0))
            #expect(figures["duplicates"] == .integer(0))
            #expect(figures["missing"] == .integer(0))
            #expect(figures["unexpected"] == .integer(0))
            #expect(figures["commit_to_receipt_p99_ms"] != .null)
            #expect(figures["server_peak_rss_mb"] != .null)
            #expect(figures["harness_cpu_s"] != .null)
        }
    }

    /// `--idle`: 5 sockets opened 2 at a time (three batches) all join and stay open through a short window of
    /// heartbeats; the memory and CPU figures are read.
    @Test func anIdleRunHoldsEverySocketAndReadsTheServersMemory() async throws {
        try await Self.withServer { serving in
            let options = RealtimeBenchOptions(url: serving.baseURL, target: .caravan, serviceKey: serving.serviceRoleKey, sockets: 5, users: 2,
                                               writers: 1, seconds: 0.5, serverPID: getpid(), places: 1, idle: true, heartbeat: 0.1,
                                               openBatch: 2, settle: 0)
            let figures = try await RealtimeLoad.run(options, progress: { _ in })
            #expect(figures["mode"] == .string("idle"))
            #expect(figures["sockets"] == .integer(5))
            #expect(figures["system_errors"] == .integer(0))
            #expect(figures["server_kib_per_socket"] != .null)
            #expect(figures["server_cpu_s"] != .null)
        }
    }

    @Test func socketsOpenInBatchesAndIdleFiguresArePerSocket() {
        #expect(RealtimeLoad.waves(sockets: 5, batch: 2) == [0..<2, 2..<4, 4..<5])
        #expect(RealtimeLoad.waves(sockets: 4, batch: 500) == [0..<4])
        let status = "Name:\tcaravan\nVmHWM:\t  204800 kB\nVmRSS:\t  102400 kB\n"
        #expect(ProcessFigures.kibibytes("VmRSS", in: status) == 102_400)
        #expect(ProcessFigures.kibibytes("VmHWM", in: status) == 204_800)
        #expect(ProcessFigures.kibibytes("VmSwap", in: status) == nil)
        // 10,000 sockets that grew the server from 100 MiB to 256.25 MiB: 16 KiB each; 60 s of heartbeats every 25 s.
        let figures = RealtimeIdleFigures(sockets: 10_000, seconds: 60, heartbeat: 25, rssBeforeMB: 100, rssJoinedMB: 250, rssAfterMB: 256.25,
                                          serverCPU: 3, harnessCPU: 1, systemErrors: 0)
        #expect(figures.kibPerSocket == 16)
        #expect(figures.heartbeats == 24_000)
        #expect(figures.cpuPerMinutePerThousand == 0.3)
        // The writers write where --write-url says (another instance), else to --url.
        #expect(RealtimeBenchOptions(url: "http://one/", target: .caravan, sockets: 1, users: 1, writers: 1, seconds: 1).writeURL == "http://one")
        #expect(RealtimeBenchOptions(url: "http://two", target: .caravan, sockets: 1, users: 1, writers: 1, seconds: 1, writeURL: "http://one/").writeURL
                    == "http://one")
    }

    /// Runs `body` against the places app served in-process on a free port.
    static func withServer(_ body: (CaravanHost.Serving) async throws -> Void) async throws {
        let logger = Logger(label: "caravan.test") { _ in SwiftLogNoOpLogHandler() }
        let settings = ["port": "0", "data_dir": temporaryDirectory(), "auth_bcrypt_cost": "4"]
        let host = try CaravanHost(configuration: .init(settings: settings), apps: [PlacesModule.module], logger: logger)
        let group = ServiceGroup(configuration: .init(services: [host], logger: logger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            do {
                try await body(try await host.serving())
            } catch {
                await group.triggerGracefulShutdown()
                throw error
            }
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
    }
}
