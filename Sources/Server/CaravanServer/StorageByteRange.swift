import Foundation

/// The one byte range of a `Range: bytes=…` request header on an object download (RFC 9110 §14): `a-b`, `a-` or
/// the suffix `-n`, resolved against the object's size.
enum StorageByteRange: Equatable {
    /// Serve these bytes (`lowerBound…upperBound`, inclusive) with 206 and `Content-Range`.
    case partial(ClosedRange<Int>)
    /// Serve the whole object with 200: no header, a header that does not parse, another unit or several ranges
    /// (a server may ignore `Range`, and Caravan does then).
    case whole
    /// 416 with `Content-Range: bytes */size`: the range starts past the end, or is an empty suffix.
    case unsatisfiable

    /// The range `header` asks of an object of `size` bytes.
    init(header: String?, size: Int) {
        guard let header else { self = .whole; return }
        let trimmed = header.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes=") else { self = .whole; return }
        let spec = trimmed.dropFirst("bytes=".count).trimmingCharacters(in: .whitespaces)
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { self = .whole; return }
        let first = spec[..<dash].trimmingCharacters(in: .whitespaces), last = spec[spec.index(after: dash)...].trimmingCharacters(in: .whitespaces)
        guard first.allSatisfy(\.isASCIIDigit), last.allSatisfy(\.isASCIIDigit), !(first.isEmpty && last.isEmpty) else { self = .whole; return }
        if first.isEmpty {
            // A suffix: the last n bytes (all of them when n exceeds the size).
            guard let count = Int(last) else { self = .whole; return }
            guard count > 0, size > 0 else { self = .unsatisfiable; return }
            self = .partial(max(size - count, 0)...(size - 1))
            return
        }
        guard let start = Int(first) else { self = .unsatisfiable; return }  // more digits than an Int: past any end
        let end = last.isEmpty ? nil : (Int(last) ?? Int.max)
        if let end, end < start { self = .whole; return }  // invalid: ignored, as RFC 9110 says
        guard start < size else { self = .unsatisfiable; return }
        self = .partial(start...min(end ?? (size - 1), size - 1))
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
