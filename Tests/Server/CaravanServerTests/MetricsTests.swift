import CaravanAuth
import CaravanCore
import CaravanServer
import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// `GET /metrics`: who may read it, and that the figures follow the traffic (through the real router, with a
/// registry of the test's own).
@Suite struct MetricsTests {
    /// The test deployment with metrics recorded, through one router for every request of a test.
    struct Metered {
        let deployment: TestDeployment
        let app: Application<RouterResponder<CaravanRequestContext>>

        init(public isPublic: Bool = false) async throws {
            let base = try await TestDeployment.make()
            let metrics = ServerMetrics()
            let services = base.services
            let metered = CaravanServices(
                store: services.store, catalog: services.catalog, verifier: services.verifier,
                pipeline: WritePipeline(store: services.store, publisher: ChangePublisher(), metrics: WriteMetrics(factory: metrics.factory)),
                auth: nil, metrics: metrics)
            var configuration = base.configuration
            configuration.metricsPublic = isPublic
            deployment = TestDeployment(services: metered, keys: base.keys, secret: base.secret, configuration: configuration)
            app = Application(router: buildRouter(configuration: configuration, services: metered))
        }

        func run(_ requests: [(String, HTTPRequest.Method, String?, String?)]) async throws -> [TestResponse] {
            try await app.test(.router) { client in
                var responses: [TestResponse] = []
                for (uri, method, key, body) in requests {
                    var headers: HTTPFields = [.contentType: "application/json"]
                    if let key { headers[HTTPField.Name("apikey")!] = key }
                    responses.append(try await client.execute(uri: uri, method: method, headers: headers,
                                                              body: body.map { ByteBuffer(string: $0) }))
                }
                return responses
            }
        }

        func scrape() async throws -> String {
            let response = try await run([("/metrics", .get, deployment.keys.serviceRoleKey, nil)])[0]
            #expect(response.status == .ok)
            #expect(response.headers[.contentType]?.hasPrefix("text/plain; version=0.0.4") == true)
            return String(buffer: response.body)
        }
    }

    /// The value of the sample `name` whose labels include every one of `labels` (0 when there is none).
    static func value(_ text: String, _ name: String, _ labels: [String] = []) -> Double {
        for line in text.split(separator: "\n") where line.hasPrefix(name + "{") || line.hasPrefix(name + " ") {
            guard labels.allSatisfy({ line.contains($0) }), let number = line.split(separator: " ").last.flatMap({ Double($0) }) else { continue }
            return number
        }
        return 0
    }

    @Test func metricsNeedTheServiceKeyUnlessPublic() async throws {
        let metered = try await Metered()
        let refused = try await metered.run([("/metrics", .get, nil, nil), ("/metrics", .get, metered.deployment.keys.anonKey, nil)])
        #expect(refused[0].status == .unauthorized)
        #expect(refused[1].status == .unauthorized)
        #expect(String(buffer: refused[1].body).contains("42501"))
        #expect(try await metered.scrape().contains("caravan_http_requests_total"))

        let open = try await Metered(public: true)
        let answered = try await open.run([("/metrics", .get, nil, nil)])
        #expect(answered[0].status == .ok)
    }

    @Test func figuresFollowTheTraffic() async throws {
        let metered = try await Metered()
        let (anon, service) = (metered.deployment.keys.anonKey, metered.deployment.keys.serviceRoleKey)
        let route = #"route="/rest/v1/{table}""#
        let before = try await metered.scrape()
        #expect(Self.value(before, "caravan_http_requests_total", [route, #"method="GET""#, #"status="200""#]) == 0)

        _ = try await metered.run([
            ("/rest/v1/places?select=id", .get, anon, nil),
            ("/rest/v1/places?select=id&limit=1", .get, anon, nil),
            ("/rest/v1/nope", .get, anon, nil),
            ("/rest/v1/categories", .post, service, #"{"id":"metrics","name_ar":"م","name_en":"Metrics"}"#),
            ("/rest/v1/categories", .post, service, #"{"id":"metrics","name_ar":"م","name_en":"Again"}"#),
        ])
        let after = try await metered.scrape()
        #expect(Self.value(after, "caravan_http_requests_total", [route, #"method="GET""#, #"status="200""#]) == 2)
        #expect(Self.value(after, "caravan_http_requests_total", [route, #"method="GET""#, #"status="404""#]) == 1)
        #expect(Self.value(after, "caravan_http_request_duration_seconds_count", [route, #"method="GET""#, #"status="200""#]) == 2)
        #expect(Self.value(after, "caravan_http_request_duration_seconds_bucket", [route, #"status="200""#, #"le="+Inf""#]) == 2)
        #expect(Self.value(after, "caravan_write_transactions_total", [#"outcome="committed""#]) == 1)
        #expect(Self.value(after, "caravan_write_transactions_total", [#"outcome="failed""#]) == 1)  // the duplicate key
        #expect(Self.value(after, "caravan_write_transaction_duration_seconds_count") == 2)
        #expect(Self.value(after, "caravan_changelog_head_seq") > 0)
        #expect(Self.value(after, "caravan_http_requests_total", [#"route="/metrics""#, #"status="200""#]) == 1)
    }
}
