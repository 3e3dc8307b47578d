import CImageVips
package import Foundation

/// `ImageRenderer` on libvips, loaded at run time (`libvips.so.42`, or the file `CARAVAN_VIPS_LIBRARY` names): the
/// server binary does not link it, and without it image transformations are off (`VipsImageRenderer.shared` is the
/// reason). libvips's loaders marked untrusted (SVG, PDF, ImageMagick, …) are blocked; only JPEG, PNG, WebP, GIF and
/// AVIF bytes are rendered.
package struct VipsImageRenderer: ImageRenderer {
    /// libvips, loaded once per process, or why it could not be.
    package static let shared: Result<VipsImageRenderer, StorageError> = {
        var error = [CChar](repeating: 0, count: VipsImageRenderer.errorCapacity)
        guard caravan_vips_load(&error, VipsImageRenderer.errorCapacity) == 0 else {
            return .failure(StorageError(.featureNotEnabled, VipsImageRenderer.unavailableMessage, internalDetail: VipsImageRenderer.text(error)))
        }
        return .success(VipsImageRenderer(version: String(cString: caravan_vips_version())))
    }()

    package static let unavailableMessage = "Image transformations are not available on this server (libvips is not installed)"

    let version: String

    /// Bytes of a libvips error message.
    static let errorCapacity = 512

    /// The NUL-terminated text in `buffer`.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    package var description: String { "libvips \(version)" }

    /// libvips's loader class names → the formats Caravan renders (others — TIFF, HEIC, JPEG 2000, … — are refused).
    static let loaders: [String: ImageFormat] = [
        "VipsForeignLoadJpegBuffer": .jpeg, "VipsForeignLoadPngBuffer": .png, "VipsForeignLoadWebpBuffer": .webp,
        "VipsForeignLoadNsgifBuffer": .gif, "VipsForeignLoadGifBuffer": .gif, "VipsForeignLoadHeifBuffer": .avif,
    ]

    package func header(of bytes: Data) throws(StorageError) -> ImageHeader {
        var header = caravan_vips_header()
        var error = [CChar](repeating: 0, count: Self.errorCapacity)
        let status = bytes.withUnsafeBytes { raw in caravan_vips_read_header(raw.baseAddress, raw.count, &header, &error, Self.errorCapacity) }
        guard status == 0 else { throw Self.invalidImage(Self.text(error)) }
        let loader = withUnsafeBytes(of: header.loader) { raw in String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self) }
        return ImageHeader(width: Int(header.width), height: Int(header.height), format: Self.loaders[loader],
                           orientation: Int(header.orientation))
    }

    package func render(_ bytes: Data, plan: ImagePlan, format: ImageFormat, quality: Int) throws(StorageError) -> Data {
        var request = caravan_vips_request(width: Int32(plan.width), height: Int32(plan.height), crop: plan.crop ? 1 : 0,
                                           format: Self.vipsFormat(format), quality: Int32(quality))
        var output: UnsafeMutableRawPointer?
        var length = 0
        var error = [CChar](repeating: 0, count: Self.errorCapacity)
        let status = bytes.withUnsafeBytes { raw in
            caravan_vips_render(raw.baseAddress, raw.count, &request, &output, &length, &error, Self.errorCapacity)
        }
        guard status == 0, let output else { throw Self.invalidImage(Self.text(error)) }
        defer { caravan_vips_free(output) }
        return Data(bytes: output, count: length)
    }

    static func vipsFormat(_ format: ImageFormat) -> caravan_vips_format {
        switch format {
        case .jpeg: CARAVAN_VIPS_JPEG
        case .png: CARAVAN_VIPS_PNG
        case .webp: CARAVAN_VIPS_WEBP
        case .gif: CARAVAN_VIPS_GIF
        case .avif: CARAVAN_VIPS_AVIF
        }
    }

    /// storage-api's message for an image its renderer cannot read; libvips's own words go to the log only.
    static func invalidImage(_ detail: String) -> StorageError {
        StorageError(.invalidImage, "The source image is invalid or unsupported for rendering", internalDetail: detail)
    }
}
