import CaravanCore
import Testing

private func condition(_ predicate: Predicate) -> Condition? {
    if case .condition(let c) = predicate { return c }
    return nil
}

@Suite("PostgREST filter grammar")
struct FilterParserTests {
    @Test(arguments: [
        ("eq.5", FilterOperator.eq), ("neq.5", .neq), ("gt.5", .gt), ("gte.5", .gte), ("lt.5", .lt), ("lte.5", .lte),
        ("like.*a*", .like), ("ilike.*a*", .ilike), ("match.^a", .match), ("imatch.^a", .imatch),
        ("isdistinct.5", .isdistinct), ("cs.{a,b}", .cs), ("cd.{a}", .cd), ("ov.{a}", .ov), ("fts.word", .fts),
    ])
    func everyOperatorParses(value: String, op: FilterOperator) throws {
        let parsed = try QueryParser.parseFilter(column: "c", value: value)
        #expect(condition(parsed)?.op == op)
        #expect(condition(parsed)?.column == "c")
    }

    @Test func valueIsEverythingAfterTheOperatorsDotVerbatim() throws {
        let parsed = try QueryParser.parseFilter(column: "name", value: "eq.\"a.b\".c")
        #expect(condition(parsed)?.operand == .scalar("\"a.b\".c"))
    }

    @Test func notNegatesAnyOperator() throws {
        let parsed = try QueryParser.parseFilter(column: "id", value: "not.in.(1,2)")
        guard case .not(let inner) = parsed else { Issue.record("expected not"); return }
        #expect(condition(inner)?.operand == .list(["1", "2"]))
    }

    @Test func inListQuotingAndEscaping() throws {
        let parsed = try QueryParser.parseFilter(column: "name", value: #"in.("a,b",c,"say \"hi\"","back\\slash",)"#)
        #expect(condition(parsed)?.operand == .list(["a,b", "c", "say \"hi\"", "back\\slash", ""]))
    }

    @Test func emptyInList() throws {
        #expect(condition(try QueryParser.parseFilter(column: "id", value: "in.()"))?.operand == .list([]))
    }

    @Test(arguments: ["null", "not_null", "true", "false", "unknown", "NULL", "True"])
    func isOperands(text: String) throws {
        let parsed = try QueryParser.parseFilter(column: "flag", value: "is.\(text)")
        #expect(condition(parsed)?.operand == .isValue(IsValue(rawValue: text.lowercased())!))
    }

    @Test func eqNullComparesWithTheTextNull() throws {
        #expect(condition(try QueryParser.parseFilter(column: "name", value: "eq.null"))?.operand == .scalar("null"))
    }

    @Test func anyAllModifiers() throws {
        let any = try QueryParser.parseFilter(column: "name", value: "like(any).{a*,\"b c*\"}")
        #expect(condition(any)?.quantifier == .any)
        #expect(condition(any)?.operand == .list(["a*", "b c*"]))
        let all = try QueryParser.parseFilter(column: "name", value: "ilike(all).{*a*,*b*}")
        #expect(condition(all)?.quantifier == .all)
    }

    @Test func arrayLiteralNullAndQuotedElements() throws {
        let parsed = try QueryParser.parseFilter(column: "tags", value: #"cs.{NULL,"NULL","a b",""}"#)
        #expect(condition(parsed)?.operand == .list([nil, "NULL", "a b", ""]))
    }

    @Test func ftsLanguage() throws {
        let parsed = try QueryParser.parseFilter(column: "name", value: "wfts(english).the cat")
        #expect(condition(parsed)?.language == "english")
        #expect(condition(parsed)?.operand == .scalar("the cat"))
    }

    @Test(arguments: ["foo.bar", "eq", "", "unknownop.5", "like(some).{a}", "is.maybe", "in.1,2", "in.(\"open", "eq(any).notalist", "cs.{\"a}"])
    func malformedFiltersAreParseErrors(value: String) {
        #expect {
            _ = try QueryParser.parseFilter(column: "c", value: value)
        } throws: { error in
            (error as? CaravanError)?.code == .parseError
        }
    }

    @Test func parseErrorMessageNamesTheFilter() {
        do {
            _ = try QueryParser.parseFilter(column: "name", value: "foo.bar")
            Issue.record("expected an error")
        } catch {
            #expect(error.message == "\"failed to parse filter (foo.bar)\" (line 1, column 1)")
        }
    }
}

@Suite("Logic trees")
struct LogicTreeTests {
    @Test func nestedTree() throws {
        let tree = try QueryParser.parseLogicTree("(a.eq.1,and(b.gt.2,not.c.is.null))", isOr: true, negated: false)
        guard case .or(let items) = tree, items.count == 2, case .and(let inner) = items[1], inner.count == 2,
              case .not(let negated) = inner[1] else {
            Issue.record("unexpected shape \(tree)"); return
        }
        #expect(condition(items[0]) == Condition(column: "a", op: .eq, operand: .scalar("1")))
        #expect(condition(negated)?.operand == .isValue(.null))
    }

    @Test func quotedValuesAreUnquotedInsideTrees() throws {
        let tree = try QueryParser.parseLogicTree(#"(name.eq."a,b",name.eq."x)y",name.in.("p,q",r))"#, isOr: true, negated: false)
        guard case .or(let items) = tree else { Issue.record("not an or"); return }
        #expect(items.compactMap(condition).map(\.operand) == [.scalar("a,b"), .scalar("x)y"), .list(["p,q", "r"])])
    }

    @Test func arraysInsideTrees() throws {
        let tree = try QueryParser.parseLogicTree("(tags.cs.{a,b},tags.ov.{c})", isOr: false, negated: true)
        guard case .not(.and(let items)) = tree else { Issue.record("not a negated and"); return }
        #expect(items.compactMap(condition).map(\.operand) == [.list(["a", "b"]), .list(["c"])])
    }

    @Test func notOrAndNegatedOperatorsInTrees() throws {
        let read = try QueryParser.parseRead(QueryString("not.or=(a.not.eq.1,not.and(b.eq.2))"))
        guard case .not(.or(let items)) = read.filters.first else { Issue.record("expected not.or"); return }
        guard case .not(let first) = items[0], case .not(.and) = items[1] else { Issue.record("negations lost"); return }
        #expect(condition(first)?.op == .eq)
    }

    @Test(arguments: ["a.eq.1", "(a.eq.1", "(a.eq.1,)", "(a.eq.1)x", "(a.zz.1)", "(and(a.eq.1)", "(a)", "(.eq.1)"])
    func malformedTreesAreParseErrors(text: String) {
        #expect {
            _ = try QueryParser.parseLogicTree(text, isOr: true, negated: false)
        } throws: { error in
            (error as? CaravanError)?.code == .parseError
        }
    }
}

@Suite("select, order, limit, offset")
struct SelectOrderTests {
    @Test func selectItems() throws {
        let items = try QueryParser.parseSelect(#" id , label:name_en, google_rating::text, r:google_rating::int8, "odd name" "#)
        #expect(items == [
            .column(name: "id", alias: nil, cast: nil),
            .column(name: "name_en", alias: "label", cast: nil),
            .column(name: "google_rating", alias: nil, cast: .text),
            .column(name: "google_rating", alias: "r", cast: .int8),
            .column(name: "odd name", alias: nil, cast: nil),
        ])
        #expect(try QueryParser.parseSelect("*,id") == [.star, .column(name: "id", alias: nil, cast: nil)])
    }

    @Test func embeddedResourcesParseWithAliasesHintsAndTheirOwnParameters() throws {
        #expect(try QueryParser.parseSelect("id,spot:places!place_id!inner(id,name_en),reviews()") == [
            .column(name: "id", alias: nil, cast: nil),
            .embed(EmbedRequest(table: "places", alias: "spot", hint: "place_id", inner: true,
                                select: [.column(name: "id", alias: nil, cast: nil), .column(name: "name_en", alias: nil, cast: nil)])),
            .embed(EmbedRequest(table: "reviews")),
        ])
        #expect(try QueryParser.parseSelect("a(b(c))") == [.embed(EmbedRequest(table: "a", select: [.embed(EmbedRequest(table: "b", select: [.column(name: "c", alias: nil, cast: nil)]))]))])
        let query = try QueryParser.parseRead(QueryString("id=eq.1&reviews.rating=eq.5&reviews.order=rating.desc&reviews.limit=2&reviews.author.or=(a.eq.1,b.eq.2)"))
        #expect(query.filters.count == 1)
        #expect(query.embedded["reviews"]?.filters.count == 1)
        #expect(query.embedded["reviews"]?.limit == 2 && query.embedded["reviews"]?.order.first?.column == "rating")
        #expect(query.embedded["reviews.author"]?.filters.count == 1)
        #expect(try QueryParser.parseSelect("...places(id)") == [.embed(EmbedRequest(table: "places", spread: true, select: [.column(name: "id", alias: nil, cast: nil)]))])
        #expect { _ = try QueryParser.parseSelect("...p:places(id)") } throws: { ($0 as? CaravanError)?.code == .parseError }
        // Casts inside an embed are not served yet: PGRST200, not a wrong answer.
        #expect { _ = try QueryParser.parseSelect("places(id::text)") } throws: { ($0 as? CaravanError)?.code == .unsupportedEmbedding }
        #expect { _ = try QueryParser.parseSelect("places!a!b(id)") } throws: { ($0 as? CaravanError)?.code == .parseError }
    }

    @Test(arguments: ["id::money", "id,,name", "\"open"])
    func badSelectIsAParseError(text: String) {
        #expect { _ = try QueryParser.parseSelect(text) } throws: { ($0 as? CaravanError)?.code == .parseError }
    }

    @Test func jsonPathsParseIntoKeysIndexesAndATextArrow() throws {
        let parsed = try JSONPath.parse("data->a->0->>b_2")
        #expect(parsed.column == "data")
        #expect(parsed.path == JSONPath(steps: [.key("a"), .index(0), .key("b_2")], asText: true))
        #expect(parsed.path?.outputName(column: "data") == "b_2")
        #expect(try JSONPath.parse("data->3").path?.outputName(column: "data") == "data")
        #expect(try JSONPath.parse("plain").path == nil)
        for bad in ["data->>k->x", "data->'k'", "data->", "->k", "data->a b"] {
            #expect(throws: CaravanError.self, "\(bad)") { try JSONPath.parse(bad) }
        }
    }

    @Test func orderTerms() throws {
        let terms = try QueryParser.parseOrder("google_rating.desc.nullslast,name_en,id.asc.nullsfirst,x.nullsfirst.desc")
        #expect(terms == [
            OrderTerm(column: "google_rating", direction: .descending, nulls: .last),
            OrderTerm(column: "name_en"),
            OrderTerm(column: "id", direction: .ascending, nulls: .first),
            OrderTerm(column: "x", direction: .descending, nulls: .first),
        ])
        #expect(terms[1].effectiveNulls == .last)
        #expect(OrderTerm(column: "a", direction: .descending).effectiveNulls == .first)
    }

    @Test(arguments: ["a.up", "a.asc.desc", ".asc", "a.nullslast.nullsfirst"])
    func badOrderIsAParseError(text: String) {
        #expect { _ = try QueryParser.parseOrder(text) } throws: { ($0 as? CaravanError)?.code == .parseError }
    }

    @Test func negativeLimitIsARangeErrorAndJunkIsAParseError() {
        #expect { _ = try QueryParser.parseRead(QueryString("limit=-1")) } throws: { ($0 as? CaravanError)?.code == .invalidRange }
        #expect { _ = try QueryParser.parseRead(QueryString("limit=ten")) } throws: { ($0 as? CaravanError)?.code == .parseError }
        #expect { _ = try QueryParser.parseRead(QueryString("offset=-3")) } throws: { ($0 as? CaravanError)?.code == .parseError }
    }

    @Test func reservedKeysAreNotFilters() throws {
        let query = try QueryParser.parseRead(QueryString("select=id&order=id&limit=1&offset=0&columns=a&on_conflict=id&id=eq.1"))
        #expect(query.filters.count == 1)
    }
}
