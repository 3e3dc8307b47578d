@testable import CaravanCLI
import CaravanCore
import Foundation
import GroupDecisions
import LanguageExchange
import Places
import Testing
import TravelLog

/// `caravan gen swift`: the shipped apps' records in `Sources/Client/CaravanClientModels` are what their declarations
/// generate today (a table changed without regenerating fails here), and the command writes the same text.
@Suite struct GenSwiftTests {
    static let modelsFolder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources/Client/CaravanClientModels")

    static let shipped = [PlacesModule.module, TravelLogModule.module, GroupDecisionsModule.module, LanguageExchangeModule.module]

    @Test(arguments: shipped.map(\.name))
    func committedRecordsMatchTheirDeclarations(app: String) throws {
        let module = try #require(Self.shipped.first { $0.name == app })
        let file = Self.modelsFolder.appendingPathComponent(SwiftRecordGenerator.moduleTypeName(app) + ".swift")
        let committed = try String(contentsOf: file, encoding: .utf8)
        let generated = try SwiftRecordGenerator.source(for: [module])
        #expect(committed == generated, """
            \(file.lastPathComponent) drifted from app \(app)'s declarations; regenerate it:
              swift run caravan gen swift --apps \(app) --output Sources/Client/CaravanClientModels
            """)
    }

    @Test func everyShippedTableGetsOneSwiftType() throws {
        let text = try SwiftRecordGenerator.source(for: Self.shipped)
        let exposed = Self.shipped.flatMap(\.tables).filter { $0.exposure == .rest }
        #expect(text.components(separatedBy: ": TableRecord {").count - 1 == exposed.count)
    }

    @Test func namesFollowSwiftConventions() {
        #expect(SwiftRecordGenerator.typeName("favorites") == "Favorite")
        #expect(SwiftRecordGenerator.typeName("categories") == "Category")
        #expect(SwiftRecordGenerator.typeName("matches") == "Match")
        #expect(SwiftRecordGenerator.typeName("user_place") == "UserPlace")
        #expect(SwiftRecordGenerator.typeName("analytics_events") == "AnalyticsEvent")
        #expect(SwiftRecordGenerator.typeName("groups") == "GroupRow", "not SwiftUI's Group")
        #expect(SwiftRecordGenerator.typeName("notifications") == "NotificationRow", "not Foundation's Notification")
        #expect(SwiftRecordGenerator.propertyName("place_id") == "placeID")
        #expect(SwiftRecordGenerator.propertyName("created_at") == "createdAt")
        #expect(SwiftRecordGenerator.propertyName("default") == "`default`")
    }

    @Test func aTableIsAStructWithCodingKeysOptionalsAndItsHandle() throws {
        let table = TableSchema("user_notes", columns: [
            Column("id", .uuid, nullable: false, default: .randomUUID), Column("owner_id", .uuid, nullable: false),
            Column("body", .text), Column("tags", .textArray), Column("stars", .integer, nullable: false), Column("seen_at", .timestamp),
        ], primaryKey: ["id"])
        let text = try SwiftRecordGenerator.source(for: [AppModule(name: "notes", tables: [table], migrations: [])])
        #expect(text.contains("public struct UserNote: TableRecord {"))
        #expect(text.contains(#"public static let table = TableHandle("user_notes", primaryKey: ["id"])"#))
        #expect(text.contains("public var ownerID: UUID\n"))
        #expect(text.contains("public var tags: [String]?\n"))
        #expect(text.contains("public var seenAt: Date?\n"))
        #expect(text.contains(#"case ownerID = "owner_id""#))
        #expect(text.contains("body: String? = nil,"))
        #expect(text.contains("public static let all: [any TableRecord.Type] = [UserNote.self]"))
    }

    @Test func twoTablesMakingOneSwiftTypeAreRefused() {
        let tables = ["place", "places"].map { TableSchema($0, columns: [Column("id", .text, nullable: false)], primaryKey: ["id"]) }
        #expect(throws: CaravanError.self) { _ = try SwiftRecordGenerator.source(for: [AppModule(name: "a", tables: tables, migrations: [])]) }
    }

    @Test func theCommandPrintsTheRecordsOfTheNamedApps() async throws {
        let (status, output, error) = try await CaravanBinary().run(["gen", "swift", "--apps", "places,travel_log"])
        #expect(status == 0, "\(error)")
        #expect(output == (try SwiftRecordGenerator.source(for: [PlacesModule.module, TravelLogModule.module])))
        let (refused, _, message) = try await CaravanBinary().run(["gen", "swift", "--apps", "nope"])
        #expect(refused != 0)
        #expect(message.contains("unknown app nope"))
    }
}
