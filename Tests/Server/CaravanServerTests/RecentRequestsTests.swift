import CaravanCore
import CaravanServer
import Testing

/// The request-log tail: a bounded ring of the last requests, with no credential in it.
@Suite struct RecentRequestsTests {
    @Test func theRingKeepsTheLastRequestsOldestFirst() {
        let ring = RecentRequests(capacity: 3, clock: .fixed(microseconds: 1_800_000_000_000_000))
        for n in 1...5 {
            ring.record(method: "GET", path: "/rest/v1/t\(n)", query: nil, status: 200, durationMicroseconds: 1500, role: .anon)
        }
        let kept = ring.entries()
        #expect(kept.map(\.path) == ["/rest/v1/t3", "/rest/v1/t4", "/rest/v1/t5"])
        #expect(kept.map(\.id) == [3, 4, 5])
        #expect(kept.first?.time == 1_800_000_000_000_000)
        #expect(ring.entries(after: 4).map(\.id) == [5])
        #expect(ring.entries(after: 5).isEmpty)
    }

    @Test func credentialsInTheQueryAreNeverKept() {
        #expect(RecentRequests.redacted(path: "/realtime/v1/websocket", query: "apikey=eyJsecret&vsn=1.0.0")
                == "/realtime/v1/websocket?apikey=…&vsn=1.0.0")
        #expect(RecentRequests.redacted(path: "/auth/v1/verify", query: "token=abc&type=signup&redirect_to=x")
                == "/auth/v1/verify?token=…&type=signup&redirect_to=x")
        #expect(RecentRequests.redacted(path: "/storage/v1/object/sign/b/a.png", query: "token=t.k.n") == "/storage/v1/object/sign/b/a.png?token=…")
        #expect(RecentRequests.redacted(path: "/rest/v1/places", query: "select=id&id=eq.kudu") == "/rest/v1/places?select=id&id=eq.kudu")
    }

    @Test func longPathsAreCut() {
        let path = "/rest/v1/places?" + String(repeating: "a", count: 500)
        let shown = RecentRequests.redacted(path: path, query: nil)
        #expect(shown.count == RecentRequests.maxPathLength + 1)
        #expect(shown.hasSuffix("…"))
    }
}
