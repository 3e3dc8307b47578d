import CaravanCore
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// The one table from Caravan error codes to HTTP status and PostgREST wire codes (wire-protocol §2.10).
enum PostgRESTError {
    static func status(for code: CaravanError.Code, role: Role?) -> (HTTPResponse.Status, String) {
        switch code {
        case .parseError, .limitExceeded: (.badRequest, "PGRST100")
        case .uriTooLong: (.uriTooLong, "CARAVAN_URI_TOO_LONG")
        case .malformedBody: (.badRequest, "PGRST102")
        case .invalidRange: (.rangeNotSatisfiable, "PGRST103")
        case .unknownTable: (.notFound, "PGRST205")
        case .unknownColumn: (.badRequest, "42703")
        case .unknownBodyColumn: (.badRequest, "PGRST204")
        case .unsupportedOperator: (.badRequest, "PGRST127")
        case .unsupportedEmbedding: (.badRequest, "PGRST200")
        case .ambiguousEmbedding: (.multipleChoices, "PGRST201")
        case .aggregatesNotAllowed: (.badRequest, "PGRST123")
        case .undefinedFunction: (.notFound, "42883")
        case .groupingError: (.badRequest, "42803")
        case .singularityViolation: (.notAcceptable, "PGRST116")
        case .notAcceptable: (.notAcceptable, "PGRST107")
        case .invalidSchema: (.notAcceptable, "PGRST106")
        case .invalidValue: (.badRequest, "22P02")
        case .numericOutOfRange: (.badRequest, "22003")
        case .invalidRegularExpression: (.badRequest, "2201B")
        case .invalidEscapeSequence: (.badRequest, "22025")
        case .notNullViolation: (.badRequest, "23502")
        case .checkViolation: (.badRequest, "23514")
        case .uniqueViolation: (.conflict, "23505")
        case .foreignKeyViolation: (.conflict, "23503")
        case .invalidToken: (.unauthorized, "PGRST301")
        case .expiredToken, .invalidTokenClaims: (.unauthorized, "PGRST303")
        case .missingCredentials: (.unauthorized, "PGRST302")
        case .permissionDenied: (role == .authenticated ? .forbidden : .unauthorized, "42501")
        case .unknownFunction: (.notFound, "PGRST202")
        case .methodNotAllowed: (.methodNotAllowed, "PGRST101")
        case .missingFilter: (.badRequest, "21000")
        case .raisedException: (.badRequest, "P0001")
        case .invalidConflictTarget: (.badRequest, "42P10")
        case .invalidPreference: (.badRequest, "PGRST122")
        case .maxAffectedExceeded: (.badRequest, "PGRST124")
        case .maxAffectedNeedsRows: (.badRequest, "PGRST128")
        case .notFound: (.notFound, "P0002")
        case .readOnlyDatabase: (.badRequest, "25006")
        case .storageUnavailable: (.serviceUnavailable, "PGRST001")
        case .invalidTextSearchQuery: (.badRequest, "42601")
        case .invalidParameterValue: (.badRequest, "22023")
        case .undefinedObject: (.badRequest, "42704")
        case .mustRefetch: (.conflict, "CARAVAN_MUST_REFETCH")
        case .notSynced: (.badRequest, "CARAVAN_NOT_SYNCED")
        case .payloadTooLarge: (.contentTooLarge, "CARAVAN_PAYLOAD_TOO_LARGE")
        case .requestTimeout: (.requestTimeout, "CARAVAN_REQUEST_TIMEOUT")
        case .upstreamFailure: (.badGateway, "CARAVAN_UPSTREAM_FAILURE")
        default: (.internalServerError, "XX000")
        }
    }

    /// The `Retry-After` of a 503 (storage unavailable), in seconds.
    static let retryAfterSeconds = 1

    /// The PostgREST error response: `{code, details, hint, message}`, all four keys always.
    /// Unmapped errors become a bare 500 whose detail goes to the log only.
    static func response(for error: any Error, role: Role?, logger: Logger) -> Response {
        let (status, code, object) = wire(for: error, role: role, logger: logger)
        var writer = JSONWriter()
        writer.write(object)
        return response(status: status, code: code, body: writer.bytes, message: object["message"].flatMap { if case .string(let s) = $0 { s } else { nil } } ?? "")
    }

    /// The status, wire code and `{code, details, hint, message}` object of an error (logged when it is internal).
    static func wire(for error: any Error, role: Role?, logger: Logger) -> (HTTPResponse.Status, String, JSONValue) {
        let caravanError: CaravanError
        if let known = error as? CaravanError {
            caravanError = known
        } else {
            logger.error("unexpected error", metadata: ["error.type": "\(type(of: error))", "error": "\(error)"])
            caravanError = CaravanError(.internalFailure, "An internal error occurred")
        }
        var (status, code) = status(for: caravanError.code, role: role)
        if code == "XX000" || code == "PGRST001" {
            logger.error("request failed", metadata: [
                "error.code": "\(caravanError.code)",
                "error.detail": "\(caravanError.internalDetail ?? caravanError.message)",
            ])
        }
        var message = caravanError.message
        var details = caravanError.details
        var hint = caravanError.hint
        if code == "XX000" {
            status = .internalServerError
            message = "An internal error occurred"
            details = nil
            hint = nil
        }
        return (status, code, body(code: code, message: message, details: details, hint: hint))
    }

    /// The error object of the wire: `{code, details, hint, message}`.
    static func body(code: String, message: String, details: String?, hint: String?) -> JSONValue {
        .object([
            ("code", .string(code)),
            ("details", details.map(JSONValue.string) ?? .null),
            ("hint", hint.map(JSONValue.string) ?? .null),
            ("message", .string(message)),
        ])
    }

    /// An error response with `body`, its status' headers (`Retry-After` for 503, `WWW-Authenticate` for 401).
    static func response(status: HTTPResponse.Status, code: String, body: [UInt8], message: String) -> Response {
        var headers: HTTPFields = [
            .contentType: "application/json; charset=utf-8",
            HTTPField.Name("Proxy-Status")!: "PostgREST; error=\(code)",
        ]
        if status == .serviceUnavailable {
            // The database is down or out of connections; the pool reconnects by itself. Ask clients to retry soon.
            headers[.retryAfter] = String(retryAfterSeconds)
        }
        if status == .unauthorized, code.hasPrefix("PGRST3") {
            let description = message.replacingOccurrences(of: "\"", with: "'")
            headers[.wwwAuthenticate] = "Bearer error=\"invalid_token\", error_description=\"\(description)\""
        }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }
}
