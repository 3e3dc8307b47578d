package import Foundation
package import Logging

/// The bounds of image transformations (`storage_image_*` settings).
package struct ImageTransformLimits: Sendable, Hashable {
    /// The largest source object rendered, in bytes (default 25 MiB).
    package var maxSourceBytes: Int64 = 25 * 1024 * 1024
    /// The most pixels (width x height, from the header, before anything is decoded) of a source rendered (default
    /// 40 million): a small file that would decode to a huge image is refused.
    package var maxSourcePixels: Int64 = 40_000_000
    /// The bytes of renders kept in memory (default 64 MiB; 0 keeps none).
    package var cacheBytes: Int = 64 * 1024 * 1024
    /// Renders running at once (default: the processor count); more wait their turn.
    package var concurrentRenders = max(ProcessInfo.processInfo.activeProcessorCount, 1)

    package init() {}
}

/// Storage's image renders: an object's bytes scaled and encoded as an `ImageTransform` asks (storage-api's
/// `/render/image`), through an `ImageRenderer` when one is available, with the limits and the result cache.
package final class ImageTransformations: Sendable {
    /// The renderer, or why transformations are off (`featureNotEnabled`).
    package let renderer: Result<any ImageRenderer, StorageError>
    package let limits: ImageTransformLimits
    package let cache: RenderedImageCache
    private let gate: RenderGate

    package init(renderer: Result<any ImageRenderer, StorageError>, limits: ImageTransformLimits = ImageTransformLimits()) {
        self.renderer = renderer
        self.limits = limits
        cache = RenderedImageCache(budget: limits.cacheBytes)
        gate = RenderGate(limit: max(limits.concurrentRenders, 1))
    }

    /// libvips when it loads (`VipsImageRenderer.shared`), transformations off otherwise.
    package static func vips(limits: ImageTransformLimits = ImageTransformLimits()) -> ImageTransformations {
        ImageTransformations(renderer: VipsImageRenderer.shared.map { $0 as any ImageRenderer }, limits: limits)
    }

    /// Transformations off (a storage service built without them).
    package static let unavailable = ImageTransformations(
        renderer: .failure(StorageError(.featureNotEnabled, VipsImageRenderer.unavailableMessage, internalDetail: "no renderer configured")))

    package var isAvailable: Bool { (try? renderer.get()) != nil }

    /// The source types rendered (by the object's stored content type).
    package static let sourceTypes = "JPEG, PNG, WebP, GIF or AVIF"

    /// `object` rendered as `transform` asks; `bytes` reads the object's bytes (only when the render is not cached).
    /// `acceptsWebP`: the client said `Accept: image/webp`, which picks WebP when `transform` names no format.
    package func render(_ object: StoredObject, _ transform: ImageTransform, acceptsWebP: Bool, logger: Logger,
                        bytes: () async throws(StorageError) -> Data) async throws(StorageError) -> RenderedImage {
        let renderer = try renderer.get()
        guard let source = ImageFormat(contentType: object.contentType) else {
            throw StorageError(.invalidMimeType, "mime type \(MimeSniffer.baseType(object.contentType)) cannot be transformed (\(Self.sourceTypes) images only)")
        }
        guard object.size <= limits.maxSourceBytes else { throw sourceTooLarge(object.size) }
        let output: ImageFormat = switch transform.format {
        case .origin?: source
        case .webp?: .webp
        case .avif?: .avif
        case nil: acceptsWebP ? .webp : source
        }
        let quality = transform.quality ?? ImageTransform.defaultQuality
        let key = RenderedImageCache.key(version: object.version, plan: "\(transform.width ?? 0)x\(transform.height ?? 0)|\(transform.resize.rawValue)|\(quality)|\(output.rawValue)")
        if let cached = cache.image(for: key) { return cached }
        let data = try await bytes()
        guard data.count <= limits.maxSourceBytes else { throw sourceTooLarge(Int64(data.count)) }
        let limits = self.limits
        await gate.enter()
        let result = await Self.offload { () throws(StorageError) -> RenderedImage in
            let header = try renderer.header(of: data)
            guard header.format != nil else {
                throw StorageError(.invalidImage, "The source image is invalid or unsupported for rendering", internalDetail: "not an image Caravan renders")
            }
            let pixels = Int64(header.width) * Int64(header.height)
            guard pixels <= limits.maxSourcePixels else {
                throw StorageError(.entityTooLarge, "The source image resolution is too large to process (\(header.width)x\(header.height) pixels; the limit is \(limits.maxSourcePixels) pixels)")
            }
            let size = header.displayedSize
            let plan = ImagePlan(transform, sourceWidth: size.width, sourceHeight: size.height)
            return RenderedImage(bytes: try renderer.render(data, plan: plan, format: output, quality: quality), format: output)
        }
        await gate.leave()
        switch result {
        case .success(let image):
            cache.store(image, for: key, version: object.version)
            return image
        case .failure(let error):
            logger.debug("image render refused", metadata: ["storage.object": .string("\(object.bucketID)/\(object.name)"),
                                                            "error.code": .string(error.code.description),
                                                            "error.detail": .string(error.internalDetail ?? error.message)])
            throw error
        }
    }

    private func sourceTooLarge(_ size: Int64) -> StorageError {
        StorageError(.entityTooLarge, "The source image file is too large to process (\(size) bytes; the limit is \(limits.maxSourceBytes) bytes)")
    }

    /// Runs blocking work on a dispatch thread, off Swift's cooperative pool.
    static func offload<T: Sendable>(_ work: @escaping @Sendable () throws(StorageError) -> T) async -> Result<T, StorageError> {
        await withCheckedContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(returning: Result { () throws(StorageError) -> T in try work() })
            }
        }
    }
}

/// At most `limit` renders at once; the others wait in order.
actor RenderGate {
    let limit: Int
    private var running = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(limit: Int) {
        self.limit = limit
    }

    func enter() async {
        guard running >= limit else {
            running += 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty {
            running -= 1
        } else {
            waiting.removeFirst().resume()  // the slot passes to the next in line
        }
    }
}
