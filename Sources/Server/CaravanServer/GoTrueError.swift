import CaravanAuth
import CaravanCore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// An auth failure the HTTP layer answers with a status other than its code's usual one (a body over the size
/// limit is `validation_failed`, but 413). Only the server raises it: auth itself knows no HTTP.
struct AuthHTTPError: Error {
    let error: AuthError
    let status: HTTPResponse.Status
}

/// The one table from auth error codes to HTTP status and the GoTrue wire body `{code, message}` (API version
/// 2024-01-01), as hummingbird's `HTTPResponseError` pairs an error with its response. Storage outages answer
/// 503 `service_unavailable` with a `Retry-After`, as REST answers 503 `PGRST001`; an unmapped error becomes
/// 500 `unexpected_failure`, its detail logged only.
enum GoTrueError {
    /// The status GoTrue pairs with `code` on `route` (`session_not_found` is 400 on `/token`, 403 elsewhere).
    static func status(for code: AuthErrorCode, route: String? = nil) -> HTTPResponse.Status {
        switch code {
        case .sessionNotFound where route == "/auth/v1/token": .badRequest
        case .validationFailed, .emailAddressInvalid, .badJSON, .invalidCredentials, .emailNotConfirmed, .phoneNotConfirmed, .providerDisabled,
             .refreshTokenNotFound, .refreshTokenAlreadyUsed, .badCodeVerifier, .badOAuthState, .badOAuthCallback,
             .reauthenticationNeeded:
            .badRequest
        case .mfaFactorNotFound: .notFound
        case .mfaFactorNameConflict, .mfaChallengeExpired, .mfaVerificationFailed, .mfaIPAddressMismatch, .tooManyEnrolledMFAFactors,
             .reauthenticationNotValid:
            .unprocessableContent
        case .insufficientAAL: .forbidden
        case .noAuthorization: .unauthorized
        case .badJWT, .notAdmin, .otpExpired, .sessionNotFound: .forbidden
        case .userNotFound, .notFound, .flowStateNotFound: .notFound
        case .userAlreadyExists, .weakPassword, .signupDisabled, .anonymousProviderDisabled, .otpDisabled, .flowStateExpired: .unprocessableContent
        case .overRequestRateLimit, .overEmailSendRateLimit, .overSMSSendRateLimit: .tooManyRequests
        case .unexpectedFailure: .internalServerError
        case .requestTimeout: .requestTimeout
        case .serviceUnavailable: .serviceUnavailable
        }
    }

    /// The `Retry-After` of a 503, in seconds (as REST's).
    static var retryAfterSeconds: Int { PostgRESTError.retryAfterSeconds }

    /// The auth error `error` is answered with, and its status. Errors from below auth are translated here:
    /// validation failures keep their message, storage outages become `service_unavailable`, anything else is
    /// logged and becomes `unexpected_failure`.
    static func wire(for error: any Error, route: String?, logger: Logger) -> (AuthError, HTTPResponse.Status) {
        let authError: AuthError
        switch error {
        case let override as AuthHTTPError:
            return (override.error, override.status)
        case let known as AuthError:
            authError = known
        case let caravan as CaravanError where caravan.code == .invalidValue || caravan.code == .malformedBody:
            authError = AuthError(.validationFailed, caravan.message)
        case let caravan as CaravanError where caravan.code == .requestTimeout:
            authError = AuthError(.requestTimeout, caravan.message)
        case let caravan as CaravanError where caravan.code == .storageUnavailable:
            logger.error("auth storage unavailable", metadata: ["error.detail": "\(caravan.internalDetail ?? caravan.message)"])
            authError = AuthError(.serviceUnavailable, "The service is temporarily unavailable; retry later")
        default:
            logger.error("auth request failed", metadata: ["error.type": "\(type(of: error))", "error": "\(error)"])
            authError = AuthError(.unexpectedFailure, "Unexpected failure, please check server logs for more information")
        }
        if authError.code == .unexpectedFailure || authError.code == .serviceUnavailable, let detail = authError.internalDetail {
            logger.error("auth failure", metadata: ["error.detail": .string(detail)])
        }
        return (authError, status(for: authError.code, route: route))
    }

    /// The GoTrue error response: `{code, message}` (plus `weak_password.reasons`), `Retry-After` on a 503 and a 429.
    static func response(_ authError: AuthError, status: HTTPResponse.Status) -> Response {
        var pairs: [(key: String, value: JSONValue)] = [("code", .string(authError.code.rawValue)), ("message", .string(authError.message))]
        if authError.code == .weakPassword {
            pairs.append(("weak_password", .object([("reasons", .array(authError.weakPasswordReasons.map { .string($0.rawValue) }))])))
        }
        var response = AuthController.json(.object(pairs), status: status)
        if let retryAfter = retryAfter(authError, status: status) {
            response.headers[.retryAfter] = retryAfter
        }
        return response
    }

    /// The `Retry-After` of a 503 (as REST's) or a 429 (the seconds until the refusing window ends).
    static func retryAfter(_ authError: AuthError, status: HTTPResponse.Status) -> String? {
        switch status {
        case .serviceUnavailable: String(retryAfterSeconds)
        case .tooManyRequests: String(max(1, authError.retryAfter ?? Int64(retryAfterSeconds)))
        default: nil
        }
    }
}
