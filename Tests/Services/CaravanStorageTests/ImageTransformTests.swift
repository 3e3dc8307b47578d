import CaravanCore
import CaravanStorage
import Testing

/// The transform options as storage-api's schema reads them, the token claim, and the output sizes (worked out by
/// hand below: the never-enlarging cover, contain and fill of Supabase's renderer, imgproxy).
@Suite struct ImageTransformTests {
    static func parse(_ query: [String: String]) throws(StorageError) -> ImageTransform { try ImageTransform { query[$0] } }

    static func code(_ query: [String: String]) -> StorageError.Code? {
        do {
            _ = try parse(query)
            return nil
        } catch {
            return error.code
        }
    }

    @Test func queryIsReadAsStorageAPIReadsIt() throws {
        let transform = try Self.parse(["width": "200", "height": "100", "resize": "contain", "quality": "60", "format": "webp"])
        #expect(transform == ImageTransform(width: 200, height: 100, resize: .contain, quality: 60, format: .webp))
        #expect(try Self.parse([:]) == ImageTransform())
        #expect(try Self.parse([:]).resize == .cover)
        // Past the limit is the limit; 0 is "not given" (storage-api clamps, and skips a zero size).
        #expect(try Self.parse(["width": "9000", "height": "0"]) == ImageTransform(width: 2500))
        for bad in [["width": "-1"], ["height": "ten"], ["quality": "19"], ["quality": "101"], ["resize": "stretch"], ["format": "png"], ["width": "1.5"]] {
            #expect(Self.code(bad) == .invalidRequest, "\(bad)")
        }
    }

    @Test func signBodyTransformIsReadToo() throws {
        let json = try JSONParser.parse(#"{"width": 64, "height": "32", "resize": "fill", "format": "origin"}"#)
        #expect(try ImageTransform(json: json) == ImageTransform(width: 64, height: 32, resize: .fill, format: .origin))
        for bad in [#"{"width": "wide"}"#, #"{"resize": 3}"#, #"[1]"#, #"{"quality": 5}"#] {
            let refused = #expect(throws: StorageError.self) { try ImageTransform(json: try JSONParser.parse(bad)) }
            #expect(refused?.code == .invalidRequest, "\(bad)")
        }
    }

    @Test func claimRoundTrips() {
        let transform = ImageTransform(width: 120, height: 80, resize: .contain, quality: 55, format: .webp)
        #expect(transform.claim == "width:120,height:80,resize:contain,quality:55,format:webp")
        #expect(ImageTransform(claim: transform.claim) == transform)
        #expect(ImageTransform(claim: "width:40") == ImageTransform(width: 40))
        #expect(ImageTransform(claim: "") == ImageTransform())
        // storage-api's own claims (resize without a size, an empty value, an unknown part) read as it reads them.
        #expect(ImageTransform(claim: "height:30,resize:fill,gravity:ce,quality:") == ImageTransform(height: 30, resize: .fill))
        #expect(ImageTransform(format: .origin).isEmpty && ImageTransform().isEmpty && !ImageTransform(quality: 50).isEmpty)
    }

    struct PlanCase: Sendable, CustomStringConvertible {
        let transform: ImageTransform
        let source: (Int, Int)
        let expected: ImagePlan
        init(_ transform: ImageTransform, _ sourceWidth: Int, _ sourceHeight: Int, _ width: Int, _ height: Int, crop: Bool) {
            self.transform = transform
            source = (sourceWidth, sourceHeight)
            expected = ImagePlan(width: width, height: height, crop: crop)
        }
        var description: String { "\(transform.claim) on \(source.0)x\(source.1)" }
    }

    static let planCases: [PlanCase] = [
        PlanCase(ImageTransform(), 300, 200, 300, 200, crop: false),
        PlanCase(ImageTransform(width: 150), 300, 200, 150, 100, crop: false),
        PlanCase(ImageTransform(height: 50), 300, 200, 75, 50, crop: false),
        PlanCase(ImageTransform(width: 600), 300, 200, 300, 200, crop: false),  // never enlarged
        PlanCase(ImageTransform(width: 100, height: 100, resize: .cover), 300, 200, 100, 100, crop: true),
        PlanCase(ImageTransform(width: 100, height: 400, resize: .cover), 300, 200, 100, 200, crop: true),  // a box taller than the source
        PlanCase(ImageTransform(width: 600, height: 600, resize: .cover), 300, 200, 300, 200, crop: true),
        PlanCase(ImageTransform(width: 100, height: 100, resize: .contain), 300, 200, 100, 67, crop: false),
        PlanCase(ImageTransform(width: 100, height: 10, resize: .contain), 300, 200, 15, 10, crop: false),
        PlanCase(ImageTransform(width: 600, height: 600, resize: .contain), 300, 200, 300, 200, crop: false),
        PlanCase(ImageTransform(width: 120, height: 30, resize: .fill), 300, 200, 120, 30, crop: false),
        PlanCase(ImageTransform(width: 600, height: 300, resize: .fill), 300, 200, 300, 150, crop: false),  // the box's shape, shrunk to the source
        PlanCase(ImageTransform(width: 100, height: 100, resize: .fill), 50, 200, 50, 50, crop: false),
    ]

    @Test(arguments: planCases)
    func plans(_ item: PlanCase) {
        #expect(ImagePlan(item.transform, sourceWidth: item.source.0, sourceHeight: item.source.1) == item.expected)
    }
}
