@testable import CaravanAuth
import Foundation
import Testing

/// The QR encoder against matrices from an independent encoder, module for module: the same version, mask and modules
/// for a version-1 code and for a TOTP URI of version 8 (which carries version information). The fixtures are the
/// `qrcode` 8.2 Python package's `QRCode(error_correction=ERROR_CORRECT_M, border=0)` with the text as one byte-mode
/// segment, `make(fit=True)`, `get_matrix()` (calling `best_mask_pattern()` on that object afterwards would redraw it).
@Suite("QR codes")
struct QRCodeTests {
    @Test(arguments: [QRFixtures.short, QRFixtures.totpURI].map { QRCase($0) })
    func matchesAnIndependentEncoder(_ fixture: QRCase) throws {
        let code = try #require(QRCode(text: fixture.text))
        #expect(code.version == fixture.version)
        #expect(code.mask == fixture.mask)
        let rows = code.modules.map { String($0.map { $0 ? "#" : "." }) }
        #expect(rows == fixture.rows)
    }

    @Test func reedSolomonMatchesTheStandardsWorkedExample() {
        // ISO/IEC 18004 Annex I: "01234567" in version 1-M has these data codewords and error correction codewords.
        let data: [UInt8] = [16, 32, 12, 86, 97, 128, 236, 17, 236, 17, 236, 17, 236, 17, 236, 17]
        let ec = ReedSolomon.remainder(data, generator: ReedSolomon.generator(degree: 10))
        #expect(ec == [165, 36, 212, 193, 237, 54, 199, 135, 44, 85])
    }

    @Test func theSVGDrawsEveryDarkModuleInsideAQuietZone() throws {
        let code = try #require(QRCode(text: "caravan"))
        let svg = code.svg()
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\""))
        #expect(svg.contains("viewBox=\"0 0 29 29\""))
        let dark = code.modules.reduce(0) { $0 + $1.filter { $0 }.count }
        #expect(svg.components(separatedBy: "h1v1h-1z").count - 1 == dark)
        #expect(svg.contains("M4 4h1v1h-1z"))
    }

    @Test func moreThanVersion20HoldsIsRefused() {
        #expect(QRCode(text: String(repeating: "a", count: 667)) == nil)
        #expect(QRCode(text: String(repeating: "a", count: 666))?.version == 20)
    }
}

struct QRCase: CustomTestStringConvertible, Sendable {
    let text: String
    let version: Int
    let mask: Int
    let rows: [String]
    init(_ tuple: (text: String, version: Int, mask: Int, rows: [String])) {
        (text, version, mask, rows) = tuple
    }
    var testDescription: String { "version \(version)" }
}

enum QRFixtures {
    /// qrcode 8.2 (byte mode, level M, border 0): version 1, mask 0.
    static let short: (text: String, version: Int, mask: Int, rows: [String]) = (
        "caravan", 1, 0, [
            "#######..##...#######",
            "#.....#.##.#..#.....#",
            "#.###.#...#.#.#.###.#",
            "#.###.#..####.#.###.#",
            "#.###.#.#...#.#.###.#",
            "#.....#..#..#.#.....#",
            "#######.#.#.#.#######",
            ".........####........",
            "#.#.#.#..#.#....#..#.",
            "..####..#.....##.#.##",
            "#.##.##.###.#...#####",
            ".#.#.#.##.....###...#",
            ".##.#.#.#.#.#.##.#..#",
            "........#..#.#.###.##",
            "#######....#.####..##",
            "#.....#....###......#",
            "#.###.#.####.##.#..##",
            "#.###.#..#....####.#.",
            "#.###.#.#.#.#..####.#",
            "#.....#.......###..#.",
            "#######.#.#.#.####.##",
        ])
    /// qrcode 8.2 (byte mode, level M, border 0): version 8, mask 3.
    static let totpURI: (text: String, version: Int, mask: Int, rows: [String]) = (
        "otpauth://totp/example.com:noura%40example.com?algorithm=SHA1&digits=6&issuer=example.com&period=30&secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP", 8, 3, [
            "#######.#..#..###..###.##########...##..#.#######",
            "#.....#.######..#..#..##..###...##...####.#.....#",
            "#.###.#...#.###.#..#.##...##.#..###.##.##.#.###.#",
            "#.###.#.#.....##..#..###..#..##....###.#..#.###.#",
            "#.###.#....#.#.#.#.#..########.###.#.#....#.###.#",
            "#.....#..#######.#.##.#...#.#.#.##....#...#.....#",
            "#######.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#.#######",
            "........#.....###.##.##...#.##..##..#.###........",
            "#.##.###.###.#.##.##..########....##....#.#..#.##",
            "##.###....#..#..####.##..#..#.#....###...#####.#.",
            ".####.#..###...##..#..#.#..#..#...###...#...#.#..",
            "#.##.#.#..#.#...##.#.##..##....####.#.#..#.##.##.",
            ".##...##.....###.#.#.#.###...#.#...##.###.##..##.",
            ".....#.#..#.#.##.#..#....##.##..##..###....###..#",
            "##.#####.##..#...##..####.#..##.##.######.##.###.",
            "#.#....###.#...#..#..#.#......####..#.....#.#..#.",
            ".######..#..#..##..#.#.#.....#..#.......#.###...#",
            "###....#.##.#.#.##.#.###...###..#####..###.####..",
            "..#...#..###.#.#..##...#..##.##.##..##..#..###.##",
            "##.##..##.#...#####....##.#.#.##..#.#####.##.#.#.",
            ".#.#..##..#..#.##...##.#...##.##..##.#...#...#...",
            "##...#.##..#.##.####.........##......#.#.###.#.#.",
            ".########..##...##.#.#######.####.#....######....",
            ".##.#...#...#.######..#...#....#....#.###...####.",
            "#.###.#.#...##.#.#.####.#.#..###.#.##...#.#.#####",
            ".#.##...###..#...######...##.#.#.#.######...#####",
            "..#.#####.##..#.##...######...##.....##.########.",
            "##.#.#.#.##.....#.##.#..##..#.#.##.....###.#...##",
            ".#.#..#.#######.##..##...#...#.##.##.#...#.#..##.",
            "#..#.#..##..###.##..#.#...###..#.##.....#..#....#",
            ".#..###.....#.#.#.#.######..#....##.#.##.#####.##",
            "...#.#..##...#.#.#.#.###.#...##.##..#.###....#..#",
            "###.#.####..##..##...#.##..#.....##...#.#.#####.#",
            "#..###...####...####....#..####....###.##.##.#.##",
            ".####.##..#.##.#...#..##.####...#..#######..#....",
            ".....#.#.#.##.#..##...##..#....##.#.#.#########..",
            ".#..#.##.#.....##.######.#...#.#....######..#####",
            "..#..........#....###..#.####..#.#...##.#.#.#####",
            ".#...##..#..##.#....#####...#.#.#..##.####....##.",
            ".###...######...#.....#.########..##.#.....#...##",
            "###...#.##..###.###...######.#####...#..#####.#..",
            "........####..#..##...#...#.##....###...#...###.#",
            "#######.#..#.#.##.#...#.#.#....##.##..#.#.#.#..##",
            "#.....#.###.##..#...#.#...#.#..#..#.##..#...##.#.",
            "#.###.#..#.#....##...########.#..###..########..#",
            "#.###.#.#.######......##.##.####....##....####..#",
            "#.###.#.###.#....#.##......##.##..#....#.#.##..##",
            "#.....#..#..###.#.##.#.#..#.#......#....##...##..",
            "#######.##.###...###...##..#..##.#.######....#.##",
        ])
}
