package import CaravanCore
import Logging
import Synchronization

extension RealtimeHub {
    /// The frames of one delivery for one channel, before the transaction marks are known.
    struct Delivery {
        let outbox: SocketOutbox
        var frames: [PendingFrame] = []
    }

    /// A `postgres_changes` frame whose `data` still lacks its transaction's marks: `payload` is the payload text up to
    /// the closing brace of `data`.
    struct PendingFrame {
        let topic: String
        let payload: String
        let transaction: Int64
        /// Frames of one dispatch with the same `share` have the same payload (one change, one group, the same
        /// binding ids and columns): sockets whose frame would also match in topic, transaction count and protocol
        /// version get one encoded frame.
        let share: Int
    }

    /// What makes two sockets' frames of one dispatch the same text.
    struct EncodedFrameKey: Hashable {
        let share: Int
        let topic: String
        let events: Int
        let version: ProtocolVersion
    }

    /// A member's binding ids and selected columns: members alike get the same payload.
    struct PayloadKey: Hashable {
        let ids: [Int]
        let select: [String]?
    }

    /// One server transaction as one socket receives it.
    struct SocketTransaction: Hashable {
        let socket: Int
        let transaction: Int64
    }

    /// Fans a run of committed changes (in `seq` order) out to the subscribers: each change is checked against each
    /// group's select policy once (old and new row), then against each member's binding filters. A channel's frames
    /// of the whole run are queued at once, or refused at once (then the channel gets the resync signal), so a run —
    /// which the feed makes of whole transactions — is never split.
    ///
    /// Each event's `data` carries its server transaction (`tx`: the `seq` of the transaction's first change) and how
    /// many events of that transaction the socket receives in all, over all its channels, after policy and filters
    /// (`tx_events`): a client can hold a transaction's events until the last has come and apply them together.
    package func dispatch(_ changes: [Change]) async {
        sendVisibilityNotices(changes)
        let subscribed = state.withLock { state in Set(state.groups.keys) }
        var decoded: [DecodedChange] = []
        for change in changes where subscribed.contains(change.table) {
            guard let table = catalog.table(named: change.table) else { continue }
            do {
                decoded.append(try DecodedChange(change, table: table))
            } catch {
                logger.error("realtime: a change-log record does not decode; not delivered", metadata: ["change.seq": "\(change.seq)", "error": "\(error)"])
            }
        }
        guard !decoded.isEmpty else { return }
        let answers = await resolveMemberships(decoded)
        var order: [ChannelID] = []
        var deliveries: [ChannelID: Delivery] = [:]
        var shares = 0
        state.withLock { state in
            for change in decoded {
                for (rule, members) in state.groups[change.table.name] ?? [:] {
                    fanOut(change, rule: rule, members: members, answers: answers, order: &order, into: &deliveries, shares: &shares)
                }
            }
        }
        var events: [SocketTransaction: Int] = [:]
        for (id, delivery) in deliveries {
            for frame in delivery.frames { events[SocketTransaction(socket: id.socket, transaction: frame.transaction), default: 0] += 1 }
        }
        let clock = now()
        var encoded: [EncodedFrameKey: String] = [:]
        for id in order {
            guard let delivery = deliveries[id] else { continue }
            let frames = delivery.frames.map { frame in
                let count = events[SocketTransaction(socket: id.socket, transaction: frame.transaction)] ?? 1
                let key = EncodedFrameKey(share: frame.share, topic: frame.topic, events: count, version: delivery.outbox.version)
                if let text = encoded[key] { return text }
                let payload = frame.payload + ",\"tx\":\(frame.transaction),\"tx_events\":\(count)}}"
                let text = PhoenixCodec.encode(OutboundFrame(joinRef: nil, ref: nil, topic: frame.topic, event: "postgres_changes", payload: payload),
                                               version: delivery.outbox.version)
                encoded[key] = text
                return text
            }
            if delivery.outbox.offer(frames, now: clock) {
                metrics.eventsSent.add(frames.count, ordering: .relaxed)
            } else {
                closeForResync(id, refused: delivery.frames.count)
            }
        }
    }

    /// Visibility changes (wire-protocol §6.1, "moves through another table"): a change to a table that a group's
    /// select policy reads (a membership, a block) that concerns the group — the same analysis as sync pulls make —
    /// gets each member channel one `system` notice, status `ok`, with `pull`: the subscribed tables whose rows may
    /// have moved into or out of view, and the change's `seq`. It carries no row: a Caravan client pulls (rows that
    /// moved in come as upserts, rows that moved out as an eviction); other clients may ignore it.
    func sendVisibilityNotices(_ changes: [Change]) {
        var notices: [ChannelID: (outbox: SocketOutbox, tables: Set<String>, seq: Int64, channel: String?)] = [:]
        var rows: [Int64: (old: ChangeRow?, new: ChangeRow?)] = [:]
        state.withLock { state in
            for (tableName, groups) in state.groups {
                for (rule, members) in groups {
                    for dependency in state.dependencies[tableName]?[rule] ?? [] {
                        for change in changes where change.table == dependency.table.name {
                            let decoded: (old: ChangeRow?, new: ChangeRow?)
                            if let known = rows[change.seq] {
                                decoded = known
                            } else {
                                do {
                                    decoded = (try change.oldRecord.map { (text) throws(CaravanError) in try ChangeRow(json: text, table: dependency.table) },
                                               change.operation == .delete ? nil
                                                   : try change.record.map { (text) throws(CaravanError) in try ChangeRow(json: text, table: dependency.table) })
                                } catch {
                                    logger.error("realtime: a change-log record does not decode; no visibility notice", metadata: ["change.seq": "\(change.seq)", "error": "\(error)"])
                                    continue
                                }
                                rows[change.seq] = decoded
                            }
                            let slices = dependency.slices(old: decoded.old.map { row in row.value }, new: decoded.new.map { row in row.value })
                            guard slices.contains(where: { rule.couldHold(fixing: $0.values) }) else { continue }
                            for (id, member) in members {
                                var notice = notices[id] ?? (member.outbox, [], change.seq, state.channels[id]?.request.channelName)
                                notice.tables.insert(tableName)
                                notice.seq = max(notice.seq, change.seq)
                                notices[id] = notice
                            }
                        }
                    }
                }
            }
        }
        let clock = now()
        for (id, notice) in notices.sorted(by: { $0.key.topic < $1.key.topic }) {
            var payload = SystemPayload.ok("Visibility changed: pull to converge", extension: "postgres_changes", channel: notice.channel ?? id.topic)
            if case .object(var pairs) = payload {
                pairs.append(("pull", .array(notice.tables.sorted().map(JSONValue.string))))
                pairs.append(("seq", .integer(notice.seq)))
                payload = .object(pairs)
            }
            let frame = OutboundFrame(joinRef: nil, ref: nil, topic: id.topic, event: "system", payload: payload)
            if !notice.outbox.offer([PhoenixCodec.encode(frame, version: notice.outbox.version)], now: clock) {
                closeForResync(id, refused: 1)
            }
        }
    }

    /// What `rule` makes of a change: the event the group receives, or nil (moves per wire-protocol §4.4).
    static func visibleEvent(_ change: DecodedChange, rule: BoundPredicate, answers: [MembershipKey: Bool]) -> DeliveredEvent? {
        func admits(_ row: ChangeRow?) -> Bool {
            guard let row else { return false }
            return rule.evaluate(row.value) { table, predicate in answers[MembershipKey(table: table.name, predicate: predicate)] } == true
        }
        switch change.change.operation {
        case .insert:
            return admits(change.new) ? .insert : nil
        case .delete:
            return admits(change.old) ? .delete : nil
        case .update:
            switch (admits(change.old), admits(change.new)) {
            case (true, true): return .update
            case (true, false): return .delete
            case (false, true): return .insert
            case (false, false): return nil
            }
        }
    }

    /// The members' frames of one change that `rule` lets through. The change's `data` is encoded once per set of
    /// selected columns, and each (binding ids, columns) payload once, numbered from `shares`.
    private func fanOut(_ change: DecodedChange, rule: BoundPredicate, members: [ChannelID: Member], answers: [MembershipKey: Bool],
                        order: inout [ChannelID], into deliveries: inout [ChannelID: Delivery], shares: inout Int) {
        guard let type = Self.visibleEvent(change, rule: rule, answers: answers) else { return }
        guard let row = type == .delete ? (change.old ?? change.new) : change.new else { return }
        var data: [[String]?: String] = [:]
        var payloads: [PayloadKey: (payload: String, share: Int)] = [:]
        for (id, member) in members {
            var ids: [Int] = []
            var select: [String]?
            var selectSet = false
            for binding in member.bindings where binding.event.admits(type) && binding.filter.evaluate(row.value) == true {
                ids.append(binding.id)
                if !selectSet { select = binding.select; selectSet = true } else if select != binding.select { select = nil }
            }
            guard !ids.isEmpty else { continue }
            let key = PayloadKey(ids: ids, select: select)
            let shared: (payload: String, share: Int)
            if let known = payloads[key] {
                shared = known
            } else {
                // The `data` object without its closing brace: the transaction's marks follow, per socket.
                let body = data[select] ?? String(self.payloads.data(for: change, as: type, select: select).dropLast())
                data[select] = body
                shared = ("{\"ids\":[" + ids.map(String.init).joined(separator: ",") + "],\"data\":" + body, shares)
                payloads[key] = shared
                shares += 1
            }
            if deliveries[id] == nil {
                deliveries[id] = Delivery(outbox: member.outbox)
                order.append(id)
            }
            deliveries[id]?.frames.append(PendingFrame(topic: id.topic, payload: shared.payload, transaction: change.change.transaction, share: shared.share))
        }
    }

    /// Answers every membership subquery the groups' policies ask about these changes, through `membership`.
    /// Without a reader, or when a read fails (logged), the answer is unknown and the row is not delivered.
    func resolveMemberships(_ changes: [DecodedChange]) async -> [MembershipKey: Bool] {
        var questions: [MembershipKey: TableSchema] = [:]
        state.withLock { state in
            for change in changes {
                for rule in (state.groups[change.table.name] ?? [:]).keys where rule.containsSubquery {
                    for row in [change.new, change.old].compactMap({ $0 }) {
                        _ = rule.evaluate(row.value) { table, predicate in
                            questions[MembershipKey(table: table.name, predicate: predicate)] = table
                            return nil
                        }
                    }
                }
            }
        }
        guard !questions.isEmpty else { return [:] }
        guard let membership else {
            logger.warning("realtime: a select policy needs a membership reader; its rows are not delivered")
            return [:]
        }
        var answers: [MembershipKey: Bool] = [:]
        let reader = await membership.forRound()
        for (key, table) in questions {
            do {
                answers[key] = try await reader.exists(in: table, where: key.predicate)
            } catch {
                logger.error("realtime: a membership read failed; the rows it guards are not delivered", metadata: ["error": "\(error)"])
            }
        }
        return answers
    }
}
