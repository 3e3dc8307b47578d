import CaravanAuth
import CaravanCore
import CaravanTesting
import CaravanServer
import Foundation
import HTTPTypes
import HummingbirdTesting
import Testing

/// Tokens are read as PostgREST reads them: one exact spelling per signature, `exp` required, `nbf`/`iat` with a
/// small leeway, `aud` checked; every refusal is a 401 with PostgREST's code and message.
@Suite("Strict JWTs")
struct StrictTokenTests {
    static let now: Int64 = 1_800_000_000

    private func deployment() async throws -> (TestDeployment, TokenVerifier) {
        let deployment = try await TestDeployment.make(now: { Self.now })
        return (deployment, deployment.services.verifier)
    }

    private func user(_ extra: [(String, JSONValue)]) -> JSONValue {
        var claims: [(String, JSONValue)] = [("sub", .string("00000000-0000-4000-8000-000000000001")), ("role", .string("authenticated"))]
        for (key, value) in extra {
            claims.removeAll { $0.0 == key }
            claims.append((key, value))
        }
        return .object(claims)
    }

    private func rest(_ deployment: TestDeployment, bearer: String) async throws -> TestResponse {
        try await deployment.get("/rest/v1/places?select=id&limit=1", headers: [.authorization: "Bearer \(bearer)"])
    }

    @Test func anExactTokenIsAcceptedAndEveryOtherSpellingOfItsSignatureIsNot() async throws {
        let (deployment, verifier) = try await deployment()
        let token = try await verifier.issueToken(claims: user([("exp", .integer(Self.now + 600)), ("aud", .string("authenticated"))]))
        #expect(try await rest(deployment, bearer: token).status == .ok)
        let parts = token.split(separator: ".").map(String.init)
        let signature = parts[2]
        // A last character with the same six bits' leading part: decodes to the same signature bytes.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let lastIndex = alphabet.firstIndex(of: signature.last!)!
        let sibling = String(signature.dropLast()) + String(alphabet[lastIndex | 0x01])
        let respellings = [
            token + "=",                                               // padding
            parts[0] + "." + parts[1] + "." + signature + "==",
            " " + token,                                               // whitespace inside the header value
            parts[0] + ".\n" + parts[1] + "." + signature,
            parts[0] + "." + parts[1] + "." + sibling,                 // stray trailing bits
            parts[0] + "." + parts[1] + "." + signature.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                + (signature.contains("-") || signature.contains("_") ? "" : "+"),
            token + ".extra",
        ]
        for spelling in respellings {
            let response = try await rest(deployment, bearer: spelling)
            #expect(response.status == .unauthorized, "\(spelling.debugDescription)")
            #expect(response.errorCode == "PGRST301", "\(spelling.debugDescription)")
            #expect(response.json?["hint"] != nil && response.json?["details"] != nil)
        }
    }

    @Test func registeredClaimsAreCheckedWithPostgRESTsMessages() async throws {
        let (deployment, verifier) = try await deployment()
        let cases: [([(String, JSONValue)], String)] = [
            ([], "The JWT 'exp' claim must be a number"),
            ([("exp", .null)], "The JWT 'exp' claim must be a number"),
            ([("exp", .string("\(Self.now + 600)"))], "The JWT 'exp' claim must be a number"),
            ([("exp", .integer(Self.now - 1))], "JWT expired"),
            ([("exp", .integer(Self.now + 600)), ("nbf", .integer(Self.now + 120))], "JWT not yet valid"),
            ([("exp", .integer(Self.now + 600)), ("nbf", .string("soon"))], "The JWT 'nbf' claim must be a number"),
            ([("exp", .integer(Self.now + 600)), ("iat", .integer(Self.now + 3600))], "JWT issued at future"),
            ([("exp", .integer(Self.now + 600)), ("aud", .string("someone-else"))], "JWT not in audience"),
            ([("exp", .integer(Self.now + 600)), ("aud", .array([.string("a"), .string("b")]))], "JWT not in audience"),
            ([("exp", .integer(Self.now + 600)), ("aud", .integer(1))], "The JWT 'aud' claim must be a string or an array of strings"),
        ]
        for (claims, message) in cases {
            let token = try await verifier.issueToken(claims: user(claims))
            let response = try await rest(deployment, bearer: token)
            #expect(response.status == .unauthorized, "\(message)")
            #expect(response.errorCode == "PGRST303", "\(message)")
            #expect(response.json?["message"] == .string(message))
            #expect(response.header("WWW-Authenticate")?.hasPrefix("Bearer error=\"invalid_token\"") == true)
        }
        // Within the leeway, an array naming the audience, and no `aud` at all (the API keys) are accepted.
        let accepted: [[(String, JSONValue)]] = [
            [("exp", .integer(Self.now + 600)), ("nbf", .integer(Self.now + 10)), ("iat", .double(Double(Self.now) + 10.5))],
            [("exp", .double(Double(Self.now) + 600.5)), ("aud", .array([.string("other"), .string("authenticated")]))],
            [("exp", .integer(Self.now + 600))],
        ]
        for claims in accepted {
            let token = try await verifier.issueToken(claims: user(claims))
            #expect(try await rest(deployment, bearer: token).status == .ok, "\(claims)")
        }
    }

    @Test func theAudienceIsASetting() async throws {
        var configuration = try AuthConfiguration.resolve { $0 == "auth_jwt_aud" ? "langmatcher" : nil }
        #expect(configuration.jwtAudience == "langmatcher")
        #expect(throws: CaravanError.self) { try AuthConfiguration.resolve { $0 == "auth_jwt_aud" ? "two words" : nil } }
        configuration = AuthConfiguration()
        #expect(configuration.tokenRules.audience == "authenticated")
        let secret = try SigningSecret(bytes: Array(repeating: 7, count: 32), createdAt: Self.now)
        let verifier = await TokenVerifier(secret: secret, rules: TokenRules(audience: "langmatcher"), now: { Self.now })
        let ours = try await verifier.issueToken(claims: user([("exp", .integer(Self.now + 600)), ("aud", .string("langmatcher"))]))
        #expect(try await verifier.identity(for: ours).role == .authenticated)
        let theirs = try await verifier.issueToken(claims: user([("exp", .integer(Self.now + 600)), ("aud", .string("authenticated"))]))
        await #expect(throws: CaravanError.self) { try await verifier.identity(for: theirs) }
    }

    @Test func signedURLTokensAreSpelledExactlyToo() async throws {
        let (_, verifier) = try await deployment()
        let token = try await verifier.issueToken(claims: .object([("url", .string("b/x")), ("exp", .integer(Self.now + 60))]))
        #expect(try await verifier.verifiedClaims(of: token)["url"] == .string("b/x"))
        await #expect(throws: CaravanError.self) { try await verifier.verifiedClaims(of: token + "=") }
        let noExpiry = try await verifier.issueToken(claims: .object([("url", .string("b/x"))]))
        await #expect(throws: CaravanError.self) { try await verifier.verifiedClaims(of: noExpiry) }
    }
}
