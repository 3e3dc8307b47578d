package import CaravanCore

/// An action with abuse limits.
package enum RateLimitedAction: String, Sendable, CaseIterable {
    case signIn = "sign_in"
    case signUp = "sign_up"
    case otp
    case verify
    case refresh
}

/// How many requests an action allows per window, per client IP and per identifier (email or phone).
package struct RateLimit: Sendable, Hashable {
    package var perIP: Int
    /// nil: the action is limited per IP only (sign-up, refresh).
    package var perIdentifier: Int?

    package init(perIP: Int, perIdentifier: Int?) {
        self.perIP = perIP
        self.perIdentifier = perIdentifier
    }
}

/// Where Apple's signing keys come from: a JWKS file or URL.
package enum JWKSSource: Sendable, Hashable {
    case file(String)
    case url(String)

    init(_ text: String) {
        self = text.hasPrefix("https://") || text.hasPrefix("http://") ? .url(text) : .file(text)
    }
}

/// What an email with non-ASCII look-alikes of other characters (`ａdmin@`, full-width) is (`auth_email_lookalikes`).
package enum EmailLookalikes: String, Sendable, Hashable, CaseIterable {
    /// NFKC-folded then lower-cased for the uniqueness key: `ａdmin@example.com` is the account `admin@example.com`.
    case fold
    /// An address that NFKC folding would change is refused: `400 email_address_invalid`.
    case reject
    /// Lower-cased only: `ａdmin@example.com` is an account of its own.
    case allow
}

/// Sign in with Apple: whose tokens to accept.
package struct AppleConfiguration: Sendable, Hashable {
    package var keys: JWKSSource
    /// The app bundle ids and service ids tokens may be issued to (`aud`).
    package var audiences: [String]
    package var issuer = "https://appleid.apple.com"
    /// The provider's name in messages (an OIDC provider's verifier shares this type).
    package var displayName = "Apple"

    package init(keys: JWKSSource, audiences: [String], issuer: String = "https://appleid.apple.com", displayName: String = "Apple") {
        self.keys = keys
        self.audiences = audiences
        self.issuer = issuer
        self.displayName = displayName
    }
}

/// An SMTP relay for outgoing email (plain SMTP with optional AUTH PLAIN; use a local relay for TLS).
package struct SMTPConfiguration: Sendable, Hashable {
    package var host: String
    package var port: Int
    package var username: String?
    package var password: String?
    package var from: String

    package init(host: String, port: Int = 25, username: String? = nil, password: String? = nil, from: String) {
        self.host = host
        self.port = port
        self.username = username
        self.password = password
        self.from = from
    }
}

/// Auth settings. Every key is read through the server's precedence (flags > `CARAVAN_AUTH_*` env > config file).
///
/// - `auth_external_url`: the public base URL; tokens carry `iss = <url>/auth/v1` (default `http://<host>:<port>`)
/// - `auth_jwt_expiry`: access-token lifetime in seconds (default 3600)
/// - `auth_jwt_aud`: the `aud` of issued access tokens, and the one a token carrying `aud` must name (default
///   `authenticated`, as GoTrue's `JWT_AUD` and PostgREST's `jwt-aud`)
/// - `auth_email_lookalikes`: `fold` (default; an email's uniqueness key is NFKC-folded and lower-cased), `reject`
///   (an email NFKC would change is `email_address_invalid`) or `allow` (lower-cased only)
/// - `auth_confirm_email`, `auth_confirm_phone`: sign-up sends a code and returns no session (default false)
/// - `auth_password_min_length` (default 8), `auth_bcrypt_cost` (default 12)
/// - `auth_refresh_reuse_interval`: seconds a rotated refresh token stays usable (default 10, as GoTrue)
/// - `auth_signup_enabled`, `auth_anonymous_enabled` (default true)
/// - `auth_rate_limit_window` in seconds (default 300); `auth_rate_limit_<action>` per IP and
///   `auth_rate_limit_<action>_per_identifier` for sign_in, sign_up, otp, verify, refresh
/// - `auth_apple_jwks` (file path or URL) and `auth_apple_audiences` (comma-separated): Sign in with Apple
/// - `auth_secure_password_change`: a password change from a session older than a day needs the nonce of
///   `GET /reauthenticate` (default false, as GoTrue's `SECURITY_UPDATE_PASSWORD_REQUIRE_REAUTHENTICATION`)
/// - `auth_smtp_host`, `auth_smtp_port`, `auth_smtp_user`, `auth_smtp_password`, `auth_smtp_from`
/// - `auth_site_url`, `auth_uri_allow_list`, `auth_oidc_providers` and `auth_oidc_<name>_*`: OAuth (`OAuthConfiguration`)
package struct AuthConfiguration: Sendable, Hashable {
    package var externalURL: String?
    package var accessTokenLifetime: Int64 = 3600
    package var jwtAudience = "authenticated"
    package var emailLookalikes = EmailLookalikes.fold
    package var confirmEmail = false
    package var confirmPhone = false
    package var minimumPasswordLength = 8
    package var bcryptCost: UInt8 = 12
    package var signupEnabled = true
    package var anonymousEnabled = true
    package var otpLifetime: Int64 = 300
    package var otpMaxAttempts = 5
    package var otpResendInterval: Int64 = 60
    /// A rotated refresh token presented again within this many seconds is tolerated (GoTrue's reuse interval).
    package var refreshReuseInterval: Int64 = 10
    package var rateLimitWindow: Int64 = 300
    package var rateLimits: [RateLimitedAction: RateLimit] = [
        .signIn: RateLimit(perIP: 30, perIdentifier: 10),
        .signUp: RateLimit(perIP: 30, perIdentifier: nil),
        .otp: RateLimit(perIP: 30, perIdentifier: 5),
        .verify: RateLimit(perIP: 30, perIdentifier: 10),
        .refresh: RateLimit(perIP: 150, perIdentifier: nil),
    ]
    /// `auth_secure_password_change`.
    package var securePasswordChange = false
    package var apple: AppleConfiguration?
    package var smtp: SMTPConfiguration?
    /// OAuth/OIDC providers (`auth_oidc_*`), the site URL and the redirect allow-list (see `AuthConfiguration+OIDC`).
    package var oauth = OAuthConfiguration()

    package init() {}

    /// The rules access tokens and keys are verified by.
    package var tokenRules: TokenRules { TokenRules(audience: jwtAudience) }

    /// Every configuration key auth reads.
    package static let keys: [String] = {
        var keys = ["auth_external_url", "auth_jwt_expiry", "auth_jwt_aud", "auth_email_lookalikes", "auth_confirm_email", "auth_confirm_phone", "auth_password_min_length",
                    "auth_bcrypt_cost", "auth_refresh_reuse_interval", "auth_signup_enabled", "auth_anonymous_enabled", "auth_rate_limit_window",
                    "auth_secure_password_change",
                    "auth_apple_jwks", "auth_apple_audiences", "auth_apple_issuer",
                    "auth_smtp_host", "auth_smtp_port", "auth_smtp_user", "auth_smtp_password", "auth_smtp_from"] + OAuthConfiguration.fixedKeys
        for action in RateLimitedAction.allCases {
            keys.append("auth_rate_limit_\(action.rawValue)")
            keys.append("auth_rate_limit_\(action.rawValue)_per_identifier")
        }
        return keys
    }()

    /// Reads the auth keys through `lookup` (which applies the server's precedence).
    package static func resolve(_ lookup: (String) -> String?) throws(CaravanError) -> AuthConfiguration {
        var configuration = AuthConfiguration()
        configuration.externalURL = lookup("auth_external_url").map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
        if let value = try integer(lookup, "auth_jwt_expiry", in: 30...(7 * 24 * 3600)) { configuration.accessTokenLifetime = Int64(value) }
        if let audience = lookup("auth_jwt_aud") {
            guard !audience.isEmpty, audience.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
                throw CaravanError(.invalidValue, "auth_jwt_aud must be a non-empty name without spaces, got \"\(audience)\"")
            }
            configuration.jwtAudience = audience
        }
        if let text = lookup("auth_email_lookalikes") {
            guard let rule = EmailLookalikes(rawValue: text.lowercased()) else {
                throw CaravanError(.invalidValue, "auth_email_lookalikes must be fold, reject or allow, got \"\(text.prefix(32))\"")
            }
            configuration.emailLookalikes = rule
        }
        if let value = try boolean(lookup, "auth_confirm_email") { configuration.confirmEmail = value }
        if let value = try boolean(lookup, "auth_confirm_phone") { configuration.confirmPhone = value }
        if let value = try integer(lookup, "auth_password_min_length", in: 6...72) { configuration.minimumPasswordLength = value }
        if let value = try integer(lookup, "auth_bcrypt_cost", in: 4...31) { configuration.bcryptCost = UInt8(value) }
        if let value = try integer(lookup, "auth_refresh_reuse_interval", in: 0...3600) { configuration.refreshReuseInterval = Int64(value) }
        if let value = try boolean(lookup, "auth_signup_enabled") { configuration.signupEnabled = value }
        if let value = try boolean(lookup, "auth_anonymous_enabled") { configuration.anonymousEnabled = value }
        if let value = try boolean(lookup, "auth_secure_password_change") { configuration.securePasswordChange = value }
        if let value = try integer(lookup, "auth_rate_limit_window", in: 1...86_400) { configuration.rateLimitWindow = Int64(value) }
        for action in RateLimitedAction.allCases {
            let key = "auth_rate_limit_\(action.rawValue)"
            if let value = try integer(lookup, key, in: 1...1_000_000) { configuration.rateLimits[action]?.perIP = value }
            if let value = try integer(lookup, key + "_per_identifier", in: 1...1_000_000) { configuration.rateLimits[action]?.perIdentifier = value }
        }
        if let jwks = lookup("auth_apple_jwks") {
            let audiences = (lookup("auth_apple_audiences") ?? "").split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
            guard !audiences.isEmpty else {
                throw CaravanError(.invalidValue, "auth_apple_jwks needs auth_apple_audiences (your bundle or service ids)")
            }
            configuration.apple = AppleConfiguration(keys: JWKSSource(jwks), audiences: audiences, issuer: lookup("auth_apple_issuer") ?? "https://appleid.apple.com")
        }
        if let host = lookup("auth_smtp_host") {
            guard let from = lookup("auth_smtp_from") else { throw CaravanError(.invalidValue, "auth_smtp_host needs auth_smtp_from") }
            let port = try integer(lookup, "auth_smtp_port", in: 1...65535) ?? 25
            configuration.smtp = SMTPConfiguration(host: host, port: port, username: lookup("auth_smtp_user"), password: lookup("auth_smtp_password"), from: from)
        }
        configuration.oauth = try OAuthConfiguration.resolve(lookup)
        return configuration
    }

    private static func integer(_ lookup: (String) -> String?, _ key: String, in range: ClosedRange<Int>) throws(CaravanError) -> Int? {
        guard let text = lookup(key) else { return nil }
        guard let value = Int(text), range.contains(value) else {
            throw CaravanError(.invalidValue, "\(key) must be an integer from \(range.lowerBound) to \(range.upperBound), got \"\(text)\"")
        }
        return value
    }

    private static func boolean(_ lookup: (String) -> String?, _ key: String) throws(CaravanError) -> Bool? {
        guard let text = lookup(key) else { return nil }
        switch text.lowercased() {
        case "true", "1", "yes", "on": return true
        case "false", "0", "no", "off": return false
        default: throw CaravanError(.invalidValue, "\(key) must be true or false, got \"\(text)\"")
        }
    }
}
