package import Foundation
import Synchronization

/// A render's result: the encoded bytes and their format.
package struct RenderedImage: Sendable, Hashable {
    package let bytes: Data
    package let format: ImageFormat

    package init(bytes: Data, format: ImageFormat) {
        self.bytes = bytes
        self.format = format
    }
}

/// Renders kept in memory, least recently used dropped first once their bytes pass `budget`. Keys start with the
/// source's version id, which every write of an object changes, so a render of replaced bytes is never served; the
/// versions a write or removal discards are also dropped at once (`remove(versions:)`).
package final class RenderedImageCache: Sendable {
    private struct Entry {
        let image: RenderedImage
        let version: String
        var lastUse: UInt64
    }

    private struct State {
        var entries: [String: Entry] = [:]
        var bytes = 0
        var clock: UInt64 = 0
        var hits = 0
        var misses = 0
    }

    /// The most bytes of renders held (0: nothing is cached).
    package let budget: Int
    private let state = Mutex(State())

    package init(budget: Int) {
        self.budget = max(budget, 0)
    }

    /// The key of a render of `version` with these parameters.
    package static func key(version: ObjectVersion, plan: String) -> String { "\(version.id)|\(plan)" }

    package func image(for key: String) -> RenderedImage? {
        state.withLock { state in
            guard var entry = state.entries[key] else {
                state.misses += 1
                return nil
            }
            state.clock += 1
            entry.lastUse = state.clock
            state.entries[key] = entry
            state.hits += 1
            return entry.image
        }
    }

    /// Keeps `image` under `key` (not when it alone is more than an eighth of the budget), dropping the least
    /// recently used renders until the total fits.
    package func store(_ image: RenderedImage, for key: String, version: ObjectVersion) {
        let size = image.bytes.count
        guard size > 0, size <= budget / 8 else { return }
        state.withLock { state in
            state.clock += 1
            if let old = state.entries[key] { state.bytes -= old.image.bytes.count }
            state.entries[key] = Entry(image: image, version: version.id, lastUse: state.clock)
            state.bytes += size
            while state.bytes > budget, let oldest = state.entries.min(by: { $0.value.lastUse < $1.value.lastUse }) {
                state.entries[oldest.key] = nil
                state.bytes -= oldest.value.image.bytes.count
            }
        }
    }

    /// Drops every render of these versions (their bytes were replaced or removed).
    package func remove(versions: [ObjectVersion]) {
        let ids = Set(versions.map(\.id))
        guard !ids.isEmpty else { return }
        state.withLock { state in
            for (key, entry) in state.entries where ids.contains(entry.version) {
                state.entries[key] = nil
                state.bytes -= entry.image.bytes.count
            }
        }
    }

    /// Renders held, their bytes, and lookups that found one or did not (for tests and the log).
    package var statistics: (count: Int, bytes: Int, hits: Int, misses: Int) {
        state.withLock { ($0.entries.count, $0.bytes, $0.hits, $0.misses) }
    }
}
