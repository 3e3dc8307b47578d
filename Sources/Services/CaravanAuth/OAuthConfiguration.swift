package import CaravanCore

/// One OpenID Connect provider users sign in with (`/authorize` + `/callback`, and `grant_type=id_token`).
/// Endpoints left nil are read from the issuer's `/.well-known/openid-configuration`.
package struct OIDCProviderConfiguration: Sendable, Hashable {
    /// The name clients pass as `provider` (`google`, `keycloak`, …): lower-case letters, digits and `-`.
    package var name: String
    /// The `iss` of its ID tokens, and where discovery is read from.
    package var issuer: String
    package var clientID: String
    /// Sent to the token endpoint only; never logged.
    package var clientSecret: String?
    /// Requested at the provider besides the client's `scopes` (default `openid email profile`).
    package var scopes: [String] = ["openid", "email", "profile"]
    package var authorizationEndpoint: String?
    package var tokenEndpoint: String?
    package var jwksURI: String?
    /// Other client ids whose ID tokens `grant_type=id_token` accepts (an iOS app's, beside the web client's).
    package var additionalClientIDs: [String] = []

    package init(name: String, issuer: String, clientID: String, clientSecret: String? = nil) {
        self.name = name
        self.issuer = issuer
        self.clientID = clientID
        self.clientSecret = clientSecret
    }

    /// The `aud` values an ID token may name.
    package var audiences: [String] { [clientID] + additionalClientIDs }
}

/// OAuth settings, read as GoTrue's `SITE_URL`, `URI_ALLOW_LIST` and `EXTERNAL_<PROVIDER>_*`:
///
/// - `auth_site_url`: where a sign-in ends when `redirect_to` is absent or not allowed (default: the server's URL)
/// - `auth_uri_allow_list`: comma-separated URLs or globs (`*` within a host label or path segment, `**` anything)
///   `redirect_to` may name besides the site URL's host
/// - `auth_oidc_providers`: comma-separated names; for each name `auth_oidc_<name>_issuer`, `_client_id`,
///   `_secret`, `_scopes` (space- or comma-separated), `_authorization_url`, `_token_url`, `_jwks_url`,
///   `_additional_client_ids` (environment `CARAVAN_AUTH_OIDC_<NAME>_CLIENT_ID`, …)
package struct OAuthConfiguration: Sendable, Hashable {
    package var siteURL: String?
    package var allowList: [String] = []
    package var providers: [OIDCProviderConfiguration] = []
    /// How long a started sign-in (`state`) and an issued auth code stay usable, in seconds (GoTrue: 300 for codes).
    package var stateLifetime: Int64 = 600
    package var authCodeLifetime: Int64 = 300

    package init() {}

    package static let fixedKeys = ["auth_site_url", "auth_uri_allow_list", "auth_oidc_providers"]
    static let providerFields = ["issuer", "client_id", "secret", "scopes", "authorization_url", "token_url", "jwks_url", "additional_client_ids"]

    /// Whether `key` is one of a provider's keys (`auth_oidc_<name>_<field>`); the config file accepts those.
    package static func isProviderKey(_ key: String) -> Bool {
        guard key.hasPrefix("auth_oidc_") else { return false }
        let rest = key.dropFirst("auth_oidc_".count)
        return providerFields.contains { field in rest.hasSuffix("_" + field) && rest.count > field.count + 1 }
    }

    package func provider(named name: String) -> OIDCProviderConfiguration? {
        providers.first { $0.name == name || $0.issuer == name }
    }

    static func list(_ text: String?) -> [String] {
        (text ?? "").split(whereSeparator: { $0 == "," || $0 == " " }).map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
    }

    package static func resolve(_ lookup: (String) -> String?) throws(CaravanError) -> OAuthConfiguration {
        var configuration = OAuthConfiguration()
        if let site = lookup("auth_site_url") {
            guard site.hasPrefix("http://") || site.hasPrefix("https://") || site.contains("://") else {
                throw CaravanError(.invalidValue, "auth_site_url must be a URL, got \"\(site.prefix(64))\"")
            }
            configuration.siteURL = site
        }
        configuration.allowList = (lookup("auth_uri_allow_list") ?? "").split(separator: ",").map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
        for name in list(lookup("auth_oidc_providers")) {
            guard name.utf8.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }), name != "apple" else {
                throw CaravanError(.invalidValue, "auth_oidc_providers: \"\(name.prefix(32))\" must be lower-case letters, digits and - (and not apple)")
            }
            let prefix = "auth_oidc_\(name)_"
            guard let issuer = lookup(prefix + "issuer"), issuer.hasPrefix("https://") || issuer.hasPrefix("http://") else {
                throw CaravanError(.invalidValue, "\(prefix)issuer must be the provider's issuer URL")
            }
            guard let clientID = lookup(prefix + "client_id"), !clientID.isEmpty else {
                throw CaravanError(.invalidValue, "\(prefix)client_id is required")
            }
            var provider = OIDCProviderConfiguration(name: name, issuer: issuer,
                                                     clientID: clientID, clientSecret: lookup(prefix + "secret"))
            if let scopes = lookup(prefix + "scopes") { provider.scopes = list(scopes) }
            if !provider.scopes.contains("openid") { provider.scopes.insert("openid", at: 0) }
            provider.authorizationEndpoint = lookup(prefix + "authorization_url")
            provider.tokenEndpoint = lookup(prefix + "token_url")
            provider.jwksURI = lookup(prefix + "jwks_url")
            provider.additionalClientIDs = list(lookup(prefix + "additional_client_ids"))
            configuration.providers.append(provider)
        }
        return configuration
    }
}
