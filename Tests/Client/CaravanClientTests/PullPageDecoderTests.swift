@testable import CaravanClient
import CaravanCore
import Foundation
import Testing

/// The pull's decoder straight into column values: the rows it stores are the rows the general path (`JSONValue`
/// records) stores, for every column type of every shipped table, and what it does not take goes the general way.
@Suite("Pull page decoder")
struct PullPageDecoderTests {
    static let tables = TypedRecordTests.modules.flatMap(\.tables).filter(\.isSynced)

    /// A page as the server writes it (`SyncPull`): changes, cursor, has_more.
    static func page(_ changes: [JSONValue], cursor: String = "c-1", hasMore: Bool = false) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(.object([("changes", .array(changes)), ("cursor", .string(cursor)), ("has_more", .bool(hasMore))]))
        return writer.bytes
    }

    static func upsert(_ seq: Int64, _ table: TableSchema, _ record: JSONValue) -> JSONValue {
        .object([("seq", .integer(seq)), ("table", .string(table.name)), ("op", .string("upsert")),
                 ("key", .object(table.primaryKey.map { ($0, record[$0] ?? .null) })), ("record", record)])
    }

    static func store() throws -> LocalStore {
        let directory = NSTemporaryDirectory() + "caravan-pull-decoder-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return try LocalStore(path: directory + "/client.sqlite", tables: tables)
    }

    /// Applies `page` decoded both ways into two stores; returns each store's rows of every table (or the error).
    static func applyBothWays(_ page: [UInt8]) throws -> (decoded: Result<[[JSONValue]], any Error>, general: Result<[[JSONValue]], any Error>) {
        func apply(_ decoder: PullPageDecoder?) throws -> Result<[[JSONValue]], any Error> {
            let store = try store()
            return Result {
                let reply = try CaravanAPI.pullReply(from: page, decoder: decoder)
                _ = try store.apply(reply, scope: tables.map(\.name), now: 1)
                return try tables.map { try store.rows($0.name) }
            }
        }
        let decoder = PullPageDecoder(tables: try store().tables)
        return (try apply(decoder), try apply(nil))
    }

    @Test func everyColumnTypeOfEveryTableIsStoredAsTheGeneralPathStoresIt() throws {
        var changes: [JSONValue] = []
        for (index, table) in Self.tables.enumerated() {
            for variant in 1...2 {
                changes.append(Self.upsert(Int64(changes.count + 1), table, TypedRecordTests.sampleRow(table, variant: index * 2 + variant, nulls: variant == 2)))
            }
        }
        let page = Self.page(changes)
        let reply = try #require(PullPageDecoder(tables: try Self.store().tables).decode(page))
        #expect(reply.changes.allSatisfy { $0.values != nil && $0.record == nil }, "every record decoded straight into column values")
        let (decoded, general) = try Self.applyBothWays(page)
        let rows = try decoded.get()
        #expect(rows == (try general.get()))
        #expect(rows.map(\.count).reduce(0, +) == changes.count)
    }

    @Test func whatTheDecoderDoesNotTakeGoesTheGeneralWay() throws {
        let places = try #require(Self.tables.first { $0.name == "places" })
        func row(_ id: String, variant: Int) -> [(key: String, value: JSONValue)] {
            guard case .object(var pairs) = TypedRecordTests.sampleRow(places, variant: variant, nulls: false) else { return [] }
            pairs[pairs.firstIndex { $0.key == "id" }!].value = .string(id)
            return pairs
        }
        // The record before the table it belongs to; then an escaped key, spaces, and a field that is no column.
        let first = JSONValue.object(row("p1", variant: 3)).jsonText
        let second = JSONValue.object(row("p2", variant: 5) + [("not_a_column", .array([.string("ignored")]))]).jsonText
            .replacingOccurrences(of: #""name_en":"#, with: #" "name\u005fen" : "#)
        let page = Array(("""
            {"changes":[{"seq":1,"op":"upsert","key":{"id":"p1"},"record":\(first),"table":"places"},
            {"seq":2,"table":"places","op":"upsert","key":{"id":"p2"},"record":\(second)}],"cursor":"c","has_more":false}
            """).utf8)
        let reply = try #require(PullPageDecoder(tables: try Self.store().tables).decode(page))
        #expect(reply.changes.map { $0.values == nil } == [true, false], "a record before its table is read the general way")
        let (decoded, general) = try Self.applyBothWays(page)
        let rows = try decoded.get().flatMap { $0 }
        #expect(rows == (try general.get().flatMap { $0 }))
        #expect(rows.map { $0["name_en"] } == [row("p1", variant: 3), row("p2", variant: 5)].map { pairs in pairs.first { $0.key == "name_en" }?.value })

        // A value its column cannot hold: refused as the general path refuses it.
        guard case .object(var bad) = TypedRecordTests.sampleRow(places, variant: 4, nulls: false) else { return }
        bad[bad.firstIndex { $0.key == "rating_count" }!].value = .string("many")
        let refused = try Self.applyBothWays(Self.page([Self.upsert(1, places, .object(bad))]))
        #expect(throws: (any Error).self) { try refused.decoded.get() }
        #expect("\(refused.decoded)" == "\(refused.general)")
    }

    @Test func theNextCursorIsReadFromThePageEnd() throws {
        let decoder = PullPageDecoder(tables: [:])
        #expect(decoder.nextCursor(of: Self.page([], cursor: "abc_1-2", hasMore: true)) == "abc_1-2")
        #expect(decoder.nextCursor(of: Self.page([], cursor: "abc", hasMore: false)) == nil)
        #expect(decoder.nextCursor(of: Array(#"{"changes":[],"cursor":"a\"b","has_more":true}"#.utf8)) == nil, "an escaped cursor is no guess")
    }
}
