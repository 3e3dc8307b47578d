import ArgumentParser
import CaravanCLI
import CaravanCore
import CaravanDeployment
import Foundation
import LanguageExchange

/// The profile ids of a deployment, in id order (every one, or the first `limit`).
func profileIDs(_ store: any Store, limit: Int? = nil) async throws -> [String] {
    let profiles = LanguageExchangeSchema.profiles
    let result = try await store.fetch(try ReadPlan(table: profiles, query: Query(select: [.column(name: "id", alias: nil, cast: nil)],
                                                                                 order: [OrderTerm(column: "id", direction: .ascending)], limit: limit),
                                                    access: .constant(true), maxRows: nil, includeCount: false))
    return result.rows.compactMap { if case .text(let id) = $0[0] { id } else { nil } }
}

/// A seeded linear congruential draw in 0..<bound.
struct Draw {
    var state: UInt64
    mutating func callAsFunction(_ bound: Int) -> Int {
        state = state &* 6364136223846793005 &+ 1442695040888963407
        return Int((state >> 33) % UInt64(max(1, bound)))
    }
}

/// `caravan bench language-matches`: p50/p99 of `find_language_matches` called in-process as randomly drawn
/// signed-in users (each in its own read-only transaction, as REST does).
struct BenchLanguageMatches: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "language-matches", abstract: "Time find_language_matches in-process.")
    @OptionGroup var data: DataOptions
    @Option(help: "Calls measured.") var samples = 300
    @Option(help: "Seed of the callers drawn.") var seed: UInt64 = 7
    @Option(help: "p_limit.") var limit = 20

    func run() async throws {
        let configuration = try data.resolve()
        let catalog = try languageExchange(try deploymentCatalog(configuration))
        let deployment = try await openDeployment(configuration, logger: makeLogger(level: "warning"))
        let ids = try await profileIDs(deployment.store)
        guard !ids.isEmpty else {
            await deployment.close()
            throw ValidationError("no profiles: run caravan bench generate-profiles first")
        }
        let function = try catalog.requireFunction("find_language_matches")
        var draw = Draw(state: seed)
        let callers = (0..<samples + 20).map { _ in ids[draw(ids.count)] }
        let arguments = try callers.map { try function.bind(["p_user_id": .string($0), "p_limit": .integer(Int64(limit))]) }
        let figures = try await LatencyFigures.measure("find_language_matches", samples: samples) { i in
            try await rpcRowCount(function, arguments[i], store: deployment.store,
                                  access: catalog.access(for: Identity(role: .authenticated, userID: callers[i])))
        }
        // Reference in the same run: the caller's own profile read by id, under the same policy and transaction kind.
        let profiles = LanguageExchangeSchema.profiles
        let reference = try await LatencyFigures.measure("reference", samples: samples) { i in
            let access = catalog.access(for: Identity(role: .authenticated, userID: callers[i]))
            return try await deployment.store.readOnly(access) { tx in
                let mine = BoundPredicate.and([.compare(try profiles.requireColumn("id"), .eq, .text(callers[i])), try tx.access.readRule(profiles)])
                return try await tx.fetch(try ReadPlan(table: profiles, query: Query(), access: mine, maxRows: nil, includeCount: false)).rows.count
            }
        }
        await deployment.close()
        writeStandardOutput("\(ids.count) profiles, \(samples) calls (p_limit \(limit)): p50 \(String(format: "%.2f", figure(figures, 50))) ms, "
            + "p99 \(String(format: "%.2f", figure(figures, 99))) ms, mean rows \(String(format: "%.1f", figures.meanRows)); "
            + "reference (own profile by id): p50 \(String(format: "%.2f", figure(reference, 50))) ms, p99 \(String(format: "%.2f", figure(reference, 99))) ms\n")
    }

    func figure(_ figures: LatencyFigures, _ percent: Int) -> Double { figures.percentile(percent) / 1000 }
}

/// `caravan bench swipes`: `process_swipe` calls per second from `--callers` concurrent in-process callers, each a
/// signed-in user swiping drawn profiles (both sides of each drawn pair swipe, so matches and conversations are
/// written too).
struct BenchSwipes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "swipes", abstract: "Measure process_swipe per second under concurrent callers.")
    @OptionGroup var data: DataOptions
    @Option(help: "Concurrent callers.") var callers = 32
    @Option(help: "Swipes in all.") var swipes = 4000
    @Option(help: "Seed of the pairs drawn.") var seed: UInt64 = 11

    func run() async throws {
        let configuration = try data.resolve()
        let catalog = try languageExchange(try deploymentCatalog(configuration))
        let deployment = try await openDeployment(configuration, logger: makeLogger(level: "warning"))
        let ids = try await profileIDs(deployment.store)
        guard ids.count >= 2 else {
            await deployment.close()
            throw ValidationError("fewer than two profiles: run caravan bench generate-profiles first")
        }
        let function = try catalog.requireFunction("process_swipe")
        var draw = Draw(state: seed)
        var calls: [(user: String, arguments: RPCArguments)] = []
        while calls.count < swipes {
            let a = ids[draw(ids.count)], b = ids[draw(ids.count)]
            if a == b { continue }
            let direction = ["right", "right", "super", "left"][draw(4)]
            calls.append((a, try function.bind(["p_swiper_id": .string(a), "p_swiped_id": .string(b), "p_direction": .string(direction)])))
            calls.append((b, try function.bind(["p_swiper_id": .string(b), "p_swiped_id": .string(a), "p_direction": .string("right")])))
        }
        let pipeline = WritePipeline(store: deployment.store, publisher: ChangePublisher())
        let work = calls
        let callers = max(1, self.callers)
        let started = ContinuousClock.now
        let matched = try await withThrowingTaskGroup(of: Int.self) { group in
            for caller in 0..<callers {
                group.addTask {
                    var matched = 0
                    for index in stride(from: caller, to: work.count, by: callers) {
                        let call = work[index]
                        let result = try await pipeline.run(catalog.access(for: Identity(role: .authenticated, userID: call.user))) { tx in
                            try await function.body(call.arguments, tx)
                        }
                        if case .scalar(.json(let json)) = result, json.contains("\"is_match\":true") { matched += 1 }
                    }
                    return matched
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = seconds(ContinuousClock.now - started)
        // Reference in the same run: as many one-row writes by the same callers (each updates its own last_active).
        let profiles = LanguageExchangeSchema.profiles
        let referenceStarted = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for caller in 0..<callers {
                group.addTask {
                    for index in stride(from: caller, to: work.count, by: callers) {
                        let user = work[index].user
                        _ = try await pipeline.run(catalog.access(for: Identity(role: .authenticated, userID: user))) { tx in
                            try await tx.update(profiles, set: RowValues(["last_active": .text(Timestamp.format(microseconds: Int64(index)))]),
                                          where: .compare(try profiles.requireColumn("id"), .eq, .text(user)))
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let reference = seconds(ContinuousClock.now - referenceStarted)
        await deployment.close()
        writeStandardOutput("\(work.count) process_swipe calls from \(callers) concurrent callers on \(ids.count) profiles in "
            + String(format: "%.2f s: %.0f swipes/s", elapsed, Double(work.count) / elapsed) + " (\(matched) answered is_match); "
            + String(format: "reference (own profile update, same callers): %.0f writes/s", Double(work.count) / reference) + "\n")
    }
}

/// `caravan bench messages`: message inserts per second, each its own transaction as the sender (insert policy
/// checked, conversation stats maintained by the pipeline), from `--callers` concurrent callers each writing to
/// its own conversation (made first through `process_swipe`).
struct BenchMessages: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "messages", abstract: "Measure message inserts per second with the conversation stats kept.")
    @OptionGroup var data: DataOptions
    @Option(help: "Concurrent callers (one conversation each).") var callers = 1
    @Option(help: "Messages in all.") var messages = 2000

    func run() async throws {
        let configuration = try data.resolve()
        let catalog = try languageExchange(try deploymentCatalog(configuration))
        let deployment = try await openDeployment(configuration, logger: makeLogger(level: "warning"))
        let callers = max(1, self.callers)
        // Pairs from the end of the id order, apart from the swipe bench's random draw.
        let ids = try await profileIDs(deployment.store)
        guard ids.count >= 2 * callers else {
            await deployment.close()
            throw ValidationError("needs \(2 * callers) profiles: run caravan bench generate-profiles first")
        }
        let pipeline = WritePipeline(store: deployment.store, publisher: ChangePublisher())
        let swipe = try catalog.requireFunction("process_swipe")
        var conversations: [(sender: String, receiver: String, conversation: String)] = []
        for caller in 0..<callers {
            let a = ids[ids.count - 1 - 2 * caller], b = ids[ids.count - 2 - 2 * caller]
            var conversation = ""
            for (swiper, swiped) in [(a, b), (b, a)] {
                let arguments = try swipe.bind(["p_swiper_id": .string(swiper), "p_swiped_id": .string(swiped), "p_direction": .string("right")])
                let result = try await pipeline.run(catalog.access(for: Identity(role: .authenticated, userID: swiper))) { tx in try await swipe.body(arguments, tx) }
                if case .scalar(.json(let json)) = result, case .object(let pairs) = try JSONParser.parse(json),
                   case .string(let id)? = pairs.first(where: { $0.key == "conversation_id" })?.value { conversation = id }
            }
            guard !conversation.isEmpty else {
                await deployment.close()
                throw ValidationError("the pair \(a), \(b) did not match (blocked or unmatched earlier); use another deployment")
            }
            conversations.append((a, b, conversation))
        }
        let total = messages
        let started = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for caller in 0..<callers {
                let (sender, receiver, conversation) = conversations[caller]
                group.addTask {
                    let access = catalog.access(for: Identity(role: .authenticated, userID: sender))
                    for index in stride(from: caller, to: total, by: callers) {
                        _ = try await pipeline.run(access) { tx in
                            try await tx.insert([RowValues(["conversation_id": .text(conversation), "sender_id": .text(sender), "receiver_id": .text(receiver),
                                                      "original_text": .text("مرحبا! Message \(index) — كيف حالك؟"), "original_language": .text("ar")])],
                                          into: LanguageExchangeSchema.messages, conflict: nil)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = seconds(ContinuousClock.now - started)
        // Reference in the same run: as many saved_phrases inserts (a table without a stats behaviour) by the senders.
        let referenceStarted = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for caller in 0..<callers {
                let sender = conversations[caller].sender
                group.addTask {
                    let access = catalog.access(for: Identity(role: .authenticated, userID: sender))
                    for index in stride(from: caller, to: total, by: callers) {
                        _ = try await pipeline.run(access) { tx in
                            try await tx.insert([RowValues(["user_id": .text(sender), "original_text": .text("مرحبا \(index)"), "translated_text": .text("hello"),
                                                      "language": .text("ar")])], into: LanguageExchangeSchema.savedPhrases, conflict: nil)
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let reference = seconds(ContinuousClock.now - referenceStarted)
        await deployment.close()
        writeStandardOutput("\(total) message inserts (one per transaction, as the sender) from \(callers) callers in "
            + String(format: "%.2f s: %.0f messages/s", elapsed, Double(total) / elapsed)
            + String(format: "; reference (saved_phrases inserts, no stats): %.0f rows/s", Double(total) / reference) + "\n")
    }
}
