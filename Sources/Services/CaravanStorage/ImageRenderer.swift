package import Foundation

/// The encodings a render reads and writes.
package enum ImageFormat: String, Sendable, Hashable, CaseIterable {
    case jpeg, png, webp, gif, avif

    package var contentType: String { "image/\(rawValue)" }

    /// The format of a stored object's content type (`image/jpeg; …`), or nil when it is not one a render reads.
    package init?(contentType: String) {
        let base = MimeSniffer.baseType(contentType)
        switch base {
        case "image/jpeg", "image/jpg", "image/pjpeg": self = .jpeg
        case "image/png": self = .png
        case "image/webp": self = .webp
        case "image/gif": self = .gif
        case "image/avif": self = .avif
        default: return nil
        }
    }
}

/// What an image's header says, read without decoding its pixels.
package struct ImageHeader: Sendable, Hashable {
    package let width: Int
    package let height: Int
    /// The format of the decoder that recognised the bytes (nil: one a render does not read).
    package let format: ImageFormat?
    /// The EXIF orientation, 1 to 8 (5 to 8 turn the image a quarter: its displayed width is its height).
    package let orientation: Int

    package init(width: Int, height: Int, format: ImageFormat?, orientation: Int) {
        self.width = width
        self.height = height
        self.format = format
        self.orientation = orientation
    }

    /// The size as displayed (after the orientation).
    package var displayedSize: (width: Int, height: Int) { (5...8).contains(orientation) ? (height, width) : (width, height) }
}

/// Decodes, scales and encodes images (libvips in the server: `VipsImageRenderer`). Calls block while they work.
package protocol ImageRenderer: Sendable {
    /// The header of `bytes`; `invalidRequest` when they are no image it reads.
    func header(of bytes: Data) throws(StorageError) -> ImageHeader
    /// `bytes` scaled as `plan` says and encoded as `format` at `quality`.
    func render(_ bytes: Data, plan: ImagePlan, format: ImageFormat, quality: Int) throws(StorageError) -> Data
    /// The library and its version, for the log (`libvips 8.14.1`).
    var description: String { get }
}
