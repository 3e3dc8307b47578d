package import CaravanCore
import Foundation

/// Storage as a module of every deployment (beside `system` and `auth`): the bucket and object tables, their frozen
/// migration, and the policies that decide who reaches an object — the same policies REST would apply, compiled
/// into every read and write of `storage_objects`.
///
/// Defaults (as Supabase's recommended policies): an object of a private bucket is reachable by its owner (the user
/// who uploaded it) only; an object of a public bucket is readable by anyone; only the owner may overwrite, move or
/// delete an object; in a bucket declared with `pathsStartWithOwnerID`, a user writes only under `<their id>/`;
/// buckets are managed by the service role, which may do anything.
package enum StorageModule {
    /// Frozen in `Sources/Services/CaravanStorage/Migrations/<dialect>/<id>.sql`. Never edit a shipped file; append new ones.
    package static let migrations: [Migration] = [
        MigrationFiles(embedded: EmbeddedFiles.contents).migration("storage-0001-create", changes: StorageSchema.tables.map { .createTable($0) }),
    ]

    package static let policies: [String: [TablePolicy]] = [
        StorageSchema.objects.name: [
            TablePolicy("storage_objects_read", for: [.select], using: .or([
                .ownedBy("owner"),
                .exists(table: StorageSchema.buckets.name, where: [
                    .matchesOuter(inner: "id", outer: "bucket_id"), .equals(inner: "public", .literal(.bool(true))),
                ]),
            ])),
            TablePolicy("storage_objects_insert", for: [.insert], to: [.authenticated], check: writableByOwner),
            TablePolicy("storage_objects_update", for: [.update], to: [.authenticated], using: .ownedBy("owner"), check: writableByOwner),
            TablePolicy("storage_objects_delete", for: [.delete], to: [.authenticated], using: .ownedBy("owner")),
        ],
    ]

    /// What a user may write (an upload, the new name of a move, a copy's destination, an upsert): an object they own,
    /// under their own folder in a bucket whose paths start with the owner's id — so nobody takes another user's path.
    static let writableByOwner = PolicyRule.and([.ownedBy("owner"), .inOwnerFolder(bucket: "bucket_id", path: "name")])

    package static let behaviours: [TableBehaviour] = [
        TableBehaviour(StorageSchema.buckets.name, touches: "updated_at", defaultsToCaller: ["owner"]),
        TableBehaviour(StorageSchema.objects.name, touches: "updated_at", defaultsToCaller: ["owner"]),
    ]

    package static let module = AppModule(name: "storage", tables: StorageSchema.tables, migrations: migrations, policies: policies,
                                         behaviours: behaviours)
}
