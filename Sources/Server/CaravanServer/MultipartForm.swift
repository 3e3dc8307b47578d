import Foundation

/// A `multipart/form-data` body (RFC 7578), as storage clients upload: the `file` part with its own
/// `Content-Type`, and text fields (`cacheControl`, `metadata`).
struct MultipartForm {
    struct Part {
        let name: String
        let filename: String?
        let contentType: String?
        let body: Data
    }

    let parts: [Part]

    func part(named name: String) -> Part? { parts.first { $0.name == name } }

    func field(_ name: String) -> String? { part(named: name).map { String(decoding: $0.body, as: UTF8.self) } }

    /// The boundary of a `multipart/form-data; boundary=…` content type, or nil for any other type.
    static func boundary(of contentType: String?) -> String? {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/form-data") else { return nil }
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == "boundary" {
                return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
        }
        return nil
    }

    /// Parses `body`; nil when it is not a well-formed form with that boundary.
    static func parse(_ body: Data, boundary: String) -> MultipartForm? {
        let delimiter = Data("--\(boundary)".utf8)
        let separator = Data("\r\n\r\n".utf8)
        guard var cursor = body.range(of: delimiter)?.upperBound else { return nil }
        var parts: [Part] = []
        while true {
            // After a delimiter: "--" ends the form, CRLF starts a part.
            if body[cursor...].starts(with: Data("--".utf8)) { return MultipartForm(parts: parts) }
            guard body[cursor...].starts(with: Data("\r\n".utf8)) else { return nil }
            cursor += 2
            guard let headerEnd = body.range(of: separator, in: cursor..<body.endIndex),
                  let next = body.range(of: Data("\r\n".utf8) + delimiter, in: headerEnd.upperBound..<body.endIndex) else { return nil }
            let headers = String(decoding: body[cursor..<headerEnd.lowerBound], as: UTF8.self)
            guard let part = part(headers: headers, body: body[headerEnd.upperBound..<next.lowerBound]) else { return nil }
            parts.append(part)
            cursor = next.upperBound
        }
    }

    private static func part(headers: String, body: Data) -> Part? {
        var name: String?, filename: String?, contentType: String?
        for line in headers.split(separator: "\r\n") {
            let pair = line.split(separator: ":", maxSplits: 1)
            guard pair.count == 2 else { continue }
            let value = pair[1].trimmingCharacters(in: .whitespaces)
            switch pair[0].lowercased() {
            case "content-disposition":
                name = parameter("name", in: value)
                filename = parameter("filename", in: value)
            case "content-type":
                contentType = value
            default:
                continue
            }
        }
        guard let name else { return nil }
        return Part(name: name, filename: filename, contentType: contentType, body: Data(body))
    }

    /// The value of `name="…"` in a `Content-Disposition` value.
    private static func parameter(_ name: String, in value: String) -> String? {
        for item in value.split(separator: ";").dropFirst() {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, pair[0].lowercased() == name {
                return pair[1].count >= 2 && pair[1].hasPrefix("\"") && pair[1].hasSuffix("\"") ? String(pair[1].dropFirst().dropLast()) : pair[1]
            }
        }
        return nil
    }
}
