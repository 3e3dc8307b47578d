import CaravanCore
import Foundation

/// A stored object's metadata (`GET /storage/v1/object/info/authenticated/…`).
public struct StorageObjectInfo: Sendable, Hashable {
    public let size: Int64
    /// `"<md5 hex>"`.
    public let etag: String
    /// Which write of the object the server holds (a new one on every write).
    public let version: String
    public let contentType: String?
}

/// `/storage/v1` as the attachments use it (Supabase Storage's object API).
extension CaravanAPI {
    /// `POST /storage/v1/object/{bucket}/{path}` with the bytes as the body; `upsert` (`x-upsert: true`) replaces an
    /// object at that path, else one there refuses the upload (`KeyAlreadyExists`).
    public func uploadObject(bucket: String, path: String, bytes: [UInt8], contentType: String?, upsert: Bool, token: String?) async throws {
        var headers = [("x-upsert", upsert ? "true" : "false")]
        if let contentType { headers.append(("Content-Type", contentType)) }
        _ = try await storage("POST", "/storage/v1/object/" + Self.objectPath(bucket, path), token: token, headers: headers, body: bytes)
    }

    /// The object's metadata as the caller may read it, or nil when there is none (or the caller may not see it).
    public func objectInfo(bucket: String, path: String, token: String?) async throws -> StorageObjectInfo? {
        let response: TransportResponse
        do {
            response = try await storage("GET", "/storage/v1/object/info/authenticated/" + Self.objectPath(bucket, path), token: token, headers: [], body: nil)
        } catch let error as ClientError where error.code == "NoSuchKey" {
            return nil
        }
        let body = (try? JSONParser.parse(bytes: response.body)) ?? .null
        guard case .integer(let size)? = body["size"], case .string(let etag)? = body["etag"], case .string(let version)? = body["version"] else {
            throw ClientError(.local, "an object info reply of another shape")
        }
        let contentType: String? = if case .string(let type)? = body["content_type"] { type } else { nil }
        return StorageObjectInfo(size: size, etag: etag, version: version, contentType: contentType)
    }

    /// `GET /storage/v1/object/authenticated/{bucket}/{path}`: the bytes, their etag and type.
    public func downloadObject(bucket: String, path: String, token: String?) async throws -> (bytes: [UInt8], etag: String?, contentType: String?) {
        let response = try await storage("GET", "/storage/v1/object/authenticated/" + Self.objectPath(bucket, path), token: token, headers: [], body: nil)
        return (response.body, response.header("ETag"), response.header("Content-Type"))
    }

    /// One storage request; a refusal as `ClientError` (storage answers client errors with HTTP 400 and the code in
    /// the body), an expired token as `unauthorized` so that it is refreshed.
    private func storage(_ method: String, _ path: String, token: String?, headers: [(String, String)], body: [UInt8]?) async throws -> TransportResponse {
        let response = try await exchange(method, path, token: token, headers: headers, body: body)
        guard (200..<300).contains(response.status) else {
            let error = Self.error(response, Self.body(of: response))  // not JSON: the status alone speaks
            if error.code == "InvalidJWT" { throw ClientError(.unauthorized, code: error.code, error.message) }
            throw error
        }
        return response
    }

    /// `bucket/each/segment`, each percent-encoded.
    static func objectPath(_ bucket: String, _ path: String) -> String {
        let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.~")
        return ([bucket] + path.split(separator: "/", omittingEmptySubsequences: false).map(String.init))
            .map { $0.addingPercentEncoding(withAllowedCharacters: unreserved) ?? $0 }
            .joined(separator: "/")
    }
}
