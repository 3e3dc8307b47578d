package import CaravanCore
import Logging

extension RealtimeHub {
    /// What a channel may do: everything on a public channel (or for the service role); on a private one, what the
    /// `realtime.messages` policies admit for its identity and channel name — select to receive, insert to send,
    /// each for broadcast and for presence. Membership subqueries are read through the store; a policy that does not
    /// resolve, or a read that fails, admits nothing (logged).
    package func permissions(for request: ChannelRequest) async -> ChannelPermissions {
        guard request.isPrivate, request.identity.role != .serviceRole else { return .all }
        let channel = request.channelName
        return ChannelPermissions(
            readBroadcast: await admits(.select, channel: channel, extension: .broadcast, identity: request.identity),
            readPresence: await admits(.select, channel: channel, extension: .presence, identity: request.identity),
            writeBroadcast: await admits(.insert, channel: channel, extension: .broadcast, identity: request.identity),
            writePresence: await admits(.insert, channel: channel, extension: .presence, identity: request.identity))
    }

    /// Whether `identity` may send a broadcast to the private channel `channel` without a socket (the REST endpoint).
    package func maySendPrivately(to channel: String, identity: Identity) async -> Bool {
        guard identity.role != .serviceRole else { return true }
        return await admits(.insert, channel: channel, extension: .broadcast, identity: identity)
    }

    private func admits(_ command: PolicyCommand, channel: String, extension kind: RealtimeMessages.Extension, identity: Identity) async -> Bool {
        let rule: BoundPredicate
        do {
            rule = try catalog.policies.rule(command, on: RealtimeMessages.schema, for: identity, catalog: catalog, forCheck: command == .insert)
        } catch {
            logger.error("realtime: a realtime.messages policy does not resolve", metadata: ["error": "\(error)"])
            return false
        }
        let row = RealtimeMessages.row(channel: channel, extension: kind)
        var questions: [MembershipKey: TableSchema] = [:]
        _ = rule.evaluate(row) { table, predicate in
            questions[MembershipKey(table: table.name, predicate: predicate)] = table
            return nil
        }
        var answers: [MembershipKey: Bool] = [:]
        if !questions.isEmpty {
            guard let membership else {
                logger.warning("realtime: a realtime.messages policy needs a membership reader; refused")
                return false
            }
            let reader = await membership.forRound()
            for (key, table) in questions {
                do {
                    answers[key] = try await reader.exists(in: table, where: key.predicate)
                } catch {
                    logger.error("realtime: a membership read failed; the private channel is refused", metadata: ["error": "\(error)"])
                    return false
                }
            }
        }
        return rule.evaluate(row) { table, predicate in answers[MembershipKey(table: table.name, predicate: predicate)] } == true
    }
}
