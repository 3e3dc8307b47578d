/// A QR code (ISO/IEC 18004) of bytes: byte mode, error correction level M, the smallest version from 1 to 20 that
/// holds them, and the mask with the lowest penalty score (scored as the `qrcode` Python package scores it). What
/// authenticator apps scan at TOTP enrollment.
struct QRCode: Sendable, Equatable {
    /// Modules per side (`17 + 4 × version`).
    let size: Int
    let version: Int
    let mask: Int
    /// `modules[row][column]`: true for dark.
    let modules: [[Bool]]

    /// Block structure of level M per version: (EC codewords per block, [(blocks, data codewords per block)]).
    private static let levelM: [(ec: Int, groups: [(count: Int, data: Int)])] = [
        (10, [(1, 16)]), (16, [(1, 28)]), (26, [(1, 44)]), (18, [(2, 32)]), (24, [(2, 43)]),
        (16, [(4, 27)]), (18, [(4, 31)]), (22, [(2, 38), (2, 39)]), (22, [(3, 36), (2, 37)]), (26, [(4, 43), (1, 44)]),
        (30, [(1, 50), (4, 51)]), (22, [(6, 36), (2, 37)]), (22, [(8, 37), (1, 38)]), (24, [(4, 40), (5, 41)]), (24, [(5, 41), (5, 42)]),
        (28, [(7, 45), (3, 46)]), (28, [(10, 46), (1, 47)]), (26, [(9, 43), (4, 44)]), (26, [(3, 44), (11, 45)]), (26, [(3, 41), (13, 42)]),
    ]

    /// Centres of alignment patterns per version (none for version 1).
    private static let alignment: [[Int]] = [
        [], [6, 18], [6, 22], [6, 26], [6, 30], [6, 34], [6, 22, 38], [6, 24, 42], [6, 26, 46], [6, 28, 50],
        [6, 30, 54], [6, 32, 58], [6, 34, 62], [6, 26, 46, 66], [6, 26, 48, 70], [6, 26, 50, 74], [6, 30, 54, 78],
        [6, 30, 56, 82], [6, 30, 58, 86], [6, 34, 62, 90],
    ]

    static let maxVersion = 20

    /// The code of `bytes`, or nil when they exceed version 20's capacity (666 bytes).
    init?(bytes: [UInt8]) {
        guard let version = (1...Self.maxVersion).first(where: { Self.capacityBits($0) >= Self.neededBits(bytes.count, version: $0) }) else {
            return nil
        }
        let codewords = Self.codewords(bytes, version: version)
        var grid = Grid(version: version)
        grid.drawFunctionPatterns()
        grid.place(codewords)
        var best: (mask: Int, score: Int, modules: [[Bool]])?
        for mask in 0..<8 {
            var candidate = grid
            candidate.apply(mask: mask)
            // Scored with the format and version areas light, as the `qrcode` package scores them (the reference these
            // codes are tested against): any mask is valid, this makes the choice the same.
            var scored = candidate
            scored.clearFormatAndVersion()
            let score = scored.penalty()
            candidate.drawFormat(mask: mask)
            if let current = best, current.score <= score { continue }
            best = (mask, score, candidate.dark)
        }
        guard let best else { return nil }
        self.version = version
        self.size = grid.size
        self.mask = best.mask
        self.modules = best.modules
    }

    init?(text: String) { self.init(bytes: Array(text.utf8)) }

    /// The code as SVG: one path of unit squares, dark on a white ground with the 4-module quiet zone, `scale` pixels
    /// per module.
    func svg(scale: Int = 3) -> String {
        let side = size + 8
        var path = ""
        for row in 0..<size {
            for column in 0..<size where modules[row][column] { path += "M\(column + 4) \(row + 4)h1v1h-1z" }
        }
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(side * scale)\" height=\"\(side * scale)\" viewBox=\"0 0 \(side) \(side)\" "
            + "shape-rendering=\"crispEdges\"><rect width=\"\(side)\" height=\"\(side)\" fill=\"#fff\"/><path fill=\"#000\" d=\"\(path)\"/></svg>"
    }

    // MARK: Data

    private static func dataCodewords(_ version: Int) -> Int { levelM[version - 1].groups.reduce(0) { $0 + $1.count * $1.data } }
    private static func capacityBits(_ version: Int) -> Int { dataCodewords(version) * 8 }
    private static func countBits(_ version: Int) -> Int { version < 10 ? 8 : 16 }
    private static func neededBits(_ count: Int, version: Int) -> Int {
        count < (1 << countBits(version)) ? 4 + countBits(version) + 8 * count : Int.max
    }

    /// Data codewords (mode, count, bytes, terminator, padding), split into blocks with their Reed–Solomon codewords,
    /// interleaved.
    static func codewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) { for shift in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) } }
        append(0b0100, 4)
        append(bytes.count, countBits(version))
        for byte in bytes { append(Int(byte), 8) }
        let capacity = capacityBits(version)
        append(0, min(4, capacity - bits.count))
        append(0, (8 - bits.count % 8) % 8)
        var data: [UInt8] = stride(from: 0, to: bits.count, by: 8).map { start in
            (0..<8).reduce(UInt8(0)) { $0 << 1 | (bits[start + $1] ? 1 : 0) }
        }
        var pad: UInt8 = 0xEC
        while data.count < capacity / 8 {
            data.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        let structure = levelM[version - 1]
        var blocks: [[UInt8]] = []
        var offset = 0
        for group in structure.groups {
            for _ in 0..<group.count {
                blocks.append(Array(data[offset..<offset + group.data]))
                offset += group.data
            }
        }
        let generator = ReedSolomon.generator(degree: structure.ec)
        let ecBlocks = blocks.map { ReedSolomon.remainder($0, generator: generator) }
        var result: [UInt8] = []
        for index in 0..<(blocks.map(\.count).max() ?? 0) {
            for block in blocks where index < block.count { result.append(block[index]) }
        }
        for index in 0..<structure.ec {
            for block in ecBlocks { result.append(block[index]) }
        }
        return result
    }

    // MARK: The grid

    private struct Grid {
        let version: Int
        let size: Int
        var dark: [[Bool]]
        var function: [[Bool]]

        init(version: Int) {
            self.version = version
            size = 17 + 4 * version
            dark = Array(repeating: Array(repeating: false, count: size), count: size)
            function = dark
        }

        mutating func set(_ row: Int, _ column: Int, _ value: Bool) {
            dark[row][column] = value
            function[row][column] = true
        }

        mutating func drawFunctionPatterns() {
            for index in 0..<size {
                set(6, index, index % 2 == 0)
                set(index, 6, index % 2 == 0)
            }
            for (row, column) in [(3, 3), (3, size - 4), (size - 4, 3)] {
                for dy in -4...4 {
                    for dx in -4...4 {
                        let r = row + dy, c = column + dx
                        guard (0..<size).contains(r), (0..<size).contains(c) else { continue }
                        let distance = max(abs(dx), abs(dy))
                        set(r, c, distance != 2 && distance != 4)
                    }
                }
            }
            let centres = QRCode.alignment[version - 1]
            let last = centres.count - 1
            for (i, row) in centres.enumerated() {
                for (j, column) in centres.enumerated() where !((i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0)) {
                    for dy in -2...2 {
                        for dx in -2...2 { set(row + dy, column + dx, max(abs(dx), abs(dy)) != 1) }
                    }
                }
            }
            drawFormat(mask: 0)
            if version >= 7 {
                var remainder = version
                for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
                let bits = version << 12 | remainder
                for index in 0..<18 {
                    let bit = (bits >> index) & 1 == 1
                    let a = size - 11 + index % 3, b = index / 3
                    set(b, a, bit)
                    set(a, b, bit)
                }
            }
        }

        /// The 15 format bits (level M, `mask`) in both copies, and the dark module.
        mutating func drawFormat(mask: Int) {
            let data = 0b00 << 3 | mask
            var remainder = data
            for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
            let bits = (data << 10 | remainder) ^ 0x5412
            func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
            for index in 0...5 { set(index, 8, bit(index)) }
            set(7, 8, bit(6))
            set(8, 8, bit(7))
            set(8, 7, bit(8))
            for index in 9..<15 { set(8, 14 - index, bit(index)) }
            for index in 0..<8 { set(8, size - 1 - index, bit(index)) }
            for index in 8..<15 { set(size - 15 + index, 8, bit(index)) }
            set(size - 8, 8, true)
        }

        /// The format and version information modules, and the dark module, set light.
        mutating func clearFormatAndVersion() {
            for index in 0...8 where index != 6 {
                dark[index][8] = false
                dark[8][index] = false
            }
            for index in (size - 8)..<size {
                dark[8][index] = false
                dark[index][8] = false
            }
            guard version >= 7 else { return }
            for index in 0..<18 {
                let a = size - 11 + index % 3, b = index / 3
                dark[b][a] = false
                dark[a][b] = false
            }
        }

        /// Codewords into the non-function modules, in the zigzag from the bottom-right corner.
        mutating func place(_ codewords: [UInt8]) {
            var index = 0
            var right = size - 1
            while right >= 1 {
                if right == 6 { right = 5 }
                for vertical in 0..<size {
                    for offset in 0..<2 {
                        let column = right - offset
                        let upward = (right + 1) & 2 == 0
                        let row = upward ? size - 1 - vertical : vertical
                        guard !function[row][column] else { continue }
                        if index < codewords.count * 8 {
                            dark[row][column] = (codewords[index >> 3] >> (7 - UInt8(index & 7))) & 1 == 1
                            index += 1
                        }
                    }
                }
                right -= 2
            }
        }

        mutating func apply(mask: Int) {
            for row in 0..<size {
                for column in 0..<size where !function[row][column] {
                    let flip = switch mask {
                    case 0: (row + column) % 2 == 0
                    case 1: row % 2 == 0
                    case 2: column % 3 == 0
                    case 3: (row + column) % 3 == 0
                    case 4: (row / 2 + column / 3) % 2 == 0
                    case 5: (row * column) % 2 + (row * column) % 3 == 0
                    case 6: ((row * column) % 2 + (row * column) % 3) % 2 == 0
                    default: ((row + column) % 2 + (row * column) % 3) % 2 == 0
                    }
                    if flip { dark[row][column].toggle() }
                }
            }
        }

        /// The penalty score of ISO/IEC 18004 §7.8.3: runs of five or more, 2×2 blocks, finder-like sequences
        /// (1011101 beside four light modules, within the symbol), and the dark proportion's distance from 50 %.
        func penalty() -> Int {
            var score = 0
            let lines: [[Bool]] = dark + (0..<size).map { column in (0..<size).map { dark[$0][column] } }
            for line in lines {
                var run = 1
                for index in 1..<size {
                    if line[index] == line[index - 1] {
                        run += 1
                    } else {
                        if run >= 5 { score += 3 + run - 5 }
                        run = 1
                    }
                }
                if run >= 5 { score += 3 + run - 5 }
                score += finderLikePenalty(line)
            }
            for row in 0..<(size - 1) {
                for column in 0..<(size - 1) {
                    let colour = dark[row][column]
                    if dark[row][column + 1] == colour && dark[row + 1][column] == colour && dark[row + 1][column + 1] == colour { score += 3 }
                }
            }
            let total = size * size
            let darkCount = dark.reduce(0) { $0 + $1.filter { $0 }.count }
            score += abs(darkCount * 100 - total * 50) / (total * 5) * 10
            return score
        }

        /// 40 for each window of 11 modules reading 1011101 0000 or 0000 1011101.
        func finderLikePenalty(_ line: [Bool]) -> Int {
            let finder: [Bool] = [true, false, true, true, true, false, true], light = [Bool](repeating: false, count: 4)
            var score = 0
            for start in 0...(size - 11) {
                let window = Array(line[start..<start + 11])
                if window == finder + light || window == light + finder { score += 40 }
            }
            return score
        }
    }
}

/// Reed–Solomon error correction over GF(256) with the QR polynomial x⁸ + x⁴ + x³ + x² + 1.
enum ReedSolomon {
    static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
        var result = 0
        for shift in stride(from: 7, through: 0, by: -1) {
            result = (result << 1) ^ ((result >> 7) * 0x11D)
            if (y >> UInt8(shift)) & 1 == 1 { result ^= Int(x) }
        }
        return UInt8(result & 0xFF)
    }

    /// The coefficients (highest degree first, leading 1 dropped) of ∏ (x − αⁱ) for i < `degree`.
    static func generator(degree: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: degree)
        result[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for index in 0..<degree {
                result[index] = multiply(result[index], root)
                if index + 1 < degree { result[index] ^= result[index + 1] }
            }
            root = multiply(root, 0x02)
        }
        return result
    }

    /// The error correction codewords of `data`.
    static func remainder(_ data: [UInt8], generator: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: generator.count)
        for byte in data {
            let factor = byte ^ result.removeFirst()
            result.append(0)
            for index in result.indices { result[index] ^= multiply(generator[index], factor) }
        }
        return result
    }
}
