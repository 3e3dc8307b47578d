package import CaravanCore
import Foundation

/// The signing secret of a database deployment (PostgreSQL): row `jwt` of `caravan_secrets` (migration
/// system-0004), so every instance on the database signs and verifies with the same key.
extension SigningSecret {
    /// The `name` of the JWT signing secret's row.
    package static let databaseName = "jwt"

    /// The secret as a `caravan_secrets` row (every column, in table order).
    package var databaseRow: [Value] {
        [.text(Self.databaseName), .text(Data(bytes).base64EncodedString()), .integer(createdAt)]
    }

    /// Loads the secret from `store`, generating it on first use. Safe when several instances start at once: each
    /// inserts its own in a transaction; the primary key lets one commit and the others fail with a unique violation
    /// (after waiting for the winner), and everyone then reads back the one stored secret.
    package static func loadOrCreate(in store: any Store, now: Int64) async throws -> SigningSecret {
        if let stored = try await stored(in: store) { return stored }
        let fresh = generate(now: now)
        let row = RowValues(columns: SystemModule.secrets.columns.map(\.name), values: fresh.databaseRow)
        let access = Catalog(modules: [SystemModule.module]).access(for: .serviceRole)
        do {
            // A bookkeeping row, not change-logged: there is nothing to publish, so no pipeline is needed.
            _ = try await store.transaction(access, rollback: false, grant: TransactionGrant()) { tx in
                _ = try await tx.insert([row], into: SystemModule.secrets, conflict: nil)
            }
        } catch let error as CaravanError where error.code == .uniqueViolation {
            // Another instance stored the secret first: read theirs back below.
        }
        guard let stored = try await stored(in: store) else {
            throw CaravanError(.internalFailure, "the signing secret was stored but cannot be read back")
        }
        return stored
    }

    /// The stored secret, or nil when none was made yet.
    package static func stored(in store: any Store) async throws -> SigningSecret? {
        let table = SystemModule.secrets
        let plan = try ReadPlan(table: table, query: Query(limit: 1), access: .compare(try table.requireColumn("name"), .eq, .text(databaseName)),
                                maxRows: nil, includeCount: false)
        guard let row = try await store.fetch(plan).rows.first else { return nil }
        guard row.count == 3, case .text(let encoded) = row[1], let bytes = Data(base64Encoded: encoded), bytes.count >= 32,
              case .integer(let createdAt) = row[2] else {
            throw CaravanError(.internalFailure, "the stored signing secret is malformed")
        }
        return SigningSecret(validBytes: Array(bytes), createdAt: createdAt)
    }
}
