@testable import CaravanAuth
import Foundation
import Testing

/// TOTP against RFC 6238 Appendix B's SHA-1 vectors (an independent oracle) and the ±1 step window.
@Suite struct TOTPTests {
    /// The RFC's SHA-1 seed is the ASCII "12345678901234567890"; its 8-digit codes at these Unix times.
    @Test(arguments: [
        (59.0, "94287082"), (1_111_111_109.0, "07081804"), (1_111_111_111.0, "14050471"),
        (1_234_567_890.0, "89005924"), (2_000_000_000.0, "69279037"), (20_000_000_000.0, "65353130"),
    ])
    func rfc6238Vectors(time: Double, expected: String) {
        let totp = TOTP(secret: Array("12345678901234567890".utf8), digits: 8)
        #expect(totp.code(at: Date(timeIntervalSince1970: time)) == expected)
        // Six digits are the last six of the same truncated value.
        #expect(TOTP(secret: Array("12345678901234567890".utf8)).code(at: Date(timeIntervalSince1970: time)) == String(expected.suffix(6)))
    }

    @Test func base32RoundTripsAndMatchesRFC4648() {
        #expect(Base32.encode(Array("foobar".utf8)) == "MZXW6YTBOI")
        #expect(Base32.decode("MZXW6YTBOI======") == Array("foobar".utf8))
        #expect(Base32.decode("mzxw6ytb") == Array("fooba".utf8))
        #expect(Base32.decode("MZ1") == nil)
        let secret = TOTP.randomSecret()
        #expect(secret.count == 20 && Base32.decode(Base32.encode(secret)) == secret)
        #expect(TOTP(base32Secret: "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ")?.secret == Array("12345678901234567890".utf8))
    }

    @Test func aCodeMatchesWithinOneStepEitherSide() {
        let totp = TOTP(secret: Array("12345678901234567890".utf8))
        let now = Date(timeIntervalSince1970: 1_111_111_111)
        let step = totp.step(at: now)
        #expect(totp.matchingStep(totp.code(step: step), at: now) == step)
        #expect(totp.matchingStep(totp.code(step: step - 1), at: now) == step - 1)
        #expect(totp.matchingStep(totp.code(step: step + 1), at: now) == step + 1)
        #expect(totp.matchingStep(totp.code(step: step - 2), at: now) == nil)
        #expect(totp.matchingStep(totp.code(step: step + 2), at: now) == nil)
        #expect(totp.matchingStep("12345", at: now) == nil)
        #expect(totp.matchingStep("abcdef", at: now) == nil)
    }

    @Test func theURIFollowsTheKeyURIFormat() {
        let totp = TOTP(secret: Array("foobar".utf8))
        #expect(totp.uri(issuer: "Caravan", account: "a@example.com")
            == "otpauth://totp/Caravan:a@example.com?algorithm=SHA1&digits=6&issuer=Caravan&period=30&secret=MZXW6YTBOI")
    }
}
