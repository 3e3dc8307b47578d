/// The GoTrue `error_code` names (API version 2024-01-01) Caravan answers with. The HTTP status of each is the
/// server's business (CaravanServer's one table from auth codes to statuses); auth knows no HTTP.
package enum AuthErrorCode: String, Sendable, Hashable {
    case validationFailed = "validation_failed"
    /// An email address refused by `auth_email_lookalikes=reject`.
    case emailAddressInvalid = "email_address_invalid"
    case badJSON = "bad_json"
    case invalidCredentials = "invalid_credentials"
    case emailNotConfirmed = "email_not_confirmed"
    case phoneNotConfirmed = "phone_not_confirmed"
    case userAlreadyExists = "user_already_exists"
    case weakPassword = "weak_password"
    case signupDisabled = "signup_disabled"
    case anonymousProviderDisabled = "anonymous_provider_disabled"
    case providerDisabled = "provider_disabled"
    case otpDisabled = "otp_disabled"
    case otpExpired = "otp_expired"
    case noAuthorization = "no_authorization"
    case badJWT = "bad_jwt"
    case notAdmin = "not_admin"
    case userNotFound = "user_not_found"
    case sessionNotFound = "session_not_found"
    case refreshTokenNotFound = "refresh_token_not_found"
    case refreshTokenAlreadyUsed = "refresh_token_already_used"
    case overRequestRateLimit = "over_request_rate_limit"
    case overEmailSendRateLimit = "over_email_send_rate_limit"
    case overSMSSendRateLimit = "over_sms_send_rate_limit"
    case notFound = "not_found"
    /// MFA (GoTrue's `/factors`).
    case mfaFactorNotFound = "mfa_factor_not_found"
    case mfaFactorNameConflict = "mfa_factor_name_conflict"
    case mfaChallengeExpired = "mfa_challenge_expired"
    case mfaVerificationFailed = "mfa_verification_failed"
    case mfaIPAddressMismatch = "mfa_ip_address_mismatch"
    case tooManyEnrolledMFAFactors = "too_many_enrolled_mfa_factors"
    case insufficientAAL = "insufficient_aal"
    /// A password change needs a reauthentication nonce (`auth_secure_password_change`).
    case reauthenticationNeeded = "reauthentication_needed"
    case reauthenticationNotValid = "reauthentication_not_valid"
    case unexpectedFailure = "unexpected_failure"
    /// The request body stopped arriving (HTTP 408).
    case requestTimeout = "request_timeout"
    /// The database (or another service auth needs, such as Apple's keys) is unavailable for now; retry soon.
    case serviceUnavailable = "service_unavailable"
    /// OAuth/PKCE (`/authorize`, `/callback`, `grant_type=pkce`), as GoTrue names them.
    case flowStateNotFound = "flow_state_not_found"
    case flowStateExpired = "flow_state_expired"
    case badCodeVerifier = "bad_code_verifier"
    case badOAuthState = "bad_oauth_state"
    case badOAuthCallback = "bad_oauth_callback"
}

/// Why a password is weak (`weak_password.reasons`).
package enum WeakPasswordReason: String, Sendable, Hashable {
    case length
    case characters
}

/// An auth failure: a stable code, a message safe to show the client, and (for logs only) what went wrong inside.
package struct AuthError: Error, Sendable, CustomStringConvertible {
    package let code: AuthErrorCode
    package let message: String
    package let weakPasswordReasons: [WeakPasswordReason]
    /// Never sent to a client.
    package let internalDetail: String?
    /// For a rate-limit refusal: seconds until a retry can succeed (`Retry-After`).
    package let retryAfter: Int64?

    package init(_ code: AuthErrorCode, _ message: String, weakPasswordReasons: [WeakPasswordReason] = [], internalDetail: String? = nil,
                retryAfter: Int64? = nil) {
        self.code = code
        self.message = message
        self.weakPasswordReasons = weakPasswordReasons
        self.internalDetail = internalDetail
        self.retryAfter = retryAfter
    }

    package var description: String { "AuthError(\(code.rawValue)): \(message)" }

    static func invalidField(_ message: String) -> AuthError { AuthError(.validationFailed, message) }
    static let wrongCredentials = AuthError(.invalidCredentials, "Invalid login credentials")
    static let codeInvalid = AuthError(.otpExpired, "Token has expired or is invalid")
}
