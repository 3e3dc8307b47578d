import CaravanAuth
import CaravanCore
import HTTPTypes
import Hummingbird
import Logging

/// A refusal of the admin API (`/admin/api/*`), answered in the PostgREST error shape `{code, details, hint,
/// message}` the rest of the server uses, with stable codes:
///
/// | status | code | when |
/// |---|---|---|
/// | 401 | `CARAVAN_ADMIN_SIGN_IN_REQUIRED` | no key, or only the anon key |
/// | 403 | `CARAVAN_ADMIN_REQUIRED` | a signed-in user's token (exchange an admin's at `POST /admin/api/session`) |
/// | 403 | `CARAVAN_NOT_ADMIN` | `POST /admin/api/session` by a user whose app role is not `admin` |
/// | 4xx | the GoTrue code (`invalid_credentials`, `over_request_rate_limit`, …) | a failed console sign-in |
struct AdminAPIError: Error {
    let status: HTTPResponse.Status
    let code: String
    let message: String
    var hint: String?

    static let signInRequired = AdminAPIError(
        status: .unauthorized, code: "CARAVAN_ADMIN_SIGN_IN_REQUIRED", message: "The admin API needs an admin sign-in or the service_role key",
        hint: "Sign in at /admin with an admin account, or send the service_role key")
    static let adminRequired = AdminAPIError(
        status: .forbidden, code: "CARAVAN_ADMIN_REQUIRED", message: "The admin API is for the service role only",
        hint: "An admin exchanges their access token for a console token at POST /admin/api/session")
    static let notAdmin = AdminAPIError(
        status: .forbidden, code: "CARAVAN_NOT_ADMIN", message: "This account is not an admin",
        hint: "An operator gives the admin role with `caravan user set-role EMAIL admin`")

    /// The response for any error of an admin handler: admin refusals as they are, auth errors with their GoTrue
    /// code and status, Caravan errors through the PostgREST table; anything else a bare 500 (logged).
    static func response(for error: any Error, role: Role?, logger: Logger) -> Response {
        answer(for: error, role: role, logger: logger).response
    }

    /// `response(for:)` with the wire code it carries (counted for failed console sign-ins).
    static func answer(for error: any Error, role: Role?, logger: Logger) -> (response: Response, code: String) {
        switch error {
        case let refusal as AdminAPIError:
            return (refusal.response, refusal.code)
        case let auth as AuthError where auth.code == .notAdmin:
            return (notAdmin.response, notAdmin.code)
        case is AuthError, is AuthHTTPError:
            let (authError, status) = GoTrueError.wire(for: error, route: nil, logger: logger)
            let refusal = AdminAPIError(status: status, code: authError.code.rawValue, message: authError.message)
            var response = refusal.response
            if let retryAfter = GoTrueError.retryAfter(authError, status: status) { response.headers[.retryAfter] = retryAfter }
            return (response, refusal.code)
        default:
            let (status, code, object) = PostgRESTError.wire(for: error, role: role, logger: logger)
            var writer = JSONWriter()
            writer.write(object)
            let message = if case .string(let text)? = object["message"] { text } else { "" }
            return (PostgRESTError.response(status: status, code: code, body: writer.bytes, message: message), code)
        }
    }

    var response: Response {
        var writer = JSONWriter()
        writer.write(PostgRESTError.body(code: code, message: message, details: nil, hint: hint))
        return PostgRESTError.response(status: status, code: code, body: writer.bytes, message: message)
    }
}
