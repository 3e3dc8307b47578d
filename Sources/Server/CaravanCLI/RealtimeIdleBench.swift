import CaravanCore
import Foundation

extension RealtimeLoad {
    /// The sockets `0..<sockets` in the order they are opened, `batch` at a time.
    static func waves(sockets: Int, batch: Int) -> [Range<Int>] {
        stride(from: 0, to: sockets, by: max(1, batch)).map { $0..<min(sockets, $0 + max(1, batch)) }
    }

    /// `--idle`: every socket has joined; lets the server settle, reads its resident memory, then holds the sockets
    /// (heartbeats only) for `options.seconds` and reads the server's CPU seconds over that window.
    static func holdIdle(_ options: RealtimeBenchOptions, run: RealtimeRun, rssBefore: Double?,
                         progress: @Sendable (String) -> Void) async throws -> JSONValue {
        progress("\(options.sockets) subscribers joined; settling \(options.settle) s, then idle for \(options.seconds) s")
        try await Task.sleep(for: .seconds(options.settle))
        try run.throwIfFailed()
        let pid = options.serverPID
        let rssJoined = pid.flatMap(ProcessFigures.residentMegabytes)
        let cpuBefore = pid.flatMap(ProcessFigures.cpuSeconds)
        let ownBefore = ProcessFigures.cpuSeconds(getpid())
        let start = ContinuousClock.now
        try await Task.sleep(for: .seconds(options.seconds))
        let elapsed = ContinuousClock.now - start
        try run.throwIfFailed()
        let cpuAfter = pid.flatMap(ProcessFigures.cpuSeconds)
        let ownAfter = ProcessFigures.cpuSeconds(getpid())
        let figures = RealtimeIdleFigures(sockets: options.sockets, seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
                                          heartbeat: options.heartbeat, rssBeforeMB: rssBefore, rssJoinedMB: rssJoined,
                                          rssAfterMB: pid.flatMap(ProcessFigures.residentMegabytes),
                                          serverCPU: cpuBefore.flatMap { before in cpuAfter.map { $0 - before } },
                                          harnessCPU: ownBefore.flatMap { before in ownAfter.map { $0 - before } },
                                          systemErrors: run.systemErrorCount)
        return figures.json(options)
    }
}

/// The figures of an idle run: the server's resident memory before the sockets opened, once they had joined and
/// after the idle window, and its CPU seconds over the window.
struct RealtimeIdleFigures {
    let sockets: Int
    let seconds: Double
    let heartbeat: Double
    let rssBeforeMB: Double?
    let rssJoinedMB: Double?
    let rssAfterMB: Double?
    let serverCPU: Double?
    let harnessCPU: Double?
    let systemErrors: Int

    /// Server memory per socket in KiB: resident growth from before the sockets to the end of the window, per socket.
    var kibPerSocket: Double? {
        guard let before = rssBeforeMB, let after = rssAfterMB ?? rssJoinedMB else { return nil }
        return (after - before) * 1024 / Double(sockets)
    }

    /// Heartbeats the sockets sent over the window (each socket one per `heartbeat` seconds).
    var heartbeats: Double { Double(sockets) * seconds / heartbeat }

    /// Server CPU seconds per minute of idle sockets, per 1,000 sockets.
    var cpuPerMinutePerThousand: Double? {
        serverCPU.map { $0 * 60 / seconds * 1000 / Double(sockets) }
    }

    func json(_ options: RealtimeBenchOptions) -> JSONValue {
        func number(_ value: Double?, places: Double = 10) -> JSONValue {
            value.map { .double(($0 * places).rounded() / places) } ?? .null
        }
        return .object([
            ("target", .string(options.target.rawValue)), ("mode", .string("idle")),
            ("vsn", .string(options.target == .caravan ? options.vsn : "sse")),
            ("sockets", .integer(Int64(sockets))), ("users", .integer(Int64(options.users))), ("seconds", number(seconds, places: 100)),
            ("heartbeat_s", number(heartbeat)), ("heartbeats", .integer(Int64(heartbeats.rounded()))),
            ("system_errors", .integer(Int64(systemErrors))),
            ("server_rss_before_mb", number(rssBeforeMB)), ("server_rss_joined_mb", number(rssJoinedMB)),
            ("server_rss_after_mb", number(rssAfterMB)), ("server_kib_per_socket", number(kibPerSocket)),
            ("server_cpu_s", number(serverCPU, places: 100)),
            ("server_cpu_s_per_minute_per_1000_sockets", number(cpuPerMinutePerThousand, places: 1000)),
            ("harness_cpu_s", number(harnessCPU, places: 100)),
        ])
    }
}
