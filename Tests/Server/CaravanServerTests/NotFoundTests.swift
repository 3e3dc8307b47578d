import CaravanCore
@testable import CaravanServer
import CaravanTesting
import HTTPTypes
import HummingbirdTesting
import Testing

/// A path no route serves is a JSON 404 in the shape of the client that asked, never an empty body.
@Suite struct NotFoundTests {
    @Test func unknownPathsAnswerJSONInTheirClientsShape() async throws {
        let d = try await PolicyDeployment.make()
        let auth = try await d.request(.userA, .post, "/auth/v1/no-such-route", body: "{}", prefer: nil)
        #expect(auth.status == .notFound)
        #expect(auth.json?["code"] == .string("not_found"))
        let nested = try await d.request(.userA, .get, "/auth/v1/no-such-route/deeper", prefer: nil)
        #expect(nested.status == .notFound && nested.json?["code"] == .string("not_found"))
        let rest = try await d.request(.anon, .post, "/rest/v1/", body: "{}", prefer: nil)
        #expect(rest.status == .notFound && rest.errorCode == "PGRST125")
        #expect(rest.header("Content-Type") == "application/json; charset=utf-8")
        let function = try await d.request(.anon, .post, "/functions/v1/translate-message", body: "{}", prefer: nil)
        #expect(function.status == .notFound && function.json?["code"] == .string("NOT_FOUND"))
        let elsewhere = try await d.request(.anon, .get, "/v2/anything", prefer: nil)
        #expect(elsewhere.status == .notFound)
        #expect(elsewhere.json?["message"] == .string("Not found: GET /v2/anything"))
        // A route that exists is untouched.
        #expect(try await d.request(.anon, .get, "/rest/v1/places?select=id&limit=1", prefer: nil).status == .ok)
    }
}
