package import CaravanCore
import Foundation

/// Frozen migrations of the GroupDecisions module, in `Sources/Apps/GroupDecisions/GroupDecisions/Migrations/<dialect>/<id>.sql`,
/// rendered from the declarations (`MigrationDriftTests` re-renders them). Never edit a shipped file; append.
package enum GroupDecisionsMigrations {
    package static let all: [Migration] = [
        MigrationFiles(embedded: EmbeddedFiles.contents).migration("group-decisions-0001-create", changes: GroupDecisionsSchema.tables.map { table in
            .createTable(table.name == GroupDecisionsSchema.memberProfiles.name ? GroupDecisionsSchema.profilesAt0001 : table)
        }),
        MigrationFiles(embedded: EmbeddedFiles.contents).migration("group-decisions-0002-member-profiles",
                                                  changes: [.renameTable("profiles", to: GroupDecisionsSchema.memberProfiles.name)]),
    ]
}

/// Fork in the Road as a module of Caravan: groups, collections and decisions by random pick, tiered (instant-runoff)
/// voting or manual pick.
package enum GroupDecisionsModule {
    /// The module on `clock` and `random` (the server's; tests inject fixed ones).
    package static func make(clock: WallClock = .system, random: RandomSource = .system) -> AppModule {
        AppModule(
            name: "group_decisions",
            tables: GroupDecisionsSchema.tables,
            migrations: GroupDecisionsMigrations.all,
            policies: GroupDecisionsPolicies.all,
            functions: functions(clock: clock, random: random),
            behaviours: GroupDecisionsBehaviours.all(clock: clock),
            schedules: [ScheduledFunction("expire_decisions", every: .seconds(60))]
        )
    }

    /// The RPC functions of item 3.
    static func functions(clock: WallClock, random: RandomSource) -> [RPCFunction] {
        let notifier = Notifier()
        let decisions = DecisionFunctions(lifecycle: DecisionLifecycle(clock: clock, notifier: notifier), random: random)
        return [GroupFunctions.createGroup, GroupFunctions.addMember(notifier: notifier), GroupFunctions.removeMember, GroupFunctions.leaveGroup]
            + decisions.all
    }

    /// The module on the system clock and random source.
    package static let module = make()
}
