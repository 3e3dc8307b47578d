import CaravanCore
import Testing

@Suite("Folding, exhaustively (architecture.md, Search)")
struct FoldingExhaustiveTests {
    @Test(arguments: Array(0x064B...0x065F) + [0x0670])
    func everyTashkeelMarkIsRemoved(mark: Int) throws {
        let scalar = try #require(Unicode.Scalar(UInt32(mark)))
        #expect(TextFolding.fold("ب\(Character(scalar))ت") == "بت")
        #expect(TextFolding.tokens(in: "ب\(Character(scalar))ت") == ["بت"])
    }

    @Test(arguments: ["أ", "إ", "آ", "ٱ", "ا", "\u{0627}\u{0654}", "\u{0627}\u{0655}", "\u{0627}\u{0653}"])
    func everyAlefFormIsBareAlef(alef: String) {
        #expect(TextFolding.fold(alef + "حمد") == "احمد")
    }

    @Test(arguments: [
        ("ى", "ي"), ("ة", "ه"), ("ؤ", "و"), ("ئ", "ي"), ("ـ", ""), ("\u{0651}", ""), ("\u{0670}", ""),
        ("\u{200E}", ""), ("\u{200F}", ""), ("\u{061C}", ""), ("\u{202B}", ""), ("\u{2067}", ""), ("\u{200D}", ""), ("\u{FEFF}", ""),
    ])
    func letterUnificationsAndRemovals(input: String, expected: String) {
        #expect(TextFolding.fold("س" + input + "س") == "س" + expected + "س")
    }

    @Test func shaddaWithVowelAndDaggerAlef() {
        #expect(TextFolding.fold("مُحَمَّدٌ") == "محمد")         // shadda + fatha + tanween
        #expect(TextFolding.fold("هٰذا") == "هذا")              // dagger alef
        #expect(TextFolding.fold("الرَّحْمٰنِ") == "الرحمن")
        #expect(TextFolding.fold("ٱلْمُؤْمِنُونَ") == "المومنون")   // wasla, hamza on waw, sukun
    }

    @Test func digitsOfEveryScript() {
        for (i, scalar) in (0x0660...0x0669).enumerated() {
            #expect(TextFolding.fold(String(Character(Unicode.Scalar(UInt32(scalar))!))) == String(i))
        }
        for (i, scalar) in (0x06F0...0x06F9).enumerated() {
            #expect(TextFolding.fold(String(Character(Unicode.Scalar(UInt32(scalar))!))) == String(i))
        }
        #expect(TextFolding.tokens(in: "مبنى ٥ و ۵ و 5") == ["مبني", "5", "و", "5", "و", "5"])
    }

    @Test func latinCaseAndDiacritics() {
        #expect(TextFolding.fold("ÀÉÎÕÜ àéîõü ÇÑ") == "aeiou aeiou cn")
        #expect(TextFolding.tokens(in: "Crème BRÛLÉE") == ["creme", "brulee"])
    }

    @Test func indexAndQuerySpellingsMeet() {
        // The spellings a user types against the ones stored, from the data's traps.
        let pairs = [("صيدلية أطلس", "صيدليه اطلس"), ("بِك كافيه", "بك كافيه"), ("برو٩٢", "برو92"), ("العزيزية جاليرى", "العزيزيه جاليري"),
                     ("\u{200F}أمانة منطقة الرياض", "امانه منطقه الرياض"), ("حي الأندلس", "حي الاندلس"), ("Café", "CAFE")]
        for (stored, typed) in pairs {
            #expect(TextFolding.tokens(in: stored) == TextFolding.tokens(in: typed), "\(stored) / \(typed)")
        }
    }
}

@Suite("TextQuery: the fts operators' grammars and in-memory matching")
struct TextQueryTests {
    @Test func plainPhraseAndTypeAhead() {
        #expect(TextQuery.allTokens(of: "Café, Nour!") == .and([.term("cafe", prefix: false), .term("nour", prefix: false)]))
        #expect(TextQuery.phrase(of: "coffee hill") == .phrase(["coffee", "hill"]))
        #expect(TextQuery.allTokens(of: "\"*-( ") == .nothing)
        #expect(TextQuery.typeAhead("star") == .or([.term("star", prefix: false), .term("star", prefix: true)]))
    }

    @Test(arguments: [
        ("coffee hill", TextQuery.and([.term("coffee", prefix: false), .term("hill", prefix: false)])),
        ("\"coffee hill\" or kudu", .or([.phrase(["coffee", "hill"]), .term("kudu", prefix: false)])),
        ("coffee -hill", .and([.term("coffee", prefix: false), .not(.term("hill", prefix: false))])),
        ("ORCHARD", .term("orchard", prefix: false)),
        ("or", .nothing), ("\"\"", .nothing), ("ca-va", .phrase(["ca", "va"])),
    ])
    func websearch(input: String, expected: TextQuery) {
        #expect(TextQuery.websearch(input) == expected)
    }

    @Test func tsquerySyntax() throws {
        #expect(try TextQuery.tsquery("coffee & !hill") == .and([.term("coffee", prefix: false), .not(.term("hill", prefix: false))]))
        #expect(try TextQuery.tsquery("(a | b) & star:*") == .and([.or([.term("a", prefix: false), .term("b", prefix: false)]), .term("star", prefix: true)]))
        #expect(try TextQuery.tsquery("coffee <-> hill") == .phrase(["coffee", "hill"]))
        #expect(try TextQuery.tsquery("'coffee hill'") == .phrase(["coffee", "hill"]))
        #expect(try TextQuery.tsquery("  ") == .nothing)
        for bad in ["coffee hill", "a &", "& a", "(a", "a)", "a <-", "'open"] {
            #expect(throws: CaravanError.self, "\(bad)") { try TextQuery.tsquery(bad) }
        }
    }

    @Test func inMemoryMatching() {
        let doc = "Coffee Hill Café — الأندلس"
        #expect(TextQuery.allTokens(of: "hill coffee").matches(text: doc))
        #expect(!TextQuery.phrase(of: "hill coffee").matches(text: doc))
        #expect(TextQuery.phrase(of: "coffee hill").matches(text: doc))
        #expect(TextQuery.websearch("kudu or الاندلس").matches(text: doc))
        #expect(!TextQuery.websearch("coffee -hill").matches(text: doc))
        #expect(TextQuery.typeAhead("caf").matches(text: doc))
        #expect(!TextQuery.nothing.matches(text: doc))
    }

    @Test func trigramSimilarityIsPgTrgmShaped() {
        #expect(TrigramSimilarity.similarity("word", "word") == 1)
        #expect(abs(TrigramSimilarity.similarity("starbuks", "starbucks") - 7.0 / 12.0) < 1e-9)
        #expect(TrigramSimilarity.bestWindowSimilarity(query: "starbuks", text: "Starbucks Olaya Street") > 0.5)
        #expect(TrigramSimilarity.similarity("abc", "xyz") == 0)
    }

    @Test func haversine() {
        // One degree of latitude on the mean sphere.
        #expect(abs(GeoDistance.haversineMeters(latitude1: 24, longitude1: 46, latitude2: 25, longitude2: 46) - 111_195.08) < 0.1)
        let box = GeoDistance.boundingBox(latitude: 24.7, longitude: 46.7, radius: 5000)
        #expect(GeoDistance.haversineMeters(latitude1: 24.7, longitude1: 46.7, latitude2: box.maxLatitude, longitude2: 46.7) >= 4999.99)
        #expect(GeoDistance.haversineMeters(latitude1: 24.7, longitude1: 46.7, latitude2: 24.7, longitude2: box.maxLongitude) >= 4999.99)
    }
}
