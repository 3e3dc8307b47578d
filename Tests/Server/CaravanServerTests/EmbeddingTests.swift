import CaravanCore
import CaravanTesting
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// PostgREST resource embedding over the declared foreign keys, in one statement, under every embedded table's
/// select policy.
@Suite("Resource embedding")
struct EmbeddingTests {
    private func rows(_ response: TestResponse) -> [JSONValue] {
        guard case .array(let rows)? = response.json else { Issue.record(Comment(rawValue: "\(response.status) \(response.text)")); return [] }
        return rows
    }

    private func ids(_ value: JSONValue?, key: String = "id") -> [String] {
        guard case .array(let items)? = value else { return [] }
        return items.compactMap { if case .string(let id)? = $0[key] { id } else { nil } }
    }

    /// One-to-many gives an array (empty when nothing relates), many-to-one an object, and an embedded row reads
    /// exactly as the same row read from its own table: every type (booleans, JSON, arrays, numbers, timestamps)
    /// comes out alike.
    @Test(arguments: Engine.allCases)
    func embeddedRowsReadAsTheirOwnTableReadsThem(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let places = rows(try await d.request(.anon, .get, "/rest/v1/places?select=id,reviews(*)&id=in.(cafe-nour,kudu)&order=id"))
        #expect(places.map { $0["id"] } == [JSONValue.string("cafe-nour"), JSONValue.string("kudu")])
        let reviews = rows(try await d.request(.anon, .get, "/rest/v1/reviews?place_id=eq.cafe-nour"))
        #expect(!reviews.isEmpty)
        #expect(places.first?["reviews"] == JSONValue.array(reviews))
        #expect(places.last?["reviews"] == JSONValue.array([]))

        let withPlace = rows(try await d.request(.anon, .get, "/rest/v1/reviews?select=rating,spot:places(*)"))
        let place = rows(try await d.request(.anon, .get, "/rest/v1/places?id=eq.cafe-nour"))
        #expect(withPlace.count == 1 && withPlace.first?["spot"] == place.first)
        #expect(withPlace.first?["rating"] == JSONValue.integer(4))
    }

    /// A table may come back deeper in the tree (`places → favorites → places`): each level reads the rows its own
    /// parent names, under its policy; a table embedded directly in itself is still refused with PGRST200.
    @Test(arguments: Engine.allCases)
    func aTableComesBackDeeperInTheTree(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let nested = rows(try await d.request(.userA, .get, "/rest/v1/places?select=id,favorites(id,places(id,name_en,reviews(rating)))&id=in.(cafe-nour,kudu)&order=id"))
        let place = rows(try await d.request(.userA, .get, "/rest/v1/places?select=id,name_en,reviews(rating)&id=eq.cafe-nour")).first
        #expect(nested.map { $0["id"] } == [JSONValue.string("cafe-nour"), JSONValue.string("kudu")])
        #expect(nested.first?["favorites"] == JSONValue.array([.object([("id", .string(PolicyDeployment.favoriteA)), ("places", place ?? .null)])]))
        #expect(nested.last?["favorites"] == JSONValue.array([]), "user A's only favorite is cafe-nour")
        let inner = rows(try await d.request(.userA, .get, "/rest/v1/favorites?select=id,places!inner(id,favorites!inner(id))"))
        #expect(inner.map { $0["id"] } == [JSONValue.string(PolicyDeployment.favoriteA)])
        let direct = try await d.request(.anon, .get, "/rest/v1/places?select=id,places(id)")
        #expect(direct.status == .badRequest && direct.errorCode == "PGRST200")
    }

    /// The embedded table's policy applies inside the embed: favorites are owner-only, so each caller sees their own
    /// inside the places, anonymous callers none; `!inner` drops the places whose embed is empty.
    @Test(arguments: Engine.allCases)
    func policiesOfTheEmbeddedTableApplyInsideIt(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let path = "/rest/v1/places?select=id,favorites(id,user_id)&id=in.(cafe-nour,kudu)&order=id"
        let mine = rows(try await d.request(.userA, .get, path))
        #expect(mine.map { ids($0["favorites"]) } == [[PolicyDeployment.favoriteA], []])
        let theirs = rows(try await d.request(.userB, .get, path))
        #expect(theirs.map { ids($0["favorites"]) } == [[], [PolicyDeployment.favoriteB]])
        let anonymous = rows(try await d.request(.anon, .get, path))
        #expect(anonymous.map { ids($0["favorites"]) } == [[], []])

        let inner = rows(try await d.request(.userB, .get, "/rest/v1/places?select=id,favorites!inner(id)&order=id"))
        #expect(inner.map { $0["id"] } == [JSONValue.string("kudu")])
        let count = try await d.request(.userB, .get, "/rest/v1/places?select=id,favorites!inner(id)", prefer: "count=exact")
        #expect(count.header("Content-Range") == "0-0/1")
    }

    /// Filters, order, limit and offset of an embedded resource apply inside it; nested embeddings nest.
    @Test(arguments: Engine.allCases)
    func embeddedFiltersOrderAndPagesApplyInsideTheEmbed(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        for (user, rating) in [(PolicyDeployment.userB, 5), (PolicyDeployment.adminUser, 2)] {
            let created = try await d.request(.service, .post, "/rest/v1/reviews",
                                              body: #"{"user_id":"\#(user)","place_id":"cafe-nour","rating":\#(rating)}"#)
            #expect(created.status == .created, "\(created.text)")
        }
        let all = rows(try await d.request(.anon, .get, "/rest/v1/places?select=id,reviews(rating)&id=eq.cafe-nour"))
        #expect(all.first?["reviews"].map { value -> [JSONValue] in if case .array(let a) = value { a } else { [] } }?.count == 3)

        let filtered = rows(try await d.request(.anon, .get,
            "/rest/v1/places?select=id,reviews(rating)&id=eq.cafe-nour&reviews.rating=gte.4&reviews.order=rating.desc"))
        #expect(filtered.first?["reviews"] == JSONValue.array([JSONValue.object([("rating", JSONValue.integer(5))]), JSONValue.object([("rating", JSONValue.integer(4))])]))
        let paged = rows(try await d.request(.anon, .get,
            "/rest/v1/places?select=id,reviews(rating)&id=eq.cafe-nour&reviews.order=rating.asc&reviews.limit=1&reviews.offset=1"))
        #expect(paged.first?["reviews"] == JSONValue.array([JSONValue.object([("rating", JSONValue.integer(4))])]))

        let nested = rows(try await d.request(.userA, .get,
            "/rest/v1/reviews?select=rating,places(id,favorites(id))&user_id=eq.\(PolicyDeployment.userA)"))
        #expect(nested.first?["places"]?["id"] == JSONValue.string("cafe-nour"))
        #expect(ids(nested.first?["places"]?["favorites"]) == [PolicyDeployment.favoriteA])
    }

    /// Unknown or unrelated resources are PGRST200; parameters of an embed not in select are refused; the error
    /// names both tables.
    @Test func anEmbedWithoutARelationshipIsRefusedAsPostgRESTDoes() async throws {
        let d = try await PolicyDeployment.make()
        for (uri, named) in [("/rest/v1/places?select=*,nowhere(*)", "nowhere"), ("/rest/v1/categories?select=*,reviews(*)", "reviews"),
                             ("/rest/v1/places?select=id&reviews.rating=eq.5", "reviews")] {
            let response = try await d.request(.anon, .get, uri)
            #expect(response.status == .badRequest, "\(uri)")
            #expect(response.json?["code"] == JSONValue.string("PGRST200"), "\(response.text)")
            guard case .string(let message)? = response.json?["message"] else { Issue.record("no message"); continue }
            #expect(message.contains(named), "\(message)")
        }
        let hinted = try await d.request(.anon, .get, "/rest/v1/places?select=id,reviews!nope(*)")
        #expect(hinted.json?["code"] == JSONValue.string("PGRST200"))
        let byColumn = rows(try await d.request(.anon, .get, "/rest/v1/places?select=id,reviews!place_id(rating)&id=eq.cafe-nour"))
        #expect(byColumn.first?["reviews"] == JSONValue.array([JSONValue.object([("rating", JSONValue.integer(4))])]))
    }

    /// `reviews(count)` counts the visible related rows as PostgREST answers it; a spread makes a to-one
    /// relationship's columns the parent's own, typed as their table reads them, and is refused on a to-many one.
    @Test(arguments: Engine.allCases)
    func countsAndSpreads(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let counted = rows(try await d.request(.anon, .get, "/rest/v1/places?select=id,reviews(count),favorites(count)&id=in.(cafe-nour,kudu)&order=id"))
        #expect(counted.map { $0["reviews"] } == [JSONValue.array([.object([("count", .integer(1))])]), JSONValue.array([.object([("count", .integer(0))])])])
        // Favorites are owner-only: the anonymous caller counts none of them.
        #expect(counted.map { $0["favorites"] } == [JSONValue.array([.object([("count", .integer(0))])]), JSONValue.array([.object([("count", .integer(0))])])])
        let mine = rows(try await d.request(.userA, .get, "/rest/v1/places?select=id,favorites(count)&id=eq.cafe-nour"))
        #expect(mine.first?["favorites"] == JSONValue.array([.object([("count", .integer(1))])]))

        let spread = rows(try await d.request(.anon, .get, "/rest/v1/reviews?select=rating,...places(name_en,google_rating,tags,is_active)"))
        let place = rows(try await d.request(.anon, .get, "/rest/v1/places?select=name_en,google_rating,tags,is_active&id=eq.cafe-nour"))
        guard case .object(var expected)? = place.first else { Issue.record("no place"); return }
        expected.insert(("rating", .integer(4)), at: 0)
        #expect(spread == [JSONValue.object(expected)])
        let toMany = try await d.request(.anon, .get, "/rest/v1/places?select=id,...reviews(rating)")
        #expect(toMany.status == .badRequest && toMany.errorCode == "PGRST200", "\(toMany.text)")
    }

    /// `return=representation` with a `select=` that embeds: the written rows come back with their embeds, read in the
    /// write's transaction under the embedded tables' policies; a DELETE's as the rows were before it.
    @Test(arguments: Engine.allCases)
    func writesReturnTheirRowsWithEmbeds(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let inserted = try await d.request(.userB, .post, "/rest/v1/reviews?select=rating,places(id,name_en),place_id",
                                           body: #"[{"user_id":"\#(PolicyDeployment.userB)","place_id":"kudu","rating":3},{"user_id":"\#(PolicyDeployment.userB)","place_id":"cafe-nour","rating":5}]"#)
        #expect(inserted.status == .created, "\(inserted.text)")
        let names = rows(try await d.request(.anon, .get, "/rest/v1/places?select=id,name_en&id=in.(kudu,cafe-nour)&order=id"))
        let byID = Dictionary(uniqueKeysWithValues: names.compactMap { row -> (String, JSONValue)? in
            if case .string(let id)? = row["id"] { (id, row) } else { nil }
        })
        #expect(rows(inserted) == [
            JSONValue.object([("rating", .integer(3)), ("places", byID["kudu"] ?? .null), ("place_id", .string("kudu"))]),
            JSONValue.object([("rating", .integer(5)), ("places", byID["cafe-nour"] ?? .null), ("place_id", .string("cafe-nour"))]),
        ])
        let updated = try await d.request(.userA, .patch, "/rest/v1/places?id=eq.cafe-nour&select=id,favorites(id)", body: #"{"name_en":"x"}"#)
        #expect(updated.status == .ok)
        #expect(rows(updated) == [], "a user cannot update places: nothing is written, nothing read again")
        let edited = try await d.request(.admin, .patch, "/rest/v1/places?id=eq.cafe-nour&select=id,reviews(rating)&reviews.order=rating.desc",
                                         body: #"{"name_en":"Nour"}"#)
        #expect(rows(edited) == [JSONValue.object([("id", .string("cafe-nour")), ("reviews", .array([.object([("rating", .integer(5))]), .object([("rating", .integer(4))])]))])])
        // A DELETE's representation shows the rows as they were, with their embeds (PostgREST's DELETE … RETURNING).
        let mine = "/rest/v1/favorites?user_id=eq.\(PolicyDeployment.userA)"
        let before = rows(try await d.request(.userA, .get, mine + "&select=id,places(id,name_en,reviews(rating))&order=id"))
        #expect(!before.isEmpty)
        let deleted = try await d.request(.userA, .delete, mine + "&select=id,places(id,name_en,reviews(rating))")
        #expect(deleted.status == .ok, "\(deleted.text)")
        #expect(Set(rows(deleted).map(\.jsonText)) == Set(before.map(\.jsonText)) && rows(deleted).count == before.count, "\(deleted.text) vs \(before)")
        #expect(rows(try await d.request(.userA, .get, mine + "&select=id")).isEmpty, "the rows are gone")
        let none = try await d.request(.userA, .delete, mine + "&select=id,places(id)")
        #expect(none.status == .ok && rows(none).isEmpty)
    }
}
