import Crypto
import Foundation

/// Random tokens, hashes and comparisons auth relies on.
enum Secrets {
    /// `count` random bytes from the system's CSPRNG, base64url without padding.
    static func randomToken(bytes count: Int = 32) -> String {
        var generator = SystemRandomNumberGenerator()
        return base64URL((0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
    }

    /// A uniformly random six-digit code, leading zeros kept.
    static func sixDigitCode() -> String {
        var generator = SystemRandomNumberGenerator()
        let value = Int.random(in: 0..<1_000_000, using: &generator)
        let digits = String(value)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }

    static func sha256Hex(_ text: String) -> String {
        hex(Array(SHA256.hash(data: Data(text.utf8))))
    }

    static func hmacSHA256(key: SymmetricKey, _ text: String) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Data(text.utf8), using: key))
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Compares two strings in time that depends on their lengths only.
    static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for i in 0..<x.count { difference |= x[i] ^ y[i] }
        return difference == 0
    }
}
