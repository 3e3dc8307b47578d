package import Foundation

/// Where object bytes live, by version: each write of an object gets a new version id (a UUID), so bytes are never
/// overwritten in place and a metadata row only ever points at bytes that were completely written before it
/// committed. `FileByteStore` keeps them in the data directory (SQLite deployments); `DatabaseByteStore` in the
/// database, in chunks (PostgreSQL deployments, so every instance serves them).
package protocol ObjectByteStore: Sendable {
    /// Stores `bytes` under `version` durably (fsynced, or committed) before returning; nothing is readable under
    /// `version` until all of it is.
    func write(_ bytes: Data, version: ObjectVersion) async throws
    /// The bytes of `version`, or nil when there are none (removed, or never completely written).
    func read(_ version: ObjectVersion) async throws -> Data?
    /// Removes the bytes of `versions` (absent ones are passed over).
    func remove(_ versions: [ObjectVersion]) async throws
}

/// The id of one write of an object's bytes: a lowercase UUID, safe as a file name.
package struct ObjectVersion: Sendable, Hashable, CustomStringConvertible {
    package let id: String

    /// A version from stored text; nil unless it is a UUID (so it can never name a path outside the store).
    package init?(_ text: String) {
        guard let uuid = UUID(uuidString: text) else { return nil }
        id = uuid.uuidString.lowercased()
    }

    /// A new, random version.
    package static func make() -> ObjectVersion {
        ObjectVersion(validated: UUID().uuidString.lowercased())
    }

    private init(validated: String) { id = validated }

    package var description: String { id }
}
