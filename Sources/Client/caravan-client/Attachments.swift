import ArgumentParser
import CaravanClient
import CaravanCore
import Foundation

struct Attach: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Queue an upload of FILE to storage object BUCKET/PATH (works offline; `sync` sends it, exactly once).")
    @OptionGroup var options: ClientOptions
    @Argument var bucket: String
    @Argument var path: String
    @Argument(help: "The file to upload.") var file: String
    @Option(help: "The Content-Type to claim (the server checks it against the bytes).") var contentType: String?
    @Flag(help: "Replace an object already at PATH (x-upsert); without it, one there parks the upload.") var upsert = false

    func run() async throws {
        let context = try options.context()
        await context.close()
        let queued = try await context.store.queueUpload(contentsOf: URL(fileURLWithPath: file), bucket: bucket, path: path,
                                                         contentType: contentType, upsert: upsert)
        printJSON(queued.json)
    }
}

struct AttachmentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attachment",
        abstract: "Read storage object BUCKET/PATH: the device's copy (offline too), else downloaded and kept in the attachment cache.")
    @OptionGroup var options: ClientOptions
    @Argument var bucket: String
    @Argument var path: String
    @Option(help: "Write the bytes to this file (default: standard output).") var out: String?
    @Flag(help: "Download again even when a copy is cached (the copy answers when the server is unreachable).") var refresh = false

    func run() async throws {
        let context = try options.context()
        let engine = SyncEngine(store: context.store, api: context.api, session: context.session, now: nowMicroseconds)
        let result: Result<Data, any Error>
        do { result = .success(try await engine.attachment(bucket: bucket, path: path, refresh: refresh)) } catch { result = .failure(error) }
        await context.close()
        let data = try result.get()
        guard let out else { return FileHandle.standardOutput.write(data) }
        do {
            try data.write(to: URL(fileURLWithPath: out))
        } catch {
            throw ClientError(.local, "cannot write \(out): \(error)")
        }
        printJSON(.object([("bucket", .string(bucket)), ("path", .string(path)), ("size", .integer(Int64(data.count)))]))
    }
}

struct AttachmentsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attachments", abstract: "Print the device's attachments as JSON: pending and parked uploads, cached copies.")
    @OptionGroup var options: ClientOptions

    func run() async throws {
        let context = try options.context()
        await context.close()
        let entries = try context.store.attachments()
        printJSON(.object(Attachment.State.allCases.map { state in
            (state.rawValue, .array(entries.filter { $0.state == state }.map(\.json)))
        }))
    }
}
