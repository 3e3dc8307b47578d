import CaravanCore

/// The rules for bucket ids and object keys (Supabase's, in short): a bucket id is 1–100 letters, digits, `_`, `-`
/// or `.`; an object key is 1–1024 bytes of printable text that neither starts nor ends with `/`, with no empty,
/// `.` or `..` segment.
enum ObjectKey {
    static func validateBucket(_ id: String) throws(StorageError) {
        let allowed = id.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || [0x2D, 0x2E, 0x5F].contains(byte)
        }
        guard !id.isEmpty, id.utf8.count <= 100, allowed, id != ".", id != ".." else {
            throw StorageError(.invalidBucketName, "Bucket name invalid")
        }
    }

    static func validate(_ key: String) throws(StorageError) {
        guard !key.isEmpty, key.utf8.count <= 1024, !key.hasPrefix("/"), !key.hasSuffix("/"),
              !key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }),
              !key.split(separator: "/", omittingEmptySubsequences: false).contains(where: { $0.isEmpty || $0 == "." || $0 == ".." }) else {
            throw StorageError(.invalidKey, "Invalid key: \(String(key.prefix(200)))")
        }
    }

    /// `name LIKE 'prefix%'` with the LIKE wildcards of `prefix` escaped.
    static func likePattern(prefix: String) -> String {
        LikePattern.escaped(prefix) + "%"
    }
}
