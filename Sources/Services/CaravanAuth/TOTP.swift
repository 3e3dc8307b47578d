import Crypto
import Foundation

/// RFC 6238 time-based one-time passwords (HMAC-SHA1, 30 s step, 6 digits) over an RFC 4648 base32 secret, as GoTrue's
/// TOTP factors use them. Pure: the caller passes the time, so the ±1 step window is testable without sleeping.
struct TOTP: Sendable, Equatable {
    let secret: [UInt8]
    let digits: Int
    let period: Int

    init(secret: [UInt8], digits: Int = 6, period: Int = 30) {
        self.secret = secret
        self.digits = digits
        self.period = period
    }

    /// A TOTP over a base32 secret (case-insensitive, padding and spaces ignored); nil when it is not base32.
    init?(base32Secret: String, digits: Int = 6, period: Int = 30) {
        guard let bytes = Base32.decode(base32Secret) else { return nil }
        self.init(secret: bytes, digits: digits, period: period)
    }

    /// A fresh 20-byte (160-bit) secret from the system's CSPRNG, the size RFC 4226 recommends.
    static func randomSecret() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<20).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// The time step `date` falls in: `floor(unix seconds / period)`.
    func step(at date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 / Double(period)).rounded(.down))
    }

    /// The code for time step `step` (RFC 4226 HOTP with the step as the counter), leading zeros kept.
    func code(step: Int64) -> String {
        var counter = UInt64(bitPattern: step).bigEndian
        let message = withUnsafeBytes(of: &counter) { Array($0) }
        let mac = Array(HMAC<Insecure.SHA1>.authenticationCode(for: message, using: SymmetricKey(data: secret)))
        let offset = Int(mac[mac.count - 1] & 0x0f)
        let binary = (UInt32(mac[offset] & 0x7f) << 24) | (UInt32(mac[offset + 1]) << 16)
            | (UInt32(mac[offset + 2]) << 8) | UInt32(mac[offset + 3])
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let value = String(binary % modulus)
        return String(repeating: "0", count: max(0, digits - value.count)) + value
    }

    func code(at date: Date) -> String { code(step: step(at: date)) }

    /// The step `code` matches within ±`window` steps of `date` (the current step first), or nil. Compared in constant
    /// time per candidate; a caller refuses a step at or before the last one used, so a code works once.
    func matchingStep(_ code: String, at date: Date, window: Int64 = 1) -> Int64? {
        guard code.count == digits, code.allSatisfy(\.isASCII), code.allSatisfy(\.isNumber) else { return nil }
        let now = step(at: date)
        var candidates: [Int64] = [now]
        for distance in stride(from: Int64(1), through: window, by: 1) { candidates += [now - distance, now + distance] }
        for candidate in candidates {
            if Self.constantTimeEqual(Array(self.code(step: candidate).utf8), Array(code.utf8)) { return candidate }
        }
        return nil
    }

    /// `otpauth://totp/<issuer>:<account>?secret=…&issuer=…` (Key Uri Format), as GoTrue returns it at enrollment.
    func uri(issuer: String, account: String) -> String {
        let label = Self.escape(issuer) + ":" + Self.escape(account)
        return "otpauth://totp/\(label)?algorithm=SHA1&digits=\(digits)&issuer=\(Self.escape(issuer))&period=\(period)&secret=\(Base32.encode(secret))"
    }

    private static func escape(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~@")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    private static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}

/// RFC 4648 base32 (alphabet `A–Z2–7`), unpadded on output as authenticator apps expect.
enum Base32 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    static func encode(_ bytes: [UInt8]) -> String {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | UInt32(byte)
            bits += 8
            while bits >= 5 {
                output.append(alphabet[Int((buffer >> UInt32(bits - 5)) & 31)])
                bits -= 5
            }
        }
        if bits > 0 { output.append(alphabet[Int((buffer << UInt32(5 - bits)) & 31)]) }
        return String(decoding: output, as: UTF8.self)
    }

    static func decode(_ text: String) -> [UInt8]? {
        var output: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for scalar in text.uppercased().utf8 where scalar != UInt8(ascii: "=") && scalar != UInt8(ascii: " ") {
            guard let value = alphabet.firstIndex(of: scalar) else { return nil }
            buffer = (buffer << 5) | UInt32(value)
            bits += 5
            if bits >= 8 {
                output.append(UInt8((buffer >> UInt32(bits - 8)) & 0xff))
                bits -= 8
            }
        }
        return output
    }
}
