import CaravanAuth
import CaravanCore
import HTTPTypes
import Hummingbird

/// `/auth/v1/factors` (TOTP factors: enroll, challenge, verify, unenroll) and `/auth/v1/reauthenticate`, for the
/// signed-in user of the Bearer token.
extension AuthController {
    func registerMFA(on group: RouterGroup<CaravanRequestContext>) {
        group.post("/factors") { request, context in try await self.enrollFactor(request, context) }
        group.post("/factors/:id/challenge") { request, context in try await self.challengeFactor(request, context) }
        group.post("/factors/:id/verify") { request, context in try await self.verifyFactor(request, context) }
        group.delete("/factors/:id") { request, context in try await self.unenrollFactor(request, context) }
        group.get("/reauthenticate") { request, context in try await self.reauthenticate(request, context) }
    }

    func enrollFactor(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let identity = try await bearer(request)
        let body = try await body(request)
        guard let factorType = try string(body, "factor_type") else {
            throw AuthError(.validationFailed, "factor_type needs to be totp")
        }
        let enrollment = try await auth.enrollFactor(identity, factorType: factorType, friendlyName: try string(body, "friendly_name"),
                                                     issuer: try string(body, "issuer"))
        return Self.json(enrollment.json)
    }

    func challengeFactor(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let identity = try await bearer(request)
        _ = try await body(request)
        let challenge = try await auth.challengeFactor(identity, factorID: try context.parameters.require("id"), client: client(request, context))
        return Self.json(challenge.json)
    }

    func verifyFactor(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let identity = try await bearer(request)
        let body = try await body(request)
        guard let challengeID = try string(body, "challenge_id") else { throw AuthError(.validationFailed, "challenge_id is required") }
        do {
            let session = try await auth.verifyFactor(identity, factorID: try context.parameters.require("id"), challengeID: challengeID,
                                                      code: try string(body, "code") ?? "", client: client(request, context))
            return Self.json(session.json)
        } catch let error as AuthError where error.code == .mfaFactorNotFound && error.message != AuthService.factorNotFound.message {
            // An unknown challenge is 422, an unknown factor 404 (as GoTrue).
            throw AuthHTTPError(error: error, status: .unprocessableContent)
        }
    }

    func unenrollFactor(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        let identity = try await bearer(request)
        do {
            let id = try await auth.unenrollFactor(identity, factorID: try context.parameters.require("id"))
            return Self.json(.object([("id", .string(id))]))
        } catch let error as AuthError where error.code == .insufficientAAL {
            // GoTrue answers a verified factor's unenrollment from an aal1 session with 422, an enrollment with 403.
            throw AuthHTTPError(error: error, status: .unprocessableContent)
        }
    }

    func reauthenticate(_ request: Request, _ context: CaravanRequestContext) async throws -> Response {
        try await auth.reauthenticate(try await bearer(request))
        return Self.json(.object([]))
    }
}
