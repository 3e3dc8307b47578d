import CaravanCore
import CaravanTesting
import Testing

private func isLimit(_ error: any Error) -> Bool { (error as? CaravanError)?.code == .limitExceeded }

/// Each recursive grammar of a request is bounded, served at its limit and refused (`limitExceeded`, 400
/// PGRST100) one past it, however deep the input (thousands of levels parse in linear time, without recursion).
@Suite("Query limits: every grammar at its limit and one past it")
struct QueryLimitsParserTests {
    /// `(c,not.or(c,not.and(…)))` with `groups` groups.
    static func tree(groups: Int) -> String {
        var text = "a.eq.1"
        for level in 1..<groups { text = "b.eq.2,not.\(level % 2 == 0 ? "and" : "or")(\(text))" }
        return "(" + text + ")"
    }

    @Test func logicTrees() throws {
        let limit = QueryLimits.logicTreeDepth
        let parsed = try QueryParser.parseLogicTree(Self.tree(groups: limit), isOr: true, negated: false)
        #expect(parsed.nestingDepth == 2 * limit - 1)
        #expect(performing: { _ = try QueryParser.parseLogicTree(Self.tree(groups: limit + 1), isOr: true, negated: false) }, throws: isLimit)
        let flat = "(" + String(repeating: "and(", count: limit - 1) + "a.eq.1" + String(repeating: ")", count: limit)
        #expect(try QueryParser.parseLogicTree(flat, isOr: false, negated: false).nestingDepth == limit)
        let issue = "(" + String(repeating: "and(", count: 6_500) + "id.eq.1" + String(repeating: ")", count: 6_501)
        #expect(performing: { _ = try QueryParser.parseLogicTree(issue, isOr: true, negated: false) }, throws: isLimit)
        // Width is not depth: a flat tree of many conditions parses (the count is checked per request).
        let wide = "(" + Array(repeating: "a.eq.1", count: 5_000).joined(separator: ",") + ")"
        guard case .or(let items) = try QueryParser.parseLogicTree(wide, isOr: true, negated: false) else { Issue.record("not an or"); return }
        #expect(items.count == 5_000)
        // The iterative parser keeps the recursive one's answers, errors included.
        #expect(try QueryParser.parseLogicTree("(a.eq.1,not.and(b.gt.2,c.is.null))", isOr: false, negated: true)
            == .not(.and([.condition(Condition(column: "a", op: .eq, operand: .scalar("1"))),
                          .not(.and([.condition(Condition(column: "b", op: .gt, operand: .scalar("2"))),
                                     .condition(Condition(column: "c", op: .is, operand: .isValue(.null)))]))])))
        for bad in ["()", "(a.eq.1", "(a.eq.1))", "(and(a.eq.1)", "(a.eq.1,)", "(or()"] {
            #expect(throws: CaravanError.self, "\(bad)") { try QueryParser.parseLogicTree(bad, isOr: true, negated: false) }
        }
    }

    @Test func selectEmbeds() throws {
        func nested(_ depth: Int, spread: Bool = false) -> String {
            var inner = "id"
            for _ in 0..<depth { inner = "id,\(spread ? "..." : "")t(\(inner))" }
            return inner
        }
        let limit = QueryLimits.selectDepth
        #expect(try QueryParser.parseSelect(nested(limit)).count == 2)
        #expect(performing: { _ = try QueryParser.parseSelect(nested(limit + 1)) }, throws: isLimit)
        #expect(performing: { _ = try QueryParser.parseSelect(nested(limit + 1, spread: true)) }, throws: isLimit)
        #expect(performing: { _ = try QueryParser.parseSelect(nested(4_000)) }, throws: isLimit)
    }

    @Test func fullTextQueries() throws {
        let limit = QueryLimits.textQueryDepth
        #expect(try TextQuery.tsquery(String(repeating: "!", count: limit) + "cafe") != .nothing)
        #expect(try TextQuery.tsquery(String(repeating: "(", count: limit) + "cafe" + String(repeating: ")", count: limit)) == .term("cafe", prefix: false))
        #expect(performing: { _ = try TextQuery.tsquery(String(repeating: "!", count: limit + 1) + "cafe") }, throws: isLimit)
        #expect(performing: { _ = try TextQuery.tsquery(String(repeating: "!(", count: (limit + 1) / 2 + 1) + "cafe") }, throws: isLimit)
        #expect(performing: { _ = try TextQuery.tsquery(String(repeating: "(", count: 50_000) + "x") }, throws: isLimit)
        // Width is fine: a thousand ANDed words.
        #expect(try TextQuery.tsquery(Array(repeating: "w", count: 1_000).joined(separator: " & ")).terms.count == 1_000)
    }

    @Test func jsonPaths() throws {
        let limit = QueryLimits.jsonPathSteps
        let at = "doc" + String(repeating: "->a", count: limit - 1) + "->>b"
        #expect(try JSONPath.parse(at).path?.steps.count == limit)
        #expect(performing: { _ = try JSONPath.parse("doc" + String(repeating: "->a", count: limit + 1)) }, throws: isLimit)
        #expect(performing: { _ = try JSONPath.parse("doc" + String(repeating: "->0", count: 20_000)) }, throws: isLimit)
    }

    @Test func orderTerms() throws {
        let terms = Array(repeating: "a.desc", count: QueryLimits.orderTerms)
        #expect(try QueryParser.parseOrder(terms.joined(separator: ",")).count == QueryLimits.orderTerms)
        #expect(performing: { _ = try QueryParser.parseOrder((terms + ["b"]).joined(separator: ",")) }, throws: isLimit)
    }

    @Test func conditionsListsAndEmbedsPerRequest() throws {
        let limits = QueryLimits(maxFilters: 4, maxEmbeds: 2)
        #expect(try QueryParser.parseRead(QueryString("a=eq.1&b=eq.2&or=(c.eq.3,d.eq.4)"), limits: limits).filters.count == 3)
        for query in ["a=eq.1&b=eq.2&or=(c.eq.3,d.eq.4,e.eq.5)", "a=eq(any).{1,2,3,4,5}", "x.a=eq.1&x.b=eq.2&x.or=(c.eq.3,d.eq.4,e.eq.5)"] {
            #expect(throws: CaravanError.self, "\(query)") { try QueryParser.parseRead(QueryString(query), limits: limits) }
            #expect(performing: { _ = try QueryParser.parseRead(QueryString(query), limits: limits) }, throws: isLimit)
        }
        #expect(try QueryParser.parseRead(QueryString("select=a(b(c))"), limits: limits).select.count == 1)
        #expect(performing: { _ = try QueryParser.parseRead(QueryString("select=a(b(c)),d(e)"), limits: limits) }, throws: isLimit)
        let list = Array(repeating: "1", count: QueryLimits.listItems).joined(separator: ",")
        #expect(try QueryParser.parseRead(QueryString("a=in.(\(list))")).filters.count == 1)
        #expect(performing: { _ = try QueryParser.parseRead(QueryString("a=in.(\(list),2)")) }, throws: isLimit)
    }

    /// Binding measures depth without recursion and refuses what no request parses into, so evaluation and SQL
    /// rendering never walk a deeper tree.
    @Test func bindingRefusesPredicatesDeeperThanTheLimit() throws {
        let table = TableSchema("t", columns: [Column("a", .integer)], primaryKey: ["a"])
        func chain(_ depth: Int) -> Predicate {
            var predicate = Predicate.column("a", .eq, "1")
            for level in 0..<depth { predicate = level % 2 == 0 ? .not(predicate) : .and([predicate, .column("a", .gt, "0")]) }
            return predicate
        }
        #expect(chain(QueryLimits.predicateDepth).nestingDepth == QueryLimits.predicateDepth)
        let bound = try chain(QueryLimits.predicateDepth).bound(to: table)
        #expect(bound.evaluate { _ in .integer(1) } != nil)
        #expect(performing: { _ = try chain(QueryLimits.predicateDepth + 1).bound(to: table) }, throws: isLimit)
        #expect(performing: { _ = try chain(2_000).bound(to: table) }, throws: isLimit)
        // The deepest tree a request may parse binds.
        let query = try QueryParser.parseRead(QueryString("not.or=" + Self.tree(groups: QueryLimits.logicTreeDepth) + "&a=not.eq.1"))
        #expect(query.filter.nestingDepth <= QueryLimits.predicateDepth)
        _ = try query.filter.bound(to: TableSchema("t", columns: [Column("a", .integer), Column("b", .integer)], primaryKey: ["a"]))
    }

    /// The fuzzer's every shape parses or is refused with a client error, in any grammar (seeded, fast).
    @Test func fuzzedQueriesParseOrAreRefused() throws {
        var fuzzer = QueryFuzzer(seed: 4343, columns: ["a", "b", "doc"], tables: ["t", "u"])
        for _ in 0..<400 {
            let text = fuzzer.queryString()
            do {
                _ = try QueryParser.parseRead(QueryString(text))
            } catch {
                #expect(error.code != .internalFailure, "\(text.prefix(200))")
            }
            _ = try? TextQuery.tsquery(fuzzer.textQuery())
            _ = try? JSONPath.parse(fuzzer.column())
        }
    }
}
