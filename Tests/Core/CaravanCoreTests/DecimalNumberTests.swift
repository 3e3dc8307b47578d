@testable import CaravanCore
import Foundation
import Testing

/// A `Decimal` becomes a JSON number from its parts (`DecimalParts`) when they are small; the oracle is the text
/// path it short-cuts (`description`, read as `JSONParser` reads it): the same value for every decimal tried —
/// integers, fractions, trailing zeros, mantissas of one to seven 16-bit words, exponents from -30 to 30, NaN.
@Suite("Decimal to JSON number")
struct DecimalNumberTests {
    @Test func thePartsGiveWhatTheTextGives() throws {
        var random = SystemRandomNumberGenerator()
        var decimals: [Decimal] = [0, 1, -1, Decimal(string: "24.7136")!, Decimal(string: "4.50")!, Decimal(string: "-0.001")!,
                                   Decimal(string: "9223372036854775807")!, Decimal(string: "-9223372036854775808")!,
                                   Decimal(string: "9223372036854775808")!, Decimal(string: "123456789012345678901234567890")!,
                                   Decimal(sign: .plus, exponent: -1, significand: 450), Decimal.nan]
        for _ in 0..<20_000 {
            let bits = Int.random(in: 1...64, using: &random)
            let mantissa = UInt64.random(in: 0...(bits == 64 ? .max : (1 << bits) - 1), using: &random)
            let decimal = Decimal(sign: Bool.random(using: &random) ? .minus : .plus, exponent: Int.random(in: -30...30, using: &random),
                                  significand: Decimal(mantissa))
            decimals.append(decimal)
            decimals.append(decimal * decimal)   // mantissas past 64 bits
        }
        var shortCut = 0
        for decimal in decimals {
            let fromText = Result { try RecordEncoder.numberFromText(decimal, codingPath: []) }
            let fromParts = Result { try RecordEncoder.number(decimal, codingPath: []) }
            switch (fromText, fromParts) {
            case (.success(let text), .success(let parts)):
                #expect(text == parts, "\(decimal)")
                if case .double(let a) = text, case .double(let b) = parts { #expect(a.bitPattern == b.bitPattern, "\(decimal)") }
            case (.failure, .failure): break
            default: Issue.record("\(decimal): \(fromText) from the text, \(fromParts) from the parts")
            }
            if DecimalParts(decimal) != nil { shortCut += 1 }
        }
        #expect(shortCut > decimals.count / 3, "most decimals tried have parts read from their stored form")
    }
}
