/// Content types a browser runs rather than shows: served from the API's origin (the admin console's), they could
/// act as the user who opens them. Unless a bucket opts in, such objects are served as attachments in a sandbox.
package enum ActiveContent {
    /// Whether `contentType` (parameters and case ignored) is HTML, SVG, another XML type, or script.
    package static func isActive(_ contentType: String) -> Bool {
        let base = MimeSniffer.baseType(contentType)
        if base.isEmpty { return false }
        if activeTypes.contains(base) || base.hasSuffix("+xml") { return true }
        return base.hasSuffix("/javascript") || base.hasSuffix("/ecmascript") || base.hasSuffix("/x-javascript")
    }

    private static let activeTypes: Set<String> = [
        "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml", "text/xsl",
        "application/xslt+xml", "text/jscript", "text/livescript", "application/wasm", "multipart/x-mixed-replace",
    ]

    /// The `Content-Security-Policy` of every object served without the bucket's opt-in: nothing loads, nothing runs.
    package static let sandboxPolicy = "default-src 'none'; sandbox"
}
