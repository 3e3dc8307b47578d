import CaravanClientSQLite
import CaravanCore
public import Foundation

/// Attachments over the network: the queued uploads go up exactly once, downloads are kept on the device.
///
/// Exactly once: the store counts an upload's attempt (committed) before its request goes out. An upload whose
/// earlier attempt may have reached the server (a lost reply, a kill) first asks for the object's metadata and, when
/// the server holds the same bytes (etag, the MD5, and size), settles without writing again. An upload is sent with
/// `x-upsert: false` unless queued with `upsert`; a `KeyAlreadyExists` answer is settled the same way when the bytes
/// there are the device's, else the upload is parked with that code. Any other refusal (a policy's `AccessDenied`,
/// `EntityTooLarge`, `InvalidMimeType`) parks it with its code; transient faults are retried with the engine's backoff
/// and, past it, fail the sync with the upload still pending.
extension SyncEngine {
    /// Sends the pending uploads in queue order (part of every `sync`, before the push).
    func uploadAttachments(into report: inout SyncReport) async throws {
        let uploads = try store.pendingUploads()
        guard !uploads.isEmpty else { return }
        status.update { $0.uploading = true }
        defer { status.update { $0.uploading = false } }
        for upload in uploads {
            switch try await withRetries({ token in try await self.send(upload, token: token) }) {
            case .settled:
                try store.settleUpload(upload)
                report.uploaded += 1
            case .refused(let code, let message):
                try store.parkUpload(upload, code: code, message: message)
                report.uploadsParked += 1
                rejected.send(RejectedWrite(mutationID: nil, subject: .upload(bucket: upload.bucket, path: upload.path), code: code, message: message))
            case .gone:
                continue
            }
        }
    }

    private enum UploadOutcome: Sendable {
        case settled, refused(code: String, message: String), gone
    }

    /// One attempt at `upload`, counted before anything is sent.
    private nonisolated func send(_ upload: StoredAttachment, token: String?) async throws -> UploadOutcome {
        guard let earlier = try store.countUploadAttempt(upload) else { return .gone }  // removed or replaced meanwhile
        if earlier > 0, try await holdsSameBytes(upload, token: token) { return .settled }
        guard let data = FileManager.default.contents(atPath: store.attachmentFile(upload.file)) else {
            return .refused(code: "fileMissing", message: "the upload's file \(upload.file) is gone from \(store.attachmentsDirectory)")
        }
        do {
            try await api.uploadObject(bucket: upload.bucket, path: upload.path, bytes: Array(data), contentType: upload.contentType,
                                       upsert: upload.upsert, token: token)
            faults.afterUploadReply?()
            return .settled
        } catch let error as ClientError where error.kind == .refused {
            faults.afterUploadReply?()
            if error.code == "KeyAlreadyExists", try await holdsSameBytes(upload, token: token) { return .settled }
            return .refused(code: error.code ?? "refused", message: error.message)
        }
    }

    /// Whether the server's object at the upload's path has the upload's bytes.
    private nonisolated func holdsSameBytes(_ upload: StoredAttachment, token: String?) async throws -> Bool {
        guard let info = try await api.objectInfo(bucket: upload.bucket, path: upload.path, token: token) else { return false }
        return info.etag == upload.etag && info.size == upload.size
    }

    /// The bytes of object `path` of `bucket`: the device's copy when it has one (offline too; an upload not yet
    /// settled answers with its own bytes), else downloaded as the signed-in user and kept on the device, within the
    /// store's `attachmentBudget`. `refresh` downloads again even when a cached copy exists, and falls back to it
    /// when the server cannot be reached.
    public func attachment(bucket: String, path: String, refresh: Bool = false) async throws -> Data {
        let local = try store.attachment(bucket: bucket, path: path)
        if let local, !refresh || local.state != .cached, let data = try store.cachedAttachment(bucket: bucket, path: path) { return data }
        do {
            let (bytes, etag, contentType) = try await withRetries { token in try await self.api.downloadObject(bucket: bucket, path: path, token: token) }
            let data = Data(bytes)
            try store.keepDownloaded(data, bucket: bucket, path: path, etag: etag, contentType: contentType)
            return data
        } catch let error as ClientError where error.kind == .offline || error.kind == .transient {
            guard local != nil, let data = try store.cachedAttachment(bucket: bucket, path: path) else { throw error }
            return data
        }
    }
}
