import CaravanAuth
import CaravanCore
import HTTPTypes
import Hummingbird

/// OAuth routes, as GoTrue serves them: `GET /authorize` sends the browser to the provider, `GET /callback` brings
/// it back to the app. Neither needs an API key (a browser navigates to them, as Supabase's gateway leaves them open).
extension AuthController {
    func registerOAuth(on group: RouterGroup<CaravanRequestContext>) {
        group.get("/authorize") { request, _ in try await self.authorize(request) }
        group.get("/callback") { request, _ in await self.callback(request) }
    }

    /// `GET /authorize?provider=…&redirect_to=…&scopes=…&code_challenge=…&code_challenge_method=s256`: 302 to the provider.
    func authorize(_ request: Request) async throws -> Response {
        let query = QueryString(request.uri.query ?? "")
        let provider = query.last("provider") ?? ""
        guard !provider.isEmpty else { throw AuthError(.validationFailed, "Unsupported provider: provider could not be found") }
        let url = try await auth.authorizationURL(provider: provider, redirectTo: query.last("redirect_to"), codeChallenge: query.last("code_challenge"),
                                                  codeChallengeMethod: query.last("code_challenge_method"), scopes: query.last("scopes"))
        return Self.redirect(to: url)
    }

    /// `GET /callback?code=…&state=…` (or `?error=…`) from the provider: 302 to the app, with the outcome.
    func callback(_ request: Request) async -> Response {
        let query = QueryString(request.uri.query ?? "")
        let next = await auth.completeOAuth(code: query.last("code"), state: query.last("state"), providerError: query.last("error"),
                                            providerErrorDescription: query.last("error_description"))
        return Self.redirect(to: next)
    }

    static func redirect(to url: String) -> Response {
        Response(status: .found, headers: [.location: url, .cacheControl: "no-store"])
    }
}
