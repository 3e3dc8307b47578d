package import CaravanCore
import Foundation

/// What an image render asks for — storage-api's transformation options (`/render/image/…?width=&height=&resize=
/// &quality=&format=`, and the `transform` of a signed URL): a size, how to fit it, a quality and an output format.
package struct ImageTransform: Sendable, Hashable {
    /// How the image meets a `width` x `height` box (both given; with one, the other follows the aspect ratio).
    package enum Resize: String, Sendable, Hashable, CaseIterable {
        /// Keeps the aspect ratio and fills the box, cutting what overflows around the centre (the default).
        case cover
        /// Keeps the aspect ratio and fits inside the box.
        case contain
        /// Takes the box's own aspect ratio, stretching the image.
        case fill
    }

    /// The output format asked for.
    package enum Format: String, Sendable, Hashable, CaseIterable {
        /// The source's own format.
        case origin
        case webp
        case avif
    }

    /// Target width and height in pixels (nil: not constrained). Past `maxDimension` they are cut to it, as
    /// storage-api does; 0 means not given.
    package var width: Int?
    package var height: Int?
    package var resize: Resize
    /// 20 to 100 (JPEG, WebP, AVIF); nil: `defaultQuality`.
    package var quality: Int?
    /// nil: WebP when the client accepts it (`Accept: image/webp`, as Supabase's renderer), the source's format otherwise.
    package var format: Format?

    /// storage-api's size limit (Supabase's documented 1 to 2500 pixels).
    package static let maxDimension = 2500
    package static let qualityRange = 20...100
    package static let defaultQuality = 80

    package init(width: Int? = nil, height: Int? = nil, resize: Resize = .cover, quality: Int? = nil, format: Format? = nil) {
        self.width = width.flatMap(Self.dimension)
        self.height = height.flatMap(Self.dimension)
        self.resize = resize
        self.quality = quality
        self.format = format
    }

    /// 0 is "not given"; past the limit is the limit.
    static func dimension(_ value: Int) -> Int? { value <= 0 ? nil : min(value, maxDimension) }

    /// From a render URL's query (`value(name)` is the parameter's text, or nil), checked as storage-api's schema
    /// checks it: integers for the sizes (0 or more) and the quality (20 to 100), known names for `resize` and `format`.
    package init(query value: (String) -> String?) throws(StorageError) {
        func integer(_ name: String) throws(StorageError) -> Int? {
            guard let text = value(name) else { return nil }
            guard let number = Int(text.trimmingCharacters(in: .whitespaces)) else { throw Self.invalid("querystring/\(name) must be integer") }
            return number
        }
        try self.init(width: integer("width"), height: integer("height"), resize: value("resize"), quality: integer("quality"),
                      format: value("format"), context: "querystring")
    }

    /// From the `transform` object of a sign request (numbers, or numeric strings as some clients send).
    package init(json: JSONValue) throws(StorageError) {
        guard case .object = json else { throw Self.invalid("body/transform must be object") }
        func integer(_ name: String) throws(StorageError) -> Int? {
            switch json[name] {
            case nil, .null?: return nil
            case .integer(let number)?: return Int(clamping: number)
            case .double(let number)? where number.rounded() == number && abs(number) < 1e9: return Int(number)
            case .string(let text)?: if let number = Int(text) { return number }
            default: break
            }
            throw Self.invalid("body/transform/\(name) must be integer")
        }
        func text(_ name: String) throws(StorageError) -> String? {
            switch json[name] {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw Self.invalid("body/transform/\(name) must be string")
            }
        }
        try self.init(width: integer("width"), height: integer("height"), resize: text("resize"), quality: integer("quality"),
                      format: text("format"), context: "body/transform")
    }

    private init(width: Int?, height: Int?, resize: String?, quality: Int?, format: String?, context: String) throws(StorageError) {
        for (name, value) in [("width", width), ("height", height)] {
            if let value, value < 0 { throw Self.invalid("\(context)/\(name) must be >= 0") }
        }
        var parsedResize = Resize.cover
        if let resize {
            guard let known = Resize(rawValue: resize) else {
                throw Self.invalid("\(context)/resize must be equal to one of the allowed values (cover, contain, fill)")
            }
            parsedResize = known
        }
        var parsedFormat: Format?
        if let format {
            guard let known = Format(rawValue: format) else {
                throw Self.invalid("\(context)/format must be equal to one of the allowed values (origin, avif, webp)")
            }
            parsedFormat = known
        }
        if let quality, !Self.qualityRange.contains(quality) {
            throw Self.invalid("\(context)/quality must be >= \(Self.qualityRange.lowerBound) and <= \(Self.qualityRange.upperBound)")
        }
        self.init(width: width, height: height, resize: parsedResize, quality: quality, format: parsedFormat)
    }

    static func invalid(_ message: String) -> StorageError { StorageError(.invalidRequest, message) }

    /// The options as a signed URL's token carries them (storage-api's `transformations` claim):
    /// `width:200,height:100,resize:cover,quality:60,format:webp`, each part only when set (`format:origin` too, so
    /// that such a link keeps the source's format whoever follows it).
    package var claim: String {
        var parts: [String] = []
        if let width { parts.append("width:\(width)") }
        if let height { parts.append("height:\(height)") }
        if width != nil || height != nil { parts.append("resize:\(resize.rawValue)") }
        if let quality { parts.append("quality:\(quality)") }
        if let format { parts.append("format:\(format.rawValue)") }
        return parts.joined(separator: ",")
    }

    /// Nothing to do but re-encode in the source's format: a sign request with such a transform signs a plain download
    /// URL, as storage-api.
    package var isEmpty: Bool { width == nil && height == nil && quality == nil && (format == nil || format == .origin) }

    /// Reads a token's `transformations` claim (written by `claim`; unknown or malformed parts are passed over, as
    /// storage-api reads them — the claim is signed, so only the server wrote it).
    package init(claim: String) {
        self.init()
        for part in claim.split(separator: ",") {
            let pieces = part.split(separator: ":", maxSplits: 1).map(String.init)
            guard pieces.count == 2, !pieces[1].isEmpty else { continue }
            switch pieces[0] {
            case "width": width = Int(pieces[1]).flatMap(Self.dimension)
            case "height": height = Int(pieces[1]).flatMap(Self.dimension)
            case "resize": resize = Resize(rawValue: pieces[1]) ?? .cover
            case "quality": quality = Int(pieces[1]).map { min(max($0, Self.qualityRange.lowerBound), Self.qualityRange.upperBound) }
            case "format": format = Format(rawValue: pieces[1])
            default: continue
            }
        }
    }
}
