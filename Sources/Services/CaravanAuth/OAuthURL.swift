import Foundation

/// URL pieces of the OAuth flows: form and query encoding, appending to a redirect's query or fragment, and
/// GoTrue's redirect allow-list.
enum OAuthURL {
    /// RFC 3986 unreserved characters stay; everything else is percent-encoded (UTF-8).
    static func percentEncode(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(Character(Unicode.Scalar(byte)))
            default:
                let digits = Array("0123456789ABCDEF")
                out.append("%")
                out.append(digits[Int(byte >> 4)])
                out.append(digits[Int(byte & 0x0F)])
            }
        }
        return out
    }

    static func formEncode(_ pairs: [(String, String)]) -> String {
        pairs.map { "\(percentEncode($0.0))=\(percentEncode($0.1))" }.joined(separator: "&")
    }

    /// `url` with `pairs` added to its query (before any fragment).
    static func addingQuery(_ url: String, _ pairs: [(String, String)]) -> String {
        var base = url, fragment = ""
        if let hash = url.firstIndex(of: "#") {
            base = String(url[..<hash])
            fragment = String(url[hash...])
        }
        let separator = base.contains("?") ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
        return base + separator + formEncode(pairs) + fragment
    }

    /// `url` with its fragment replaced by `pairs` (the implicit flow's tokens, as GoTrue).
    static func withFragment(_ url: String, _ pairs: [(String, String)]) -> String {
        let base = url.firstIndex(of: "#").map { String(url[..<$0]) } ?? url
        return base + "#" + formEncode(pairs)
    }

    /// GoTrue's rule: `redirect_to` is kept when it is on the site URL's host, equals an allow-list entry, or matches
    /// an entry as a glob (`*` any run of characters but `.` and `/`, `**` any run); otherwise the site URL.
    static func allowedRedirect(_ requested: String?, siteURL: String, allowList: [String]) -> String {
        guard let requested, !requested.isEmpty, let url = URLComponents(string: requested), let scheme = url.scheme?.lowercased(),
              !requested.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else { return siteURL }
        // Only web and app schemes; never `javascript:` or `data:`.
        guard scheme != "javascript", scheme != "data", scheme != "vbscript" else { return siteURL }
        if let site = URLComponents(string: siteURL), let siteHost = site.host?.lowercased(), !siteHost.isEmpty,
           url.host?.lowercased() == siteHost, scheme == site.scheme?.lowercased() {
            return requested
        }
        for entry in allowList where entry == requested || glob(entry, matches: requested) {
            return requested
        }
        return siteURL
    }

    /// A glob over characters: `**` matches anything, `*` anything but `.` and `/`, `?` one such character.
    static func glob(_ pattern: String, matches text: String) -> Bool {
        let p = Array(pattern), t = Array(text)
        var memo = [Int: Bool]()
        func match(_ i: Int, _ j: Int) -> Bool {
            let key = i * (t.count + 1) + j
            if let known = memo[key] { return known }
            let result: Bool
            if i == p.count {
                result = j == t.count
            } else if p[i] == "*" {
                let double = i + 1 < p.count && p[i + 1] == "*"
                let next = double ? i + 2 : i + 1
                var k = j, found = match(next, k)
                while !found, k < t.count, double || (t[k] != "." && t[k] != "/") {
                    k += 1
                    found = match(next, k)
                }
                result = found
            } else if p[i] == "?" {
                result = j < t.count && t[j] != "." && t[j] != "/" && match(i + 1, j + 1)
            } else {
                result = j < t.count && p[i] == t[j] && match(i + 1, j + 1)
            }
            memo[key] = result
            return result
        }
        return match(0, 0)
    }
}
