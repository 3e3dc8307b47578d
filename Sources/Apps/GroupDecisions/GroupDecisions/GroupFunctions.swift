import CaravanCore
import Foundation

/// Errors of the module's RPCs beyond `CaravanError.invalidArgument` and `.denied`: stable codes, the field named
/// in `details`.
enum RPCFailure {
    /// P0001: the state of the data forbids it (a closed decision, a deadline passed).
    static func raised(_ field: String, _ message: String) -> CaravanError {
        CaravanError(.raisedException, "\(field): \(message)", details: "field \(field)")
    }
}

extension StoreTransaction {
    /// The role (`admin` / `member`) of `user` in `group`, read as the service role, or nil.
    func membership(of user: String, in group: Value) async throws -> String? {
        let members = GroupDecisionsSchema.groupMembers
        return try await asServiceRole { tx in
            try await tx.rows(members, ["role"], where: try members.matching(["group_id": group, "user_id": .text(user)])).first?[0].textValue
        }
    }

    /// 42501 unless `user` is an admin of `group`.
    func requireAdmin(_ user: String, of group: Value) async throws {
        guard try await membership(of: user, in: group) == "admin" else {
            throw CaravanError.denied("group_id", "only an admin of the group may do this")
        }
    }
}

/// `create_group`, `add_member`, `remove_member`, `leave_group`.
enum GroupFunctions {
    static let createGroup = RPCFunction(
        "create_group", parameters: [RPCParameter("name", .text), RPCParameter("description", .text, default: .null)], readOnly: false
    ) { arguments, tx in
        let caller = try tx.requireCaller("create_group")
        guard let name = arguments.text("name"), !name.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw CaravanError.invalidArgument("name", arguments.text("name"), "a group needs a name")
        }
        let id = try await tx.asServiceRole { service -> Value in
            let users = GroupDecisionsSchema.users
            guard try await service.count(users, where: try users.equals("id", .text(caller))) == 1 else {
                throw RPCFailure.raised("user_id", "create your profile (users) first")
            }
            let group = try await service.insert([RowValues(["name": .text(name), "description": arguments["description"], "created_by": .text(caller)])],
                                           into: GroupDecisionsSchema.groups, conflict: nil)
            guard let id = group.rows.first?[GroupDecisionsSchema.groups.position(of: "id") ?? 0] else {
                throw CaravanError(.internalFailure, "create_group wrote no row")
            }
            _ = try await service.insert([RowValues(["group_id": id, "user_id": .text(caller), "role": .text("admin")])],
                                   into: GroupDecisionsSchema.groupMembers, conflict: nil)
            return id
        }
        return .scalar(id)
    }

    static func addMember(notifier: Notifier) -> RPCFunction {
        RPCFunction("add_member", parameters: [RPCParameter("group_id", .uuid), RPCParameter("user_id", .uuid),
                                               RPCParameter("role", .text, default: .text("member"))], readOnly: false) { arguments, tx in
            let caller = try tx.requireCaller("add_member")
            try await tx.requireAdmin(caller, of: arguments["group_id"])
            guard let role = arguments.text("role"), ["admin", "member"].contains(role) else {
                throw CaravanError.invalidArgument("role", arguments.text("role"), "must be admin or member")
            }
            guard let user = arguments.text("user_id") else { throw CaravanError.invalidArgument("user_id", nil, "required") }
            _ = try await tx.insert([RowValues(["group_id": arguments["group_id"], "user_id": .text(user), "role": .text(role)])],
                              into: GroupDecisionsSchema.groupMembers, conflict: nil)
            let groupName = try await tx.asServiceRole { service in
                try await service.rows(GroupDecisionsSchema.groups, ["name"], where: try GroupDecisionsSchema.groups.equals("id", arguments["group_id"])).first?[0].textValue
            }
            try await notifier.notify(.groupInvitation, users: [user], title: "Group invitation",
                                message: "You were added to \(groupName ?? "a group")",
                                data: ["groupId": arguments["group_id"].textValue ?? ""], in: tx)
            return .void
        }
    }

    static let removeMember = RPCFunction(
        "remove_member", parameters: [RPCParameter("group_id", .uuid), RPCParameter("user_id", .uuid)], readOnly: false
    ) { arguments, tx in
        let caller = try tx.requireCaller("remove_member")
        try await tx.requireAdmin(caller, of: arguments["group_id"])
        let members = GroupDecisionsSchema.groupMembers
        let removed = try await tx.delete(from: members, where: try members.matching(["group_id": arguments["group_id"], "user_id": arguments["user_id"]]))
        guard removed.deleted == 1 else { throw CaravanError.invalidArgument("user_id", arguments.text("user_id"), "not a member of the group") }
        return .void
    }

    static let leaveGroup = RPCFunction("leave_group", parameters: [RPCParameter("group_id", .uuid)], readOnly: false) { arguments, tx in
        let caller = try tx.requireCaller("leave_group")
        let members = GroupDecisionsSchema.groupMembers
        let left = try await tx.delete(from: members, where: try members.matching(["group_id": arguments["group_id"], "user_id": .text(caller)]))
        guard left.deleted == 1 else { throw CaravanError.invalidArgument("group_id", arguments.text("group_id"), "you are not a member of the group") }
        return .void
    }
}
