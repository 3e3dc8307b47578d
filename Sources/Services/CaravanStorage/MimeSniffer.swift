import CaravanCore
package import Foundation

/// Recognises an object's type from its first bytes (its magic), so a bucket's `allowed_mime_types` holds whatever
/// `Content-Type` a client claims: JPEG, PNG, GIF, WebP and PDF by signature; UTF-8 text without control bytes as
/// `text/plain`, or `application/json` when it parses as a JSON object or array; anything else is
/// `application/octet-stream`.
package enum MimeSniffer {
    /// The types recognised by signature; a claim of one of them is believed only when the bytes carry it.
    package static let signatureTypes: Set<String> = ["image/jpeg", "image/png", "image/gif", "image/webp", "application/pdf"]

    /// The MIME type the bytes show.
    package static func sniff(_ bytes: Data) -> String {
        if let known = signature(bytes) { return known }
        guard isText(bytes) else { return "application/octet-stream" }
        return isJSON(bytes) ? "application/json" : "text/plain"
    }

    static func signature(_ bytes: Data) -> String? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            guard bytes.count >= offset + prefix.count else { return false }
            let start = bytes.startIndex + offset
            return bytes[start..<start + prefix.count].elementsEqual(prefix)
        }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return "image/gif" }
        if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) { return "image/webp" }
        if starts(Array("%PDF-".utf8)) { return "application/pdf" }
        return nil
    }

    /// Valid UTF-8 with no control bytes other than tab, line feed, form feed and carriage return.
    static func isText(_ bytes: Data) -> Bool {
        guard String(validating: bytes, as: UTF8.self) != nil else { return false }
        return !bytes.contains { $0 < 0x20 && ![0x09, 0x0A, 0x0C, 0x0D].contains($0) || $0 == 0x7F }
    }

    static func isJSON(_ bytes: Data) -> Bool {
        guard let first = bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }), first == UInt8(ascii: "{") || first == UInt8(ascii: "[") else {
            return false
        }
        return (try? JSONParser.parse(bytes: Array(bytes))) != nil  // a parse failure only means "not JSON"
    }

    /// The type an upload is stored and checked as: what the bytes show when they carry a signature, or when the
    /// claim names a signature type they do not carry (a text file sent as `image/jpeg` is `text/plain`); the claim
    /// when the bytes are text and the claim is a text type (`text/csv`, `application/json` that parses); the claim
    /// for bytes Caravan cannot recognise (`video/mp4`), else what the bytes show.
    package static func effectiveType(claimed: String?, bytes: Data) -> String {
        let sniffed = sniff(bytes)
        let claim = claimed.map(baseType).flatMap { $0.isEmpty ? nil : $0 }
        guard let claim else { return sniffed }
        if signatureTypes.contains(sniffed) || signatureTypes.contains(claim) { return sniffed }
        switch sniffed {
        case "application/json", "text/plain":
            if claim == "application/json" { return sniffed }
            return isTextType(claim) ? claim : sniffed
        default:
            return isTextType(claim) ? sniffed : claim
        }
    }

    /// `image/jpeg` of `image/JPEG; charset=…`.
    package static func baseType(_ contentType: String) -> String {
        String(contentType.split(separator: ";", maxSplits: 1).first ?? "").trimmingCharacters(in: .whitespaces).lowercased()
    }

    static func isTextType(_ type: String) -> Bool {
        type.hasPrefix("text/") || type.hasSuffix("+json") || type.hasSuffix("+xml")
            || ["application/json", "application/xml", "application/javascript", "image/svg+xml"].contains(type)
    }

    /// Whether `type` is one of `allowed` (exact, `image/*`, or `*/*`, case-insensitive); nil or empty allows any.
    package static func isAllowed(_ type: String, by allowed: [String]?) -> Bool {
        guard let allowed, !allowed.isEmpty else { return true }
        let base = baseType(type)
        return allowed.contains { pattern in
            let wanted = baseType(pattern)
            if wanted == "*/*" || wanted == "*" { return true }
            if wanted.hasSuffix("/*") { return base.hasPrefix(String(wanted.dropLast(1))) }
            return wanted == base
        }
    }
}
