import Foundation
package import CaravanCore

/// `manifest.json` of a Caravan backup file: what the archive holds and, per table, the rows and checksum (as
/// `caravan copy` computes them) of the state it was taken from, which a restore must reproduce.
package struct BackupManifest: Sendable, Equatable {
    /// How the database travels in the archive.
    package enum Payload: String, Sendable {
        /// `caravan.sqlite`: a copy made by SQLite's online backup API (plus `jwt_secret.json`).
        case sqlite
        /// `database.pgdump`: `pg_dump --format=custom` (the signing secret is in its `caravan_secrets`).
        case pgDump = "pg_dump"

        /// The archive entry holding the database.
        package var entry: String { self == .sqlite ? "caravan.sqlite" : "database.pgdump" }
    }

    /// One table's figures at backup time.
    package struct Table: Sendable, Equatable {
        package let name: String
        package let rows: Int
        package let checksum: String
    }

    /// The object bytes of a SQLite deployment carried under `storage/` (PostgreSQL keeps them in the
    /// `storage_object_chunks` table, checked with the other tables): how many files, their size in all, and a checksum
    /// over each version's SHA-256.
    package struct Storage: Sendable, Equatable {
        package let files: Int
        package let bytes: Int64
        package let checksum: String
    }

    package static let entry = "manifest.json"
    package static let secretEntry = "jwt_secret.json"
    static let formatVersion: Int64 = 1

    package let payload: Payload
    /// Seconds since 1970 when the backup was taken.
    package let createdAt: Int64
    /// The migrations applied to the backed-up deployment, in order.
    package let migrations: [String]
    package let tables: [Table]
    /// The object files (SQLite backups; nil for pg_dump backups and backups from before they were carried).
    package let storage: Storage?

    package var json: JSONValue {
        var members: [(key: String, value: JSONValue)] = [
            ("format", .string("caravan-backup")),
            ("version", .integer(Self.formatVersion)),
            ("payload", .string(payload.rawValue)),
            ("created_at", .integer(createdAt)),
            ("migrations", .array(migrations.map(JSONValue.string))),
            ("tables", .array(tables.map { table in
                .object([("table", .string(table.name)), ("rows", .integer(Int64(table.rows))), ("checksum", .string(table.checksum))])
            })),
        ]
        if let storage {
            members.append(("storage", .object([("files", .integer(Int64(storage.files))), ("bytes", .integer(storage.bytes)),
                                                ("checksum", .string(storage.checksum))])))
        }
        return .object(members)
    }

    package init(payload: Payload, createdAt: Int64, migrations: [String], tables: [Table], storage: Storage? = nil) {
        self.payload = payload
        self.createdAt = createdAt
        self.migrations = migrations
        self.tables = tables
        self.storage = storage
    }

    /// Reads a manifest; anything unexpected is `invalidBackup`.
    package init(parsing bytes: [UInt8]) throws(DeploymentError) {
        let invalid = DeploymentError(.invalidBackup, "the backup's manifest.json is malformed")
        guard let document = try? JSONParser.parse(bytes: bytes), case .string("caravan-backup")? = document["format"] else {
            throw DeploymentError(.invalidBackup, "not a Caravan backup (no caravan-backup manifest)")
        }
        guard case .integer(Self.formatVersion)? = document["version"] else {
            throw DeploymentError(.invalidBackup, "the backup's format version is not supported by this caravan")
        }
        guard case .string(let payloadName)? = document["payload"], let payload = Payload(rawValue: payloadName),
              case .integer(let createdAt)? = document["created_at"], case .array(let migrationItems)? = document["migrations"],
              case .array(let tableItems)? = document["tables"] else { throw invalid }
        var migrations: [String] = []
        for item in migrationItems {
            guard case .string(let id) = item else { throw invalid }
            migrations.append(id)
        }
        var tables: [Table] = []
        for item in tableItems {
            guard case .string(let name)? = item["table"], case .integer(let rows)? = item["rows"],
                  case .string(let checksum)? = item["checksum"] else { throw invalid }
            tables.append(Table(name: name, rows: Int(rows), checksum: checksum))
        }
        var storage: Storage?
        if let item = document["storage"] {
            guard case .integer(let files)? = item["files"], case .integer(let bytes)? = item["bytes"], case .string(let checksum)? = item["checksum"] else {
                throw invalid
            }
            storage = Storage(files: Int(files), bytes: bytes, checksum: checksum)
        }
        self.init(payload: payload, createdAt: createdAt, migrations: migrations, tables: tables, storage: storage)
    }

    /// One line per table: name, rows, checksum.
    package var text: String {
        let width = max(5, tables.map(\.name.count).max() ?? 0)
        var lines = ["table".padding(toLength: width, withPad: " ", startingAt: 0) + "  rows        checksum"]
        for table in tables {
            lines.append(table.name.padding(toLength: width, withPad: " ", startingAt: 0) + "  "
                         + String(table.rows).padding(toLength: 10, withPad: " ", startingAt: 0) + "  " + table.checksum)
        }
        if let storage {
            lines.append("object files (storage/): \(storage.files) files, \(storage.bytes) bytes, checksum \(storage.checksum)")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
