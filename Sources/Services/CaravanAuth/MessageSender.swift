package import CaravanCore
package import Logging

/// How a message travels.
package enum MessageChannel: String, Sendable {
    case email
    case sms
}

/// A code on its way to a user.
package struct OutgoingMessage: Sendable, Hashable {
    package let channel: MessageChannel
    package let recipient: String
    package let subject: String
    package let body: String

    package init(channel: MessageChannel, recipient: String, subject: String, body: String) {
        self.channel = channel
        self.recipient = recipient
        self.subject = subject
        self.body = body
    }
}

/// Where one-time codes leave the server.
package protocol MessageSender: Sendable {
    func send(_ message: OutgoingMessage) async throws
}

/// The development sender: writes every message to the log and to the `auth_outbox` table, where developers and
/// tests read the codes.
package struct OutboxSender: MessageSender {
    let pipeline: WritePipeline
    let catalog: Catalog
    let logger: Logger
    let clock: WallClock

    package init(pipeline: WritePipeline, catalog: Catalog, logger: Logger, clock: WallClock) {
        self.pipeline = pipeline
        self.catalog = catalog
        self.logger = logger
        self.clock = clock
    }

    package func send(_ message: OutgoingMessage) async throws {
        let row = RowValues([
            "channel": .text(message.channel.rawValue), "recipient": .text(message.recipient),
            "subject": .text(message.subject), "body": .text(message.body),
        ])
        let dayAgo = Timestamp.format(microseconds: clock.microseconds - 86_400 * 1_000_000)
        _ = try await pipeline.run(catalog.access(for: .serviceRole)) { tx in
            // Messages older than a day are pruned: the outbox is for reading codes now, not an archive of them.
            _ = try await tx.delete(from: AuthSchema.outbox, where: .compare(try AuthSchema.outbox.requireColumn("created_at"), .lt, .text(dayAgo)))
            return try await tx.insert([row], into: AuthSchema.outbox, conflict: nil)
        }
        // The body holds a live one-time code: debug output only, never the levels production logs keep.
        logger.debug("auth message (development outbox)", metadata: [
            "message.channel": .string(message.channel.rawValue), "message.recipient": .string(message.recipient),
            "message.body": .string(message.body),
        ])
    }
}
