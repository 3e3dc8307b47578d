import Foundation

/// Test images made and read without libvips: a PNG encoder (stored deflate blocks, CRC-32, Adler-32, as RFC 1950,
/// 1951 and the PNG specification define them) and readers of the sizes in PNG, JPEG, WebP, GIF and AVIF headers —
/// an independent check of what the renderer writes.
enum ImageFixtures {
    /// An RGB PNG of `width` x `height` with a gradient (so that encoders have something to compress).
    static func png(width: Int, height: Int) -> Data {
        var raw: [UInt8] = []
        raw.reserveCapacity((width * 3 + 1) * height)
        for y in 0..<height {
            raw.append(0)  // filter: none
            for x in 0..<width {
                raw += [UInt8(x * 255 / max(width - 1, 1)), UInt8(y * 255 / max(height - 1, 1)), UInt8((x ^ y) & 0xFF)]
            }
        }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += chunk("IHDR", bigEndian(UInt32(width)) + bigEndian(UInt32(height)) + [8, 2, 0, 0, 0])
        png += chunk("IDAT", zlibStored(raw))
        png += chunk("IEND", [])
        return Data(png)
    }

    static func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + body
        return bigEndian(UInt32(body.count)) + typed + bigEndian(crc32(typed))
    }

    static func zlibStored(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let count = min(65535, bytes.count - offset)
            let final: UInt8 = offset + count == bytes.count ? 1 : 0
            out += [final, UInt8(count & 0xFF), UInt8(count >> 8), UInt8(~count & 0xFF), UInt8((~count >> 8) & 0xFF)]
            out += bytes[offset..<offset + count]
            offset += count
        } while offset < bytes.count
        var a: UInt32 = 1, b: UInt32 = 0
        for byte in bytes {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        return out + bigEndian(b << 16 | a)
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] { [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)] }

    enum Kind: String { case png, jpeg, webp, gif, avif }

    /// The format and size an encoded image's header states, or nil when the bytes are none of these.
    static func size(of data: Data) -> (kind: Kind, width: Int, height: Int)? {
        let b = [UInt8](data)
        func be16(_ i: Int) -> Int { Int(b[i]) << 8 | Int(b[i + 1]) }
        func le16(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 }
        func be32(_ i: Int) -> Int { Int(b[i]) << 24 | Int(b[i + 1]) << 16 | Int(b[i + 2]) << 8 | Int(b[i + 3]) }
        func le24(_ i: Int) -> Int { Int(b[i]) | Int(b[i + 1]) << 8 | Int(b[i + 2]) << 16 }
        func ascii(_ i: Int, _ text: String) -> Bool { b.count >= i + text.utf8.count && Array(b[i..<i + text.utf8.count]) == Array(text.utf8) }
        if b.count > 24, b.starts(with: [0x89, 0x50, 0x4E, 0x47]), ascii(12, "IHDR") { return (.png, be32(16), be32(20)) }
        if ascii(0, "GIF8"), b.count > 10 { return (.gif, le16(6), le16(8)) }
        if ascii(0, "RIFF"), ascii(8, "WEBP"), b.count > 30 {
            if ascii(12, "VP8X") { return (.webp, le24(24) + 1, le24(27) + 1) }
            if ascii(12, "VP8L") {
                let bits = UInt32(b[21]) | UInt32(b[22]) << 8 | UInt32(b[23]) << 16 | UInt32(b[24]) << 24
                return (.webp, Int(bits & 0x3FFF) + 1, Int((bits >> 14) & 0x3FFF) + 1)
            }
            if ascii(12, "VP8 "), b[23] == 0x9D, b[24] == 0x01, b[25] == 0x2A { return (.webp, le16(26) & 0x3FFF, le16(28) & 0x3FFF) }
            return nil
        }
        if b.count > 4, b[0] == 0xFF, b[1] == 0xD8 {
            var i = 2
            while i + 9 < b.count {
                guard b[i] == 0xFF else { return nil }
                let marker = b[i + 1]
                if marker == 0xFF { i += 1; continue }
                let length = be16(i + 2)
                // SOF0-SOF15, except DHT (C4), JPG (C8) and DAC (CC): precision, height, width.
                if (0xC0...0xCF).contains(marker), ![0xC4, 0xC8, 0xCC].contains(marker) { return (.jpeg, be16(i + 7), be16(i + 5)) }
                i += 2 + length
            }
            return nil
        }
        if ascii(4, "ftyp"), ascii(8, "avif") || ascii(16, "avif") {
            // The `ispe` property: version and flags, then width and height.
            for i in 0..<(b.count - 16) where ascii(i, "ispe") { return (.avif, be32(i + 8), be32(i + 12)) }
        }
        return nil
    }
}
