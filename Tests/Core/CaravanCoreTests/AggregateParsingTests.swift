import CaravanCore
import Testing

/// `select=` aggregates as PostgREST 12 parses them (`count()`, `col.sum()`, aliases, casts before and after), and
/// the plan they resolve to: result types, the implicit GROUP BY, PGRST123 while they are off.
@Suite struct AggregateParsingTests {
    static let places = TableSchema("places", columns: [
        Column("id", .text, nullable: false), Column("category", .text), Column("rating", .double), Column("visits", .integer),
        Column("is_open", .boolean), Column("data", .json), Column("created_at", .timestamp),
    ], primaryKey: ["id"])

    @Test func aggregatesParseWithAliasesAndCasts() throws {
        #expect(try QueryParser.parseSelect("count()") == [.aggregate(AggregateRequest(function: .count))])
        #expect(try QueryParser.parseSelect("n:count()::text") == [.aggregate(AggregateRequest(function: .count, alias: "n", resultCast: .text))])
        #expect(try QueryParser.parseSelect("category, visits.sum(), rating.avg()") == [
            .column(name: "category", alias: nil, cast: nil),
            .aggregate(AggregateRequest(function: .sum, column: "visits")), .aggregate(AggregateRequest(function: .avg, column: "rating")),
        ])
        #expect(try QueryParser.parseSelect("total:rating::int.sum()::text") == [
            .aggregate(AggregateRequest(function: .sum, column: "rating", alias: "total", inputCast: .int4, resultCast: .text)),
        ])
        #expect(try QueryParser.parseSelect("data->>age::integer.max(),id.count(),id.min()") == [
            .aggregate(AggregateRequest(function: .max, column: "data->>age", inputCast: .int4)),
            .aggregate(AggregateRequest(function: .count, column: "id")), .aggregate(AggregateRequest(function: .min, column: "id")),
        ])
        #expect(try QueryParser.parseSelect("reviews(rating.avg(),n:count())") == [.embed(EmbedRequest(table: "reviews", select: [
            .aggregate(AggregateRequest(function: .avg, column: "rating")), .aggregate(AggregateRequest(function: .count, alias: "n")),
        ]))])
        #expect(try QueryParser.parseSelect("reviews(data->>n::int.sum())") == [.embed(EmbedRequest(table: "reviews", select: [
            .aggregate(AggregateRequest(function: .sum, column: "data->>n", inputCast: .int4)),
        ]))])
        #expect { _ = try QueryParser.parseSelect("reviews(rating.sum()::text)") } throws: { ($0 as? CaravanError)?.code == .unsupportedEmbedding }
        #expect { _ = try QueryParser.parseSelect("places(reviews(rating::text))") } throws: { ($0 as? CaravanError)?.code == .unsupportedEmbedding }
        // Not aggregates: an embed with an empty select, the embedded count of old.
        #expect(try QueryParser.parseSelect("reviews()") == [.embed(EmbedRequest(table: "reviews"))])
        #expect(try QueryParser.parseSelect("reviews(count)") == [.embed(EmbedRequest(table: "reviews", select: [.column(name: "count", alias: nil, cast: nil)]))])
    }

    @Test func malformedAggregatesArePGRST100() {
        for text in ["sum()::", "rating.sum()x", "rating.sum()::decimal128", "*.sum()", ":count()"] {
            #expect(throws: CaravanError.self, "\(text)") { _ = try QueryParser.parseSelect(text) }
        }
    }

    @Test func aggregatesAreRefusedWhileOffEvenInsideEmbeds() throws {
        for select in ["count()", "rating.sum()", "id,reviews(rating.avg())"] {
            let query = Query(select: try QueryParser.parseSelect(select))
            #expect { _ = try ReadPlan(table: Self.places, query: query, access: .constant(true), maxRows: nil, includeCount: false) } throws: { error in
                (error as? CaravanError)?.code == .aggregatesNotAllowed && (error as? CaravanError)?.message == "Use of aggregate functions is not allowed"
            }
        }
    }

    @Test func theGroupingIsEveryColumnThatIsNotAggregated() throws {
        let query = try QueryParser.parseRead(QueryString("select=category,n:count(),visits.sum(),rating.avg(),created_at.max(),data->>age::int.min()"))
        let plan = try ReadPlan(table: Self.places, query: query, access: .constant(true), maxRows: 100, includeCount: false, aggregates: true)
        #expect(plan.isAggregate)
        #expect(plan.groupBy.map(\.name) == ["category"])
        #expect(plan.outputs.map(\.name) == ["category", "n", "sum", "avg", "max", "min"])
        #expect(plan.outputs.map(\.column.type) == [.text, .integer, .integer, .double, .timestamp, .integer])
        #expect(plan.order.map(\.column.name) == ["category"], "groups come back in the grouping's order unless asked")
        let whole = try ReadPlan(table: Self.places, query: Query(select: [.aggregate(AggregateRequest(function: .count))]), access: .constant(true),
                                 maxRows: nil, includeCount: false, aggregates: true)
        #expect(whole.groupBy.isEmpty && whole.order.isEmpty)
    }

    @Test func wrongAggregatesAreRefusedAsPostgreSQLRefusesThem() throws {
        func error(_ text: String) -> CaravanError? {
            do {
                _ = try ReadPlan(table: Self.places, query: try QueryParser.parseRead(QueryString(text)), access: .constant(true), maxRows: nil,
                                 includeCount: false, aggregates: true)
                return nil
            } catch { return error as? CaravanError }
        }
        #expect(error("select=category.sum()")?.code == .undefinedFunction)
        #expect(error("select=category.sum()")?.message == "function sum(text) does not exist")
        #expect(error("select=is_open.max()")?.code == .undefinedFunction)
        #expect(error("select=nope.sum()")?.code == .unknownColumn)
        #expect(error("select=category,count()&order=rating")?.code == .groupingError)
        #expect(error("select=category,count()&order=rating")?.message == "column \"places.rating\" must appear in the GROUP BY clause or be used in an aggregate function")
        #expect(error("select=category,count()&order=count.desc")?.code == .unknownColumn, "ordering by an aggregate is not served (as PostgREST 12)")
        #expect(error("select=category::text.count()") == nil)
        #expect(error("select=category,count()&order=category.desc") == nil)
    }
}
