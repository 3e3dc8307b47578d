@testable import CaravanClient
import CaravanCore
import Testing

/// The realtime client's hold on a server transaction's events: applied when all have come, in transaction order.
@Suite("Live transactions")
struct LiveTransactionsTests {
    static func change(_ seq: Int64, _ table: String = "favorites") -> LiveChange {
        LiveChange(seq: seq, table: table, type: "INSERT", key: .object([("id", .string("r\(seq)"))]), record: .object([("id", .string("r\(seq)"))]))
    }

    @Test func aTransactionIsHandedOutWholeAndInOrder() {
        var open = LiveTransactions()
        // Transaction 10 reaches this socket on two channels (favorites, then places); 12 on favorites alone.
        let half = open.add(Self.change(10), transaction: 10, events: 2, pulled: false)
        #expect(half.isEmpty, "half of 10: held")
        let later = open.add(Self.change(12), transaction: 12, events: 1, pulled: false)
        #expect(later.isEmpty, "12 is whole, but 10 came first and is open")
        let ready = open.add(Self.change(11, "places"), transaction: 10, events: 2, pulled: false)
        #expect(ready.map { $0.map(\.seq) } == [[10, 11], [12]])
        #expect(open.isEmpty)
        let single = open.add(Self.change(20), transaction: 20, events: 1, pulled: false)
        #expect(single.map { $0.map(\.seq) } == [[20]], "one event, at once")
    }

    @Test func aLostTailIsGivenUpAfterTwoTicksAndPulledEventsCountButAreNotKept() {
        var open = LiveTransactions()
        _ = open.add(Self.change(30), transaction: 30, events: 3, pulled: false)
        let first = open.tick(), second = open.tick()
        #expect(!first, "one tick: still waiting")
        #expect(second, "two ticks: the rest is lost, pull")
        open.reset()
        let late = open.add(Self.change(31), transaction: 30, events: 3, pulled: true)
        #expect(late.isEmpty && open.isEmpty,
                "a late event of a transaction the pull brought is ignored")
        // A pull in the middle of a transaction: the events it reflected count towards the whole but are not applied.
        _ = open.add(Self.change(40), transaction: 40, events: 3, pulled: false)
        open.drop(through: 40)
        _ = open.add(Self.change(41), transaction: 40, events: 3, pulled: true)
        let rest = open.add(Self.change(42), transaction: 40, events: 3, pulled: false)
        #expect(rest.map { $0.map(\.seq) } == [[42]])
    }
}
