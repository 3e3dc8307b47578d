import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The admin console's static files (`Sources/Server/CaravanServer/AdminConsole`, compiled into the binary by the
/// `EmbedFiles` build plugin), served from memory at `/admin` (the shell, `index.html`) and `/admin/<file>`. They hold no data: every figure
/// the console shows comes from an endpoint that needs the service role.
///
/// Caching: `Cache-Control: no-cache` with a strong `ETag` (the files have no hashed names, so a browser revalidates
/// and gets `304 Not Modified` until an upgrade changes them). Every answer forbids framing and MIME sniffing, and
/// the shell's Content-Security-Policy allows scripts, styles and requests to this origin only (images also from
/// `blob:`/`data:` for storage previews).
struct AdminConsoleAssets: Sendable {
    struct Asset: Sendable {
        let body: ByteBuffer
        let contentType: String
        let etag: String
    }

    let assets: [String: Asset]

    static let contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
        + "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

    /// The files named in `files` (by their name, no folders) whose type is served.
    init(files: [String: Data]) {
        var assets: [String: Asset] = [:]
        for (name, data) in files {
            guard let type = Self.contentType(of: name) else { continue }
            assets[name] = Asset(body: ByteBuffer(bytes: data), contentType: type, etag: Self.etag(of: data))
        }
        self.assets = assets
    }

    /// The files shipped with the server: compiled into it (the `EmbedFiles` build plugin), so the binary needs no
    /// folder beside it.
    static var bundled: AdminConsoleAssets {
        let prefix = "AdminConsole/"
        return AdminConsoleAssets(files: EmbeddedFiles.contents.reduce(into: [:]) { files, entry in
            if entry.key.hasPrefix(prefix), !entry.key.dropFirst(prefix.count).contains("/") { files[String(entry.key.dropFirst(prefix.count))] = entry.value }
        })
    }

    /// A strong validator: FNV-1a 64 of the bytes (not a security boundary; it only tells versions apart).
    static func etag(of data: Data) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in data {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        return "\"" + String(hash, radix: 16) + "-" + String(data.count, radix: 16) + "\""
    }

    static func contentType(of name: String) -> String? {
        switch name.split(separator: ".").last {
        case "html": "text/html; charset=utf-8"
        case "js": "text/javascript; charset=utf-8"
        case "css": "text/css; charset=utf-8"
        case "svg": "image/svg+xml"
        case "png": "image/png"
        case "ico": "image/x-icon"
        default: nil
        }
    }

    func register(on router: Router<CaravanRequestContext>) {
        router.get("/admin") { request, _ in self.serve("index.html", request) }
        router.get("/admin/:file") { request, context in self.serve(context.parameters.get("file") ?? "", request) }
    }

    func serve(_ name: String, _ request: Request) -> Response {
        var headers: HTTPFields = [
            .xContentTypeOptions: "nosniff", HTTPField.Name("X-Frame-Options")!: "DENY", HTTPField.Name("Referrer-Policy")!: "no-referrer",
        ]
        guard let asset = assets[name] else {
            headers[.contentType] = "text/plain; charset=utf-8"
            headers[.cacheControl] = "no-store"
            let text = assets.isEmpty ? "The admin console's files are not installed with this server\n" : "Not found\n"
            return Response(status: .notFound, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        }
        headers[.cacheControl] = "no-cache"
        headers[.eTag] = asset.etag
        if name == "index.html" { headers[.contentSecurityPolicy] = Self.contentSecurityPolicy }
        if let match = request.headers[.ifNoneMatch], match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == asset.etag }) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = asset.contentType
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: asset.body))
    }
}
