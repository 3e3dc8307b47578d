import Foundation

/// The one text normalization Caravan applies to searchable text, identically at index time and at query time
/// (architecture.md, "Search (Arabic and English)").
///
/// `fold` applies, in order:
/// 1. Unicode NFKC (compatibility forms: ligatures such as `ﻻ`, full-width Latin, presentation forms);
/// 2. Unicode lowercasing, plus the case folds lowercasing leaves out (`ß` → `ss`, final sigma `ς` → `σ`);
/// 3. removal of Arabic tashkeel (U+064B–U+065F, U+0670), tatweel (U+0640) and direction marks
///    (U+200E, U+200F, U+061C); also, in the same spirit, the Quranic annotation marks (U+06D6–U+06ED, except the
///    small letters and signs that are not marks), the other invisible bidirectional controls (U+202A–U+202E,
///    U+2066–U+2069), the zero-width (non-)joiners U+200C/U+200D and the byte-order mark U+FEFF;
/// 4. unification of alef forms (`أ إ آ ٱ` → `ا`), `ى` → `ي`, `ة` → `ه`, `ؤ` → `و`, `ئ` → `ي`;
/// 5. Arabic-Indic (U+0660–U+0669) and Eastern Arabic-Indic (U+06F0–U+06F9) digits → ASCII digits;
/// 6. removal of Latin diacritics: combining marks that follow a Latin letter after canonical decomposition
///    (`é` → `e`, `ç` → `c`), and the Latin letters whose stroke or ligature has no decomposition
///    (`ø ł đ ħ ı` → `o l d h i`, `æ œ` → `ae oe`, `þ` → `th`, `ð` → `d`).
///
/// Marks on other scripts (Devanagari vowel signs, Cyrillic `й`) are kept: only Latin letters lose their
/// diacritics. The result is in NFC. Folding is idempotent: `fold(fold(x)) == fold(x)`.
///
/// Tokens are maximal runs of letters, digits and (non-Latin) combining marks in the folded text; every other
/// character separates tokens, except characters that fold to nothing (tatweel, tashkeel, direction marks), which
/// are ignored inside a word. `tokenize(_:)` reports each token with its byte range in the *original* UTF-8 text,
/// which is what a full-text engine's tokenizer callback needs; `tokens(in: fold(x)) == tokens(in: x)`.
///
/// ```swift
/// TextFolding.fold("Café Ça-Va")      // "cafe ca-va"
/// TextFolding.fold("الأَنْدَلُس")         // "الاندلس"
/// TextFolding.tokens(in: "King's Sq.") // ["king", "s", "sq"]
/// ```
public enum TextFolding {
    /// One token of a text: its folded form and the byte range it came from in the original UTF-8 text.
    public struct Token: Sendable, Hashable {
        /// The folded token (non-empty, no separators).
        public let text: String
        /// The token's range in the original text's UTF-8 bytes.
        public let utf8Range: Range<Int>
    }

    /// `text` folded (see the type's documentation).
    public static func fold(_ text: String) -> String {
        if text.utf8.allSatisfy({ $0 < 0x80 }) { return asciiLowercased(text) }
        // Text whose every character is one scalar of the table folds character by character (no normalization
        // crosses such characters: nothing composes with or decomposes into a neighbouring one).
        var folded = ""
        folded.reserveCapacity(text.utf8.count)
        for character in text {
            guard let fold = tabledFold(of: character) else { return foldGeneral(text) }
            folded += fold
        }
        return folded
    }

    /// The folded tokens of `text`, in order.
    public static func tokens(in text: String) -> [String] {
        tokenize(text).map(\.text)
    }

    /// The folded tokens of `text` with their byte ranges in `text`'s UTF-8 form.
    public static func tokenize(_ text: String) -> [Token] {
        tokenize(text) { character in tabledFold(of: character) ?? foldGeneral(String(character)) }
    }

    /// `tokenize` with the fold of each non-ASCII character given by `foldCharacter`.
    static func tokenize(_ text: String, foldingEach foldCharacter: (Character) -> String) -> [Token] {
        var result: [Token] = []
        var current = String.UnicodeScalarView()
        var start = 0
        var end = 0
        var offset = 0
        func flush() {
            if !current.isEmpty {
                result.append(Token(text: String(current), utf8Range: start..<end))
                current = String.UnicodeScalarView()
            }
        }
        for character in text {
            let length = character.utf8.count
            defer { offset += length }
            if character.isASCII, let ascii = character.asciiValue {
                if isASCIITokenByte(ascii) {
                    if current.isEmpty { start = offset }
                    current.append(Unicode.Scalar(ascii >= 0x41 && ascii <= 0x5A ? ascii + 32 : ascii))
                    end = offset + length
                } else {
                    flush()
                }
                continue
            }
            let folded = foldCharacter(character)
            if folded.isEmpty { continue }  // tatweel, tashkeel, direction marks: ignored inside a word
            for scalar in folded.unicodeScalars {
                if isTokenScalar(scalar) {
                    if current.isEmpty { start = offset }
                    current.append(scalar)
                    end = offset + length
                } else {
                    flush()
                }
            }
        }
        flush()
        return result
    }

    /// Whether `scalar` belongs inside a token: letters, digits and combining marks.
    public static func isTokenScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return isASCIITokenByte(UInt8(scalar.value)) }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
             .decimalNumber, .letterNumber, .otherNumber,
             .nonspacingMark, .spacingMark, .enclosingMark:
            return true
        default:
            return false
        }
    }

    // MARK: Implementation

    private static func isASCIITokenByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    private static func asciiLowercased(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return text }
        return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 32 : $0 }, as: UTF8.self)
    }

    /// The fold of a character that is one scalar below `tabledScalars` (Latin, Greek, Cyrillic, Hebrew, Arabic),
    /// from `singleScalarFolds`; nil for any other character.
    private static func tabledFold(of character: Character) -> String? {
        let scalars = character.unicodeScalars
        guard let scalar = scalars.first, scalar.value < tabledScalars,
              scalars.index(after: scalars.startIndex) == scalars.endIndex else { return nil }
        return singleScalarFolds[Int(scalar.value)]
    }

    /// Scalars below this fold through `singleScalarFolds`.
    private static let tabledScalars: UInt32 = 0x0700

    /// `foldGeneral` of each scalar below `tabledScalars` taken as a character of its own, worked out once: text in
    /// those scripts then folds without Foundation's three normalizations per character (the import's tokenizer
    /// spent most of its time in them).
    private static let singleScalarFolds: [String] = (0..<tabledScalars).map { value in
        Unicode.Scalar(value).map { foldGeneral(String(Character($0))) } ?? ""
    }

    /// The fold by the definition: the normalizations and the steps of the type's documentation, on any text.
    static func foldGeneral(_ text: String) -> String {
        let lowered = text.precomposedStringWithCompatibilityMapping.lowercased()
        let decomposed = lowered.decomposedStringWithCanonicalMapping
        var output = String.UnicodeScalarView()
        var afterLatin = false
        for scalar in decomposed.unicodeScalars {
            let value = scalar.value
            if isRemoved(value) { continue }
            if afterLatin, isCombiningDiacritic(value) { continue }
            if let replacement = replacements[value] {
                output.append(contentsOf: replacement.unicodeScalars)
                afterLatin = replacement.unicodeScalars.allSatisfy(isLatinLetter)
                continue
            }
            if (0x0660...0x0669).contains(value) || (0x06F0...0x06F9).contains(value) {
                let digit = value >= 0x06F0 ? value - 0x06F0 : value - 0x0660
                output.append(Unicode.Scalar(UInt8(0x30 + digit)))
                afterLatin = false
                continue
            }
            if !isCombiningDiacritic(value) { afterLatin = isLatinLetter(scalar) }
            output.append(scalar)
        }
        return String(output).precomposedStringWithCanonicalMapping
    }

    /// Tashkeel, tatweel, direction marks and other invisible formatting characters.
    private static func isRemoved(_ value: UInt32) -> Bool {
        (0x064B...0x065F).contains(value) || value == 0x0670 || value == 0x0640
            || value == 0x200E || value == 0x200F || value == 0x061C
            || (0x06D6...0x06DC).contains(value) || (0x06DF...0x06E4).contains(value) || value == 0x06E7 || value == 0x06E8
            || (0x06EA...0x06ED).contains(value)
            || value == 0x200C || value == 0x200D || (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
            || value == 0xFEFF
    }

    /// The combining-diacritic blocks used with Latin letters.
    private static func isCombiningDiacritic(_ value: UInt32) -> Bool {
        (0x0300...0x036F).contains(value) || (0x1AB0...0x1AFF).contains(value) || (0x1DC0...0x1DFF).contains(value)
            || (0x20D0...0x20FF).contains(value) || (0xFE20...0xFE2F).contains(value)
    }

    private static func isLatinLetter(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return (0x41...0x5A).contains(value) || (0x61...0x7A).contains(value) || (0xC0...0x24F).contains(value)
            || (0x1E00...0x1EFF).contains(value) || (0x2C60...0x2C7F).contains(value) || (0xA720...0xA7FF).contains(value)
    }

    /// Single-scalar replacements applied after lowercasing and decomposition.
    private static let replacements: [UInt32: String] = [
        // Arabic letter unification (precomposed forms, in case a decomposition left one).
        0x0623: "\u{0627}", 0x0625: "\u{0627}", 0x0622: "\u{0627}", 0x0671: "\u{0627}",  // أ إ آ ٱ → ا
        0x0649: "\u{064A}",  // ى → ي
        0x0629: "\u{0647}",  // ة → ه
        0x0624: "\u{0648}",  // ؤ → و
        0x0626: "\u{064A}",  // ئ → ي
        // Case folds that lowercasing leaves out.
        0x00DF: "ss", 0x1E9E: "ss", 0x03C2: "\u{03C3}",
        // Latin letters with a stroke or ligature and no canonical decomposition.
        0x00F8: "o", 0x0142: "l", 0x0111: "d", 0x0127: "h", 0x0131: "i", 0x00E6: "ae", 0x0153: "oe",
        0x00FE: "th", 0x00F0: "d", 0x0180: "b", 0x0268: "i", 0x0167: "t",
    ]
}
