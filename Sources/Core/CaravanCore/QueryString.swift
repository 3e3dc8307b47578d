/// A decoded query string: ordered key/value pairs, repeated keys kept.
///
/// Decoding follows wire-protocol §2.1: split on `&`, then on the first `=`; in key and value turn `+` into a
/// space, then percent-decode as UTF-8. A malformed escape is kept literally.
package struct QueryString: Sendable, Hashable {
    package struct Pair: Sendable, Hashable {
        package let key: String
        package let value: String

        package init(key: String, value: String) {
            self.key = key
            self.value = value
        }
    }

    package let pairs: [Pair]

    package init(pairs: [Pair]) { self.pairs = pairs }

    package init(_ raw: Substring) { self.init(String(raw)) }

    package init(_ raw: String) {
        var pairs: [Pair] = []
        for part in raw.split(separator: "&", omittingEmptySubsequences: true) {
            if let eq = part.firstIndex(of: "=") {
                pairs.append(Pair(key: Self.decode(part[..<eq]), value: Self.decode(part[part.index(after: eq)...])))
            } else {
                pairs.append(Pair(key: Self.decode(part), value: ""))
            }
        }
        self.pairs = pairs
    }

    /// `+` → space, then percent-decoding as UTF-8.
    package static func decode(_ text: Substring) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
                i += 1
            } else if b == UInt8(ascii: "%"), i + 2 < bytes.count + 0, i + 2 <= bytes.count - 1,
                      let high = hexValue(bytes[i + 1]), let low = hexValue(bytes[i + 2]) {
                out.append(high << 4 | low)
                i += 3
            } else {
                out.append(b)
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// The last value of `key`, if any.
    package func last(_ key: String) -> String? {
        pairs.last(where: { $0.key == key })?.value
    }
}
