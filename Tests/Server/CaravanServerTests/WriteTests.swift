import CaravanCore
import CaravanTesting
import CaravanServer
import CaravanSQLite
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Places
import Testing

private let a = PolicyDeployment.userA

@Suite("REST writes (wire-protocol §2.6)")
struct RESTWriteTests {
    @Test(arguments: Engine.allCases)
    func insertStatusesAndReturnPreferences(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let minimal = try await d.request(.userA, .post, "/rest/v1/favorites", body: #"{"user_id":"\#(a)","place_id":"bloom"}"#, prefer: nil)
        #expect(minimal.status == .created)
        #expect(minimal.body.readableBytes == 0)
        #expect(minimal.header("Content-Range") == "*/*")
        let represented = try await d.request(.userA, .post, "/rest/v1/favorites?select=place_id,note", body: #"{"user_id":"\#(a)","place_id":"kudu","note":"n"}"#,
                                              prefer: "return=representation,count=exact")
        #expect(represented.status == .created)
        #expect(represented.text == #"[{"place_id":"kudu","note":"n"}]"#)
        #expect(represented.header("Content-Range") == "*/1")
        let headersOnly = try await d.request(.service, .post, "/rest/v1/places", body: #"{"id":"with space","name_ar":"x","category":"c","category_ar":"c"}"#,
                                              prefer: "return=headers-only")
        #expect(headersOnly.status == .created)
        #expect(headersOnly.header("Location") == "/places?id=eq.with%20space")
    }

    @Test(arguments: Engine.allCases)
    func arrayInsertWithColumnsNullsOrDefaults(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let body = #"[{"id":"p1","name_ar":"a","category":"c","category_ar":"c","ignored":1},{"id":"p2","name_ar":"b","category":"c","category_ar":"c","is_active":false}]"#
        let nulls = try await d.request(.service, .post, "/rest/v1/places?columns=id,name_ar,category,category_ar,is_active&select=id,is_active", body: body)
        #expect(nulls.text == #"[{"id":"p1","is_active":null},{"id":"p2","is_active":false}]"#)
        let body2 = body.replacingOccurrences(of: "p1", with: "p3").replacingOccurrences(of: "p2", with: "p4")
        let defaults = try await d.request(.service, .post, "/rest/v1/places?columns=id,name_ar,category,category_ar,is_active&select=id,is_active", body: body2,
                                           prefer: "return=representation, missing=default")
        #expect(defaults.text == #"[{"id":"p3","is_active":true},{"id":"p4","is_active":false}]"#)
    }

    @Test(arguments: Engine.allCases)
    func upsertMergeIgnoreAndConflictTargets(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let update = try await d.request(.service, .post, "/rest/v1/places?on_conflict=id&select=id,name_en",
                                         body: #"{"id":"kudu","name_ar":"كودو","category":"restaurant","category_ar":"مطاعم","name_en":"KUDU"}"#,
                                         prefer: "return=representation,resolution=merge-duplicates")
        #expect(update.status == .ok)
        #expect(update.text == #"[{"id":"kudu","name_en":"KUDU"}]"#)
        let insert = try await d.request(.service, .post, "/rest/v1/places?on_conflict=id&select=id",
                                         body: #"[{"id":"kudu","name_ar":"x","category":"c","category_ar":"c"},{"id":"fresh","name_ar":"x","category":"c","category_ar":"c"}]"#,
                                         prefer: "return=representation,resolution=ignore-duplicates")
        #expect(insert.status == .created)
        #expect(insert.ids == ["fresh"])
        let unique = try await d.request(.userB, .post, "/rest/v1/favorites?on_conflict=user_id,place_id&select=note",
                                         body: #"{"user_id":"\#(PolicyDeployment.userB)","place_id":"kudu","note":"again"}"#,
                                         prefer: "return=representation,resolution=merge-duplicates")
        #expect(unique.status == .ok)
        #expect(unique.text == #"[{"note":"again"}]"#)
        let notAKey = try await d.request(.service, .post, "/rest/v1/places?on_conflict=name_en", body: #"{"id":"z","name_ar":"z","category":"c","category_ar":"c"}"#,
                                          prefer: "resolution=merge-duplicates")
        #expect(notAKey.errorCode == "42P10")
        // Merging into a row the caller may not update is refused, not silently skipped.
        let foreign = try await d.request(.userA, .post, "/rest/v1/favorites?on_conflict=id",
                                          body: #"{"id":"\#(PolicyDeployment.favoriteB)","user_id":"\#(a)","place_id":"kudu"}"#, prefer: "resolution=merge-duplicates")
        #expect(foreign.status == .forbidden)
        #expect(try await d.request(.service, .get, "/rest/v1/favorites?id=eq.\(PolicyDeployment.favoriteB)&select=user_id", prefer: nil).text
                == #"[{"user_id":"\#(PolicyDeployment.userB)"}]"#)
    }

    @Test(arguments: Engine.allCases)
    func updateAndDeleteStatusesAndRanges(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let minimal = try await d.request(.service, .patch, "/rest/v1/places?category=eq.cafe", body: #"{"neighborhood":"Olaya"}"#, prefer: "count=exact")
        #expect(minimal.status == .noContent)
        #expect(minimal.header("Content-Range") == "0-3/4")
        let none = try await d.request(.service, .patch, "/rest/v1/places?id=eq.missing", body: #"{"neighborhood":"x"}"#)
        #expect(none.status == .ok)
        #expect(none.text == "[]")
        let deleted = try await d.request(.service, .delete, "/rest/v1/delivery_prices?app_name=eq.Jahez&select=app_name", prefer: "return=representation,count=exact")
        #expect(deleted.text == #"[{"app_name":"Jahez"}]"#)
        #expect(deleted.header("Content-Range") == "*/1")
        let quiet = try await d.request(.service, .delete, "/rest/v1/categories?id=eq.cafe", prefer: nil)
        #expect(quiet.status == .noContent)
    }

    @Test(arguments: Engine.allCases)
    func derivedColumnsAreKeptByTheEngineNotTheCaller(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let inserted = try await d.request(.admin, .post, "/rest/v1/places?select=completeness_score,updated_at",
                                           body: #"{"id":"rich","name_ar":"x","name_en":"y","description_ar":"z","category":"c","category_ar":"c","completeness_score":0.99}"#)
        guard case .array(let rows)? = inserted.json, case .double(let score)? = rows.first?["completeness_score"] else { Issue.record(Comment(rawValue: inserted.text)); return }
        #expect(score == 0.3)
        let before = rows.first?["updated_at"]
        try await Task.sleep(for: .milliseconds(5))
        let updated = try await d.request(.admin, .patch, "/rest/v1/places?id=eq.rich&select=completeness_score,updated_at", body: #"{"price_range":"$$"}"#)
        guard case .array(let after)? = updated.json else { Issue.record(Comment(rawValue: updated.text)); return }
        #expect(after.first?["completeness_score"] == .double(0.4))
        #expect(after.first?["updated_at"] != before)
        // Tags count once there is one; an update that sets updated_at itself keeps it.
        let tagged = try await d.request(.admin, .patch, "/rest/v1/places?id=eq.rich&select=completeness_score,updated_at",
                                         body: #"{"tags":["quiet"],"updated_at":"2001-02-03T04:05:06+00:00"}"#)
        guard case .array(let taggedRows)? = tagged.json else { Issue.record(Comment(rawValue: tagged.text)); return }
        #expect(taggedRows.first?["completeness_score"] == .double(0.5))
        #expect(taggedRows.first?["updated_at"] == .string("2001-02-03T04:05:06.000000Z"))

        // A review's updated_at moves on every edit that does not set it.
        let review = "/rest/v1/reviews?id=eq.\(PolicyDeployment.reviewA)&select=updated_at"
        let reviewBefore = try await d.request(.userA, .get, review).json
        try await Task.sleep(for: .milliseconds(5))
        let edited = try await d.request(.userA, .patch, review, body: #"{"rating":2}"#)
        #expect(edited.json != nil && edited.json != reviewBefore, "\(edited.text)")
    }

    @Test(arguments: Engine.allCases)
    func badWritesGetPostgresErrors(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let cases: [(Actor, HTTPRequest.Method, String, String?, HTTPResponse.Status, String)] = [
            (.service, .post, "/rest/v1/places", "{not json", .badRequest, "PGRST102"),
            (.service, .post, "/rest/v1/places", "42", .badRequest, "PGRST102"),
            (.service, .post, "/rest/v1/places", #"[{"id":"a","name_ar":"a"},{"id":"b"}]"#, .badRequest, "PGRST102"),
            (.service, .post, "/rest/v1/places", #"{"id":"a","bogus":1}"#, .badRequest, "PGRST204"),
            (.service, .post, "/rest/v1/places?columns=id,bogus", #"{"id":"a"}"#, .badRequest, "PGRST204"),
            (.service, .post, "/rest/v1/places", #"{"id":"a","name_ar":"a","category":"c","category_ar":"c","google_rating":"high"}"#, .badRequest, "22P02"),
            (.service, .post, "/rest/v1/places", #"{"id":"a","category":"c","category_ar":"c"}"#, .badRequest, "23502"),
            (.service, .post, "/rest/v1/places", #"{"id":"a","name_ar":"a","category":"c","category_ar":"c","latitude":30,"longitude":46}"#, .badRequest, "23514"),
            (.service, .post, "/rest/v1/places", #"{"id":"kudu","name_ar":"a","category":"c","category_ar":"c"}"#, .conflict, "23505"),
            (.service, .post, "/rest/v1/favorites", #"{"user_id":"\#(a)","place_id":"nowhere"}"#, .conflict, "23503"),
            (.service, .patch, "/rest/v1/places", #"{"name_en":"all"}"#, .badRequest, "21000"),
            (.service, .delete, "/rest/v1/places", nil, .badRequest, "21000"),
            (.service, .patch, "/rest/v1/places?id=eq.kudu", #"{"name_ar":null}"#, .badRequest, "23502"),
            (.service, .put, "/rest/v1/places?id=eq.kudu", #"{}"#, .methodNotAllowed, "PGRST101"),
            (.service, .post, "/rest/v1/places", #"{"id":"a"}"#, .badRequest, "PGRST122"),
        ]
        for (index, (actor, method, uri, body, status, code)) in cases.enumerated() {
            let prefer = index == cases.count - 1 ? "handling=strict, return=everything" : "return=representation"
            let response = try await d.request(actor, method, uri, body: body, prefer: prefer)
            #expect(response.status == status, "\(method) \(uri) \(body ?? "")")
            #expect(response.errorCode == code, "\(method) \(uri) \(body ?? ""): \(response.text)")
        }
        #expect(try await d.allIDs("places").count == 6)
    }

    @Test(arguments: Engine.allCases)
    func singularResponsesAndDryRunsRollBack(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let object: HTTPFields = [.accept: "application/vnd.pgrst.object+json"]
        let two = try await d.request(.service, .patch, "/rest/v1/places?category=eq.cafe", body: #"{"neighborhood":"x"}"#, headers: object)
        #expect(two.status == .notAcceptable)
        #expect(two.json?["details"] == .string("The result contains 4 rows"))
        #expect(try await d.request(.service, .get, "/rest/v1/places?neighborhood=eq.x", prefer: nil).ids.isEmpty)
        let one = try await d.request(.service, .post, "/rest/v1/categories?select=id", body: #"{"id":"park","name_ar":"حدائق","name_en":"Parks"}"#, headers: object)
        #expect(one.status == .created)
        #expect(one.text == #"{"id":"park"}"#)
        let dryRun = try await d.request(.service, .post, "/rest/v1/categories?select=id", body: #"{"id":"mall","name_ar":"x","name_en":"Malls"}"#,
                                         prefer: "return=representation, tx=rollback")
        #expect(dryRun.status == .created)
        #expect(dryRun.ids == ["mall"])
        #expect(try await d.allIDs("categories") == ["cafe", "park"])
    }

    @Test(arguments: Engine.allCases)
    func hostileNamesInWritesAreRefusedWithoutEffect(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let attempts: [(HTTPRequest.Method, String, String?)] = [
            (.post, "/rest/v1/places?columns=id,%22name_ar%22%3BDROP%20TABLE%20places", #"{"id":"x"}"#),
            (.post, "/rest/v1/places", #"{"id":"x","name_ar\"); DROP TABLE places; --":"y"}"#),
            (.post, "/rest/v1/places?on_conflict=id);DROP%20TABLE%20places;--", #"{"id":"x","name_ar":"a","category":"c","category_ar":"c"}"#),
            (.patch, "/rest/v1/places?id=eq.kudu&order=id;DELETE", #"{"name_en":"x"}"#),
            (.patch, "/rest/v1/places?id;DELETE=eq.kudu", #"{"name_en":"x"}"#),
            (.delete, "/rest/v1/places?or=(id.eq.kudu,1.eq.1)", nil),
            (.delete, "/rest/v1/places?select=id;DROP&id=eq.kudu", nil),
        ]
        for (method, uri, body) in attempts {
            let response = try await d.request(.service, method, uri, body: body, prefer: "resolution=merge-duplicates")
            #expect(response.status == .badRequest, "\(method) \(uri): \(response.status) \(response.text)")
        }
        #expect(try await d.allIDs("places").count == 6)
        let kudu = try await d.request(.service, .get, "/rest/v1/places?id=eq.kudu&select=name_en", prefer: nil)
        #expect(kudu.text == #"[{"name_en":"Kudu"}]"#)
    }
}

@Suite("The change log and the publisher")
struct ChangeLogTests {
    @Test(arguments: Engine.allCases)
    func everyWriteIsLoggedInOrderAndPublishedAfterCommit(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let store = d.deployment.services.store
        let start = try await store.changes(after: 0, limit: 1000).last?.seq ?? 0
        var stream = d.publisher.subscribe().makeAsyncIterator()
        _ = try await d.request(.userA, .post, "/rest/v1/favorites", body: #"{"user_id":"\#(a)","place_id":"bloom"}"#)
        _ = try await d.request(.userA, .patch, "/rest/v1/favorites?place_id=eq.bloom", body: #"{"note":"n"}"#)
        _ = try await d.request(.userA, .delete, "/rest/v1/favorites?place_id=eq.bloom")
        _ = try await d.request(.userA, .post, "/rest/v1/favorites", body: #"{"user_id":"\#(a)","place_id":"kudu"}"#, prefer: "tx=rollback")
        _ = try await d.request(.userA, .post, "/rest/v1/favorites", body: #"{"user_id":"\#(PolicyDeployment.userB)","place_id":"kudu"}"#)
        let changes = try await store.changes(after: start, limit: 100)
        #expect(changes.map(\.operation) == [.insert, .update, .delete])
        #expect(changes.allSatisfy { $0.table == "favorites" && $0.actor == a })
        #expect(changes.map(\.seq) == changes.map(\.seq).sorted())
        let insert = try JSONParser.parse(try #require(changes[0].record))
        #expect(insert["place_id"] == .string("bloom"))
        #expect(changes[0].oldRecord == nil)
        #expect(try JSONParser.parse(try #require(changes[1].oldRecord))["note"] == .null)
        #expect(try JSONParser.parse(try #require(changes[1].record))["note"] == .string("n"))
        #expect(changes[2].record == nil)
        #expect(try JSONParser.parse(changes[2].primaryKey)["id"] == insert["id"])
        for expected in changes {
            let published = await stream.next()
            #expect(published == expected)
        }
    }

    @Test(arguments: Engine.allCases)
    func cascadedDeletesAreLoggedToo(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let store = d.deployment.services.store
        let start = try await store.changes(after: 0, limit: 1000).last?.seq ?? 0
        let response = try await d.request(.admin, .delete, "/rest/v1/places?id=eq.cafe-nour", prefer: nil)
        #expect(response.status == .noContent)
        let changes = try await store.changes(after: start, limit: 100)
        #expect(Set(changes.map(\.table)) == ["places", "favorites", "reviews", "delivery_prices"])
        #expect(changes.allSatisfy { $0.operation == .delete })
        #expect(changes.last?.table == "places")
        #expect(try await d.allIDs("favorites") == [PolicyDeployment.favoriteB])
    }
}

@Suite("RPC (wire-protocol §2.8)")
struct RPCTests {
    @Test(arguments: Engine.allCases)
    func scalarSetAndVoidResults(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let all = try await d.request(.anon, .post, "/rest/v1/rpc/count_places", body: "{}")
        #expect(all.text == "5")
        let cafes = try await d.request(.anon, .get, "/rest/v1/rpc/count_places?cat=cafe", prefer: nil)
        #expect(cafes.text == "3")
        let asAdmin = try await d.request(.admin, .post, "/rest/v1/rpc/count_places", body: #"{"cat":"cafe"}"#)
        #expect(asAdmin.text == "4")
        let noBody = try await d.request(.anon, .post, "/rest/v1/rpc/count_places", body: nil)
        #expect(noBody.text == "5")
        let set = try await d.request(.anon, .get, "/rest/v1/rpc/places_in_category?cat=cafe&select=id&order=id.desc&limit=2", prefer: "count=exact")
        #expect(set.ids == ["orchard", "cafe-nour"])
        #expect(set.status == .partialContent)
        #expect(set.header("Content-Range") == "0-1/3")
        let filtered = try await d.request(.anon, .post, "/rest/v1/rpc/places_in_category?name_en=ilike.*bloom*&select=id", body: #"{"cat":"cafe"}"#)
        #expect(filtered.ids == ["bloom"])
        let void = try await d.request(.admin, .post, "/rest/v1/rpc/refresh_category_counts", body: nil)
        #expect(void.status == .noContent)
        let counted = try await d.request(.anon, .get, "/rest/v1/categories?select=places_count", prefer: nil)
        #expect(counted.text == #"[{"places_count":3}]"#)
    }

    /// Eight writers at once, each inserting a place and then refreshing the counts: every insert and every refresh
    /// succeeds (no deadlock or serialization failure reaches a client), and the count is right at the end, since
    /// each insert commits before its own refresh begins and refreshes run one at a time (`serialize(on:)`). This
    /// checks the outcome under concurrency; it does not force the interleaving that the lock exists for (a refresh
    /// counting before another's insert commits and writing after it), which in-process runs seldom produce.
    @Test(arguments: Engine.allCases)
    func concurrentInsertsEachFollowedByARefreshLeaveTheCountRight(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let writers = 8
        let statuses = try await withThrowingTaskGroup(of: [HTTPResponse.Status].self) { group in
            for n in 0..<writers {
                group.addTask {
                    let place = #"{"id":"concurrent-\#(n)","name_ar":"مقهى","category":"cafe","category_ar":"كافيه"}"#
                    let inserted = try await d.request(.admin, .post, "/rest/v1/places", body: place)
                    let refreshed = try await d.request(.admin, .post, "/rest/v1/rpc/refresh_category_counts", body: nil)
                    return [inserted.status, refreshed.status]
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses.count == writers)
        #expect(statuses.allSatisfy { $0 == [.created, .noContent] }, "\(statuses)")
        let active = try await d.request(.anon, .post, "/rest/v1/rpc/count_places", body: #"{"cat":"cafe"}"#)
        #expect(active.text == String(3 + writers))
        let counted = try await d.request(.anon, .get, "/rest/v1/categories?select=places_count", prefer: nil)
        #expect(counted.text == #"[{"places_count":\#(3 + writers)}]"#)
    }

    @Test(arguments: Engine.allCases)
    func computedTablesTakeFiltersOrderAndCounts(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let all = try await d.request(.anon, .get, "/rest/v1/rpc/category_counts", prefer: nil)
        #expect(all.text == #"[{"category":"cafe","places":3},{"category":"park","places":1},{"category":"restaurant","places":1}]"#)
        let some = try await d.request(.admin, .post, "/rest/v1/rpc/category_counts?places=gte.1&order=places.desc,category&limit=2&select=category",
                                       body: nil, prefer: "count=exact")
        #expect(some.text == #"[{"category":"cafe"},{"category":"park"}]"#)
        #expect(some.header("Content-Range") == "0-1/3")
        #expect(some.status == .partialContent)
        let one = try await d.request(.anon, .get, "/rest/v1/rpc/category_counts?category=eq.park", prefer: nil, headers: [.accept: "application/vnd.pgrst.object+json"])
        #expect(one.text == #"{"category":"park","places":1}"#)
        let bad = try await d.request(.anon, .get, "/rest/v1/rpc/category_counts?nope=eq.1", prefer: nil)
        #expect(bad.errorCode == "42703")
    }

    @Test(arguments: Engine.allCases)
    func functionsRunAsTheCallerThroughThePipeline(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let on = try await d.request(.userA, .post, "/rest/v1/rpc/toggle_favorite", body: #"{"place_id":"kudu","note":"late"}"#)
        #expect(on.text == "true")
        let mine = try await d.request(.userA, .get, "/rest/v1/favorites?select=place_id,note&order=place_id", prefer: nil)
        #expect(mine.text == #"[{"place_id":"cafe-nour","note":null},{"place_id":"kudu","note":"late"}]"#)
        let off = try await d.request(.userA, .post, "/rest/v1/rpc/toggle_favorite", body: #"{"place_id":"kudu"}"#)
        #expect(off.text == "false")
        let anon = try await d.request(.anon, .post, "/rest/v1/rpc/toggle_favorite", body: #"{"place_id":"kudu"}"#)
        #expect(anon.status == .unauthorized)
        #expect(anon.errorCode == "42501")
        let missingPlace = try await d.request(.userA, .post, "/rest/v1/rpc/toggle_favorite", body: #"{"place_id":"nowhere"}"#)
        #expect(missingPlace.errorCode == "23503")
        let userCannotRefresh = try await d.request(.userA, .post, "/rest/v1/rpc/refresh_category_counts", body: nil)
        #expect(userCannotRefresh.status == .noContent)
        #expect(try await d.request(.anon, .get, "/rest/v1/categories?select=places_count", prefer: nil).text == #"[{"places_count":0}]"#)
    }

    @Test(arguments: Engine.allCases)
    func unknownFunctionsArgumentsAndMethods(engine: Engine) async throws {
        let d = try await PolicyDeployment.make(engine: engine)
        let cases: [(HTTPRequest.Method, String, String?, HTTPResponse.Status, String)] = [
            (.post, "/rest/v1/rpc/nope", "{}", .notFound, "PGRST202"),
            (.post, "/rest/v1/rpc/count_places", #"{"category":"cafe"}"#, .notFound, "PGRST202"),
            (.post, "/rest/v1/rpc/places_in_category", "{}", .notFound, "PGRST202"),
            (.get, "/rest/v1/rpc/toggle_favorite?place_id=kudu", nil, .methodNotAllowed, "PGRST101"),
            (.delete, "/rest/v1/rpc/count_places", nil, .methodNotAllowed, "PGRST101"),
            (.post, "/rest/v1/rpc/count_places", "[1]", .badRequest, "PGRST102"),
        ]
        for (method, uri, body, status, code) in cases {
            let response = try await d.request(.userA, method, uri, body: body, prefer: nil)
            #expect(response.status == status, "\(method) \(uri)")
            #expect(response.errorCode == code, "\(method) \(uri): \(response.text)")
        }
    }
}
