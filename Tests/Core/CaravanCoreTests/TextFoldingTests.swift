@testable import CaravanCore
import CaravanTesting
import Foundation
import Testing

@Suite("Text folding (architecture.md, Search)")
struct TextFoldingTests {
    @Test(arguments: [
        // NFKC: ligatures, full-width, superscripts, Arabic presentation forms.
        ("ﬁle", "file"), ("ＡＢＣ１２", "abc12"), ("x²", "x2"), ("\u{FEFB}", "لا"),
        // Tashkeel, superscript alef, tatweel, direction marks.
        ("مُحَمَّد", "محمد"), ("رحمٰن", "رحمن"), ("مـــدرسة", "مدرسه"), ("\u{200F}الرياض\u{200E}", "الرياض"), ("a\u{061C}b", "ab"),
        // Alef forms, alef maqsura, taa marbuta, hamza on waw / yaa.
        ("أحمد", "احمد"), ("إسلام", "اسلام"), ("آمنة", "امنه"), ("ٱلله", "الله"), ("مستشفى", "مستشفي"),
        ("مؤسسة", "موسسه"), ("مسائل", "مسايل"),
        // Arabic-Indic and Eastern Arabic-Indic digits.
        ("٠١٢٣٤٥٦٧٨٩", "0123456789"), ("۰۱۲۳۴۵۶۷۸۹", "0123456789"), ("شارع ١٥", "شارع 15"),
        // Latin case and diacritics.
        ("CAFÉ Crème", "cafe creme"), ("São Paulo", "sao paulo"), ("Circulação", "circulacao"), ("Straße", "strasse"),
        ("ŁÓDŹ", "lodz"), ("Øresund", "oresund"), ("Æsir", "aesir"), ("İstanbul", "istanbul"), ("e\u{0301}", "e"),
        // Marks of other scripts stay; Cyrillic й is not a Latin letter with a diacritic.
        ("й", "й"), ("हिन्दी", "हिन्दी"),
        // Plain ASCII, punctuation kept.
        ("King's Sq.", "king's sq."), ("", ""),
    ])
    func folds(input: String, expected: String) {
        #expect(TextFolding.fold(input) == expected)
    }

    @Test func hamzaAndBareAlefSpellingsFoldAlike() {
        // districts.csv spells حي الاندلس with a bare alef where OSM writes الأندلس.
        #expect(TextFolding.fold("حي الأندلس") == TextFolding.fold("حي الاندلس"))
        #expect(TextFolding.fold("مدرسة") == TextFolding.fold("مدرسه"))
        #expect(TextFolding.fold("على") == TextFolding.fold("علي"))
    }

    @Test func tokenizesOnSeparatorsWithRangesInTheOriginalText() {
        let text = "Café  Ça-Va, ١٢ الأندلس"
        let tokens = TextFolding.tokenize(text)
        #expect(tokens.map(\.text) == ["cafe", "ca", "va", "12", "الاندلس"])
        let bytes = Array(text.utf8)
        let originals = tokens.map { String(decoding: bytes[$0.utf8Range], as: UTF8.self) }
        #expect(originals == ["Café", "Ça", "Va", "١٢", "الأندلس"])
    }

    @Test func charactersThatFoldToNothingDoNotSplitWords() {
        #expect(TextFolding.tokens(in: "مـدرسة") == ["مدرسه"])
        #expect(TextFolding.tokens(in: "ab\u{200F}cd") == ["abcd"])
        #expect(TextFolding.tokens(in: "\"*-NEAR( OR") == ["near", "or"])
        #expect(TextFolding.tokens(in: "🚌 bus") == ["bus"])
        #expect(TextFolding.tokens(in: "") == [])
    }

    @Test func foldingIsIdempotentAndTokensAgreeWithFoldedText() throws {
        var samples = ["Café Ça-Va", "مُحَمَّد الأَنْدَلُس", "ﬁ ＡＢＣ", "Straße ŁÓDŹ", "١٢٣ abc", "İstanbul", "x\u{0301}\u{0627}\u{0654}"]
        if let districts = sharedDataFile("riyadh/districts.csv") {
            samples += try String(contentsOfFile: districts, encoding: .utf8).split(separator: "\n").map(String.init)
        }
        if let sentences = sharedDataFile("languages/tatoeba_ara_eng.tsv") {
            samples += try String(contentsOfFile: sentences, encoding: .utf8).split(separator: "\n").prefix(3000).map(String.init)
        }
        for sample in samples {
            let folded = TextFolding.fold(sample)
            #expect(TextFolding.fold(folded) == folded, "not idempotent: \(sample)")
            #expect(TextFolding.tokens(in: folded) == TextFolding.tokens(in: sample), "tokens differ after folding: \(sample)")
        }
    }

    /// Folding character by character from the precomputed table must give what the normalizations give on the
    /// whole text, for folding and for tokens: checked on every scalar of the table, on mixed-script samples, and on
    /// the real data sets' text.
    @Test func theTableFoldsAsTheNormalizationsDo() throws {
        var samples = ["Café Ça-Va", "مُحَمَّد الأَنْدَلُس", "ﬁ ＡＢＣ", "Straße ŁÓDŹ", "١٢٣ abc", "İstanbul", "x\u{0301}\u{0627}\u{0654}",
                       "ΣΟΦΙΑ σοφίας", "Москва й", "שָׁלוֹם", "a\r\nb", "e\u{0301}\u{0301}", "\u{0654}أ", "ﻻ لا"]
        samples.append(String(String.UnicodeScalarView((0..<0x0700).compactMap(Unicode.Scalar.init))))
        for path in ["riyadh/districts.csv", "languages/tatoeba_ara_eng.tsv", "riyadh/places.json"].compactMap(sharedDataFile) {
            samples += try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").prefix(4000).map(String.init)
        }
        for sample in samples {
            #expect(TextFolding.fold(sample) == TextFolding.foldGeneral(sample), "fold differs: \(sample)")
            let reference = TextFolding.tokenize(sample) { TextFolding.foldGeneral(String($0)) }
            #expect(TextFolding.tokenize(sample) == reference, "tokens differ: \(sample)")
        }
        for value in 0..<0x0700 {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let text = String(Character(scalar))
            #expect(TextFolding.fold(text) == TextFolding.foldGeneral(text), "U+\(String(value, radix: 16))")
        }
    }
}
