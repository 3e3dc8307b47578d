package import CaravanCore
import Foundation

/// Frozen migrations of the LanguageExchange module, in `Sources/Apps/LanguageExchange/LanguageExchange/Migrations/<dialect>/<id>.sql`,
/// rendered from the declarations (`MigrationDriftTests` re-renders them). Never edit a shipped file; append.
package enum LanguageExchangeMigrations {
    package static let all: [Migration] = [
        MigrationFiles(embedded: EmbeddedFiles.contents).migration("language-exchange-0001-create", changes: LanguageExchangeSchema.tables.map { .createTable($0) }),
        MigrationFiles(embedded: EmbeddedFiles.contents).migration("language-exchange-0002-match-order",
                                                  changes: [.createIndex(LanguageExchangeSchema.profilesByNativeActivity, on: LanguageExchangeSchema.profiles)]),
    ]
}

/// LangMatcher as a module of Caravan: language-exchange profiles, matching, atomic swipes, conversations and
/// messages with their stats, saved phrases, preferences (blocks), analytics events and the translation cache.
package enum LanguageExchangeModule {
    /// The module on `clock` (the server's; tests inject a fixed one), translating with `translator` (none: every
    /// cache miss of `translate` is `upstreamFailure`).
    package static func make(clock: WallClock = .system, translator: (any Translator)? = nil) -> AppModule {
        AppModule(
            name: "language_exchange",
            tables: LanguageExchangeSchema.tables,
            migrations: LanguageExchangeMigrations.all,
            policies: LanguageExchangePolicies.all,
            functions: functions(clock: clock),
            behaviours: LanguageExchangeBehaviours.all,
            asyncFunctions: [TranslateFunction.make(translator: translator ?? UnconfiguredTranslator())],
            clientCaches: clientCaches, buckets: [LanguageExchangeBuckets.avatars],
            edgeFunctions: [TranslateMessageFunction.make(translator: translator ?? UnconfiguredTranslator())]
        )
    }

    /// What a LangMatcher device keeps (the design's client cache): the last 100 messages of each conversation,
    /// messages for 90 days, profiles read from the server for 24 hours, 1,000 translations and 20 MiB of profile
    /// photos (`avatars` attachments), least recently used out. Messages and photos not yet sent are never removed.
    package static let clientCaches: [CacheRule] = [
        .keepLast(table: "messages", count: 100, groupedBy: "conversation_id", orderedBy: "created_at"),
        .purgeOlderThan(table: "messages", column: "created_at", seconds: 90 * 86_400),
        .timeToLive(table: "profiles", seconds: 86_400),
        .leastRecentlyUsed(cache: translationsCache, maxEntries: 1_000),
        .attachments(maxBytes: 20 << 20),
    ]

    /// The client's key-value cache of `translate` results.
    package static let translationsCache = "translations"


    static func functions(clock: WallClock) -> [RPCFunction] {
        [MatchFunctions(clock: clock).findLanguageMatches, SwipeFunctions.processSwipe, ConversationFunctions.markRead, ConversationFunctions.unmatch]
    }

    /// The module on the system clock.
    package static let module = make()
}
