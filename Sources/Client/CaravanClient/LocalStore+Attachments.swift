public import CaravanCore
import CaravanClientSQLite
import Crypto
public import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An upload whose bytes are staged in the store's attachments folder (`LocalStore.stageUpload`), to be queued in the
/// same transaction as a row write (`insert(_:attaching:)`, `update(_:attaching:)`) or alone (`queueUpload`).
public struct AttachmentUpload: Sendable, Hashable {
    public let bucket: String
    /// The object's key in its bucket (`<user id>/avatar.jpg`).
    public let path: String
    public let size: Int64
    /// `"<md5 hex>"`, as the server's etag of the same bytes.
    public let etag: String
    public let contentType: String?
    /// Whether the upload replaces an object already at `path` (`x-upsert: true`); without it such an object parks it.
    public let upsert: Bool
    /// The file's name in the attachments folder.
    let file: String
}

/// An attachment on the device: an upload waiting for the server (`pending`), one it refused for good (`parked`, with
/// its error), or a cached copy of an object (`cached`: downloaded, or uploaded and settled).
public struct Attachment: Sendable, Hashable {
    public enum State: String, Sendable, CaseIterable { case pending, parked, cached }

    public let bucket: String
    public let path: String
    public let size: Int64
    public let etag: String
    public let contentType: String?
    public let state: State
    /// Upload requests made so far (a kill mid-upload counts).
    public let attempts: Int
    public let queuedAt: String?
    public let errorCode: String?
    public let errorMessage: String?

    init(_ stored: StoredAttachment) {
        bucket = stored.bucket
        path = stored.path
        size = stored.size
        etag = stored.etag
        contentType = stored.contentType
        state = State(rawValue: stored.state) ?? .pending
        attempts = stored.attempts
        queuedAt = stored.queuedAt
        errorCode = stored.errorCode
        errorMessage = stored.errorMessage
    }

    public var json: JSONValue {
        var pairs: [(key: String, value: JSONValue)] = [
            ("bucket", .string(bucket)), ("path", .string(path)), ("size", .integer(size)), ("etag", .string(etag)),
            ("content_type", contentType.map(JSONValue.string) ?? .null), ("state", .string(state.rawValue)), ("attempts", .integer(Int64(attempts))),
        ]
        if let queuedAt { pairs.append(("queued_at", .string(queuedAt))) }
        if let errorCode { pairs.append(("error", .object([("code", .string(errorCode)), ("message", .string(errorMessage ?? ""))]))) }
        return .object(pairs)
    }
}

/// Attachments: storage objects tied to rows. An upload is staged as a file beside the store and queued in the store
/// (with a row write, in its transaction, or alone), so it survives a kill and goes up on the next sync
/// (`SyncEngine.uploadAttachments`); downloads are kept as files under a byte budget (`CacheRule.attachments`), least
/// recently used out, never removing an upload that has not settled.
extension LocalStore {
    /// The folder of the attachments' bytes: `<store file>.attachments`.
    public var attachmentsDirectory: String { path + ".attachments" }

    /// The bytes the cached attachments may hold: the sum of the `attachments` cache rules, else 64 MiB.
    public var attachmentBudget: Int64 {
        let declared = caches.compactMap { rule -> Int64? in if case .attachments(let bytes) = rule { bytes } else { nil } }
        return declared.isEmpty ? 64 << 20 : declared.reduce(0, +)
    }

    /// A staged upload not queued within this many seconds is taken for one a crash left behind, and removed.
    static let stagedLifetime: Int64 = 3600

    /// Writes `data` into the attachments folder (flushed to disk) for an upload to `bucket`/`path`: queue it with a
    /// row write (`insert(_:attaching:)`). A staged upload not queued within an hour (its write refused, a crash before
    /// the commit) is taken for garbage and removed (`enforceAttachmentBudget`).
    public func stageUpload(_ data: Data, bucket: String, path: String, contentType: String? = nil, upsert: Bool = false) throws -> AttachmentUpload {
        guard !bucket.isEmpty, !bucket.contains("/"), !path.isEmpty, !path.hasPrefix("/") else {
            throw ClientError(.local, code: "InvalidKey", "an attachment needs a bucket and a relative path (got \(bucket)/\(path))")
        }
        let file = ids.next()
        try writeAttachmentFile(data, named: file)
        return AttachmentUpload(bucket: bucket, path: path, size: Int64(data.count), etag: Self.etag(data), contentType: contentType, upsert: upsert, file: file)
    }

    /// Queues an upload of `data` to `bucket`/`path` on its own (offline too); it goes up on the next sync. An upload
    /// already waiting for that path is refused (`KeyAlreadyExists`) unless `upsert`, which replaces it (so does any
    /// upload a cached copy of that path).
    @concurrent
    @discardableResult
    public func queueUpload(_ data: Data, bucket: String, path: String, contentType: String? = nil, upsert: Bool = false) async throws -> Attachment {
        let upload = try stageUpload(data, bucket: bucket, path: path, contentType: contentType, upsert: upsert)
        try committing([upload]) { _ in }
        guard let queued = try attachment(bucket: bucket, path: path) else { throw ClientError(.local, "the queued upload is gone") }
        return queued
    }

    /// `queueUpload` of the bytes of the file at `url`.
    @concurrent
    @discardableResult
    public func queueUpload(contentsOf url: URL, bucket: String, path: String, contentType: String? = nil, upsert: Bool = false) async throws -> Attachment {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            throw ClientError(.local, "cannot read \(url.path): \(error)")
        }
        return try await queueUpload(data, bucket: bucket, path: path, contentType: contentType, upsert: upsert)
    }

    /// Every attachment on the device: pending uploads in queue order, then parked ones, then cached copies.
    public func attachments() throws -> [Attachment] {
        try read { try $0.attachments() }.map(Attachment.init)
    }

    public func attachment(bucket: String, path: String) throws -> Attachment? {
        try read { try $0.attachment(bucket: bucket, path: path) }.map(Attachment.init)
    }

    /// The bytes of `bucket`/`path` kept on the device (a cached copy, or an upload not yet settled), marked used; nil
    /// when the device has none. Reads no network: `SyncEngine.attachment` downloads what is missing.
    public func cachedAttachment(bucket: String, path: String) throws -> Data? {
        guard let entry = try write({ transaction -> StoredAttachment? in
            try transaction.touchAttachment(bucket: bucket, path: path)
            return try transaction.attachment(bucket: bucket, path: path)
        }) else { return nil }
        return FileManager.default.contents(atPath: attachmentFile(entry.file))
    }

    /// Removes `bucket`/`path` from the device: a cached copy, or an upload (a parked one, to give it up; a pending
    /// one is no longer sent). The server's object is not touched.
    public func removeAttachment(bucket: String, path: String) throws {
        if let file = try write({ try $0.removeAttachment(bucket: bucket, path: path) }) { removeAttachmentFiles([file]) }
    }

    /// Removes the least recently used cached copies past `attachmentBudget`, and files a crash left unqueued; returns
    /// how many cached copies went.
    @discardableResult
    public func enforceAttachmentBudget() throws -> Int {
        let (evicted, referenced) = try write { transaction in
            (try transaction.evictAttachments(over: attachmentBudget), try transaction.attachmentFiles())
        }
        removeAttachmentFiles(evicted)
        removeOrphanedFiles(referenced: referenced)
        return evicted.count
    }

    /// The files in the attachments folder that no entry names, older than a staged file may wait: a crash between
    /// staging and the write's commit, a refused write.
    private func removeOrphanedFiles(referenced: Set<String>) {
        let cutoff = Date(timeIntervalSince1970: Double(clock.seconds - Self.stagedLifetime))
        let names = (try? FileManager.default.contentsOfDirectory(atPath: attachmentsDirectory)) ?? []
        let orphans = names.filter { name in
            guard !referenced.contains(name), let modified = try? FileManager.default.attributesOfItem(atPath: attachmentFile(name))[.modificationDate] as? Date else {
                return false
            }
            return modified < cutoff
        }
        removeAttachmentFiles(orphans)
    }

    // MARK: Within the SDK

    /// Runs `body` in one write transaction that also queues `uploads`; the files of entries they replace are removed
    /// after the commit.
    func committing<T>(_ uploads: [AttachmentUpload], _ body: (LocalTransaction) throws -> T) throws -> T {
        let now = nowText()
        let (value, replaced) = try write { transaction in
            let value = try body(transaction)
            var replaced: [String] = []
            for upload in uploads {
                if let existing = try transaction.attachment(bucket: upload.bucket, path: upload.path), existing.state != "cached", !upload.upsert {
                    throw ClientError(.local, code: "KeyAlreadyExists",
                                      "an upload to \(upload.bucket)/\(upload.path) is already \(existing.state) (queue with upsert to replace it)")
                }
                let entry = StoredAttachment(bucket: upload.bucket, path: upload.path, file: upload.file, size: upload.size, etag: upload.etag,
                                             contentType: upload.contentType, state: "pending", upsert: upload.upsert, queuedAt: now)
                if let old = try transaction.putAttachment(entry) { replaced.append(old) }
            }
            return (value, replaced)
        }
        removeAttachmentFiles(replaced)
        return value
    }

    /// Keeps downloaded bytes as the cached copy of `bucket`/`path` (unless an upload of that path is waiting: the
    /// device's own bytes win), then holds the cache to its budget.
    func keepDownloaded(_ data: Data, bucket: String, path: String, etag: String?, contentType: String?) throws {
        let file = ids.next()
        try writeAttachmentFile(data, named: file)
        let entry = StoredAttachment(bucket: bucket, path: path, file: file, size: Int64(data.count), etag: etag ?? Self.etag(data),
                                     contentType: contentType, state: "cached", upsert: false, queuedAt: nil)
        let replaced = try write { transaction -> [String] in
            if let existing = try transaction.attachment(bucket: bucket, path: path), existing.state != "cached" { return [file] }
            return try transaction.putAttachment(entry).map { [$0] } ?? []
        }
        // The budget alone (the folder is swept for orphans by `enforceAttachmentBudget`, after each sync): a photo
        // grid's downloads do not each list the whole folder.
        let evicted = try write { try $0.evictAttachments(over: attachmentBudget) }
        removeAttachmentFiles(replaced + evicted)
    }

    func pendingUploads() throws -> [StoredAttachment] {
        try read { try $0.pendingAttachments() }
    }

    /// Counts an upload request before it is sent; returns the earlier ones (nil: the upload is no longer pending).
    func countUploadAttempt(_ upload: StoredAttachment) throws -> Int? {
        try write { try $0.countAttachmentAttempt(bucket: upload.bucket, path: upload.path) }
    }

    func settleUpload(_ upload: StoredAttachment) throws {
        try write { try $0.settleAttachment(bucket: upload.bucket, path: upload.path, file: upload.file) }
    }

    func parkUpload(_ upload: StoredAttachment, code: String, message: String) throws {
        try write { try $0.parkAttachment(bucket: upload.bucket, path: upload.path, file: upload.file, code: code, message: message) }
    }

    func attachmentFile(_ name: String) -> String { attachmentsDirectory + "/" + name }

    /// `"<md5 hex>"`: the etag the server gives the same bytes.
    package static func etag(_ data: Data) -> String {
        "\"" + Insecure.MD5.hash(data: data).map { String(format: "%02x", $0) }.joined() + "\""
    }

    /// Writes `data` as attachment file `name` and flushes it (and the folder's entry) to disk, readable by the
    /// owner only, as the store is.
    private func writeAttachmentFile(_ data: Data, named name: String) throws {
        let directory = attachmentsDirectory
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            let path = attachmentFile(name)
            guard FileManager.default.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]),
                  let handle = FileHandle(forWritingAtPath: path) else {
                throw ClientError(.local, "cannot create \(path)")
            }
            defer { try? handle.close() }
            try handle.write(contentsOf: data)
            try handle.synchronize()
        } catch let error as ClientError {
            throw error
        } catch {
            throw ClientError(.local, "cannot write an attachment file in \(directory): \(error)")
        }
        let folder = open(directory, O_RDONLY)
        if folder >= 0 {
            _ = fsync(folder)
            close(folder)
        }
    }

    private func removeAttachmentFiles(_ names: [String]) {
        for name in names { try? FileManager.default.removeItem(atPath: attachmentFile(name)) }  // a file already gone is what we want
    }
}
