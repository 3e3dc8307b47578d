@testable import CaravanServer
import Testing

/// `Range: bytes=…` as object downloads read it (RFC 9110 §14); the HTTP behaviour on every download route is in
/// `Tests/conformance/test_storage.py` (`test_range_requests`).
@Suite struct StorageByteRangeTests {
    @Test(arguments: [
        ("bytes=0-99", 2048, StorageByteRange.partial(0...99)),
        ("bytes=100-", 2048, .partial(100...2047)),
        ("bytes=-10", 2048, .partial(2038...2047)),
        ("bytes=-5000", 2048, .partial(0...2047)),
        ("bytes=2000-999999999999999999999", 2048, .partial(2000...2047)),
        ("Bytes=5-5", 2048, .partial(5...5)),
        ("bytes=2048-", 2048, .unsatisfiable),
        ("bytes=99999999999999999999999-", 2048, .unsatisfiable),
        ("bytes=-0", 2048, .unsatisfiable),
        ("bytes=0-", 0, .unsatisfiable),
        ("bytes=-1", 0, .unsatisfiable),
        ("bytes=5-2", 2048, .whole),
        ("bytes=0-1,4-5", 2048, .whole),
        ("bytes=-", 2048, .whole),
        ("bytes=a-b", 2048, .whole),
        ("bytes=+1-2", 2048, .whole),
        ("items=0-1", 2048, .whole),
    ] as [(String, Int, StorageByteRange)])
    func parses(header: String, size: Int, expected: StorageByteRange) {
        #expect(StorageByteRange(header: header, size: size) == expected)
    }

    @Test func noHeaderIsTheWholeObject() {
        #expect(StorageByteRange(header: nil, size: 10) == .whole)
    }
}
