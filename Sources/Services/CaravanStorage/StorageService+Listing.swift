package import CaravanCore
import Foundation
import Logging

extension StorageService {
    /// The entries directly under `options.prefix` (a folder: `photos` or `photos/2024`) that `identity` may read:
    /// objects by their name within the folder, and each sub-folder once, as Supabase's `list` gives them. Folders
    /// have no timestamps: they sort by name, before the objects when sorting by a timestamp.
    package func list(bucket: String, options: ListOptions, as identity: Identity) async throws(StorageError) -> [ListEntry] {
        _ = try await bucketConfiguration(bucket)
        let folder = options.prefix.isEmpty || options.prefix.hasSuffix("/") ? options.prefix : options.prefix + "/"
        let table = StorageSchema.objects
        var filter = try Self.equals(table, "bucket_id", .text(bucket))
        if !folder.isEmpty {
            let name = try table.requireColumnForStorage("name")
            filter = .and([filter, .like(name, pattern: ObjectKey.likePattern(prefix: folder), caseInsensitive: false)])
        }
        let objects = try await rows(table, where: filter, as: identity, order: [OrderTerm(column: "name")])
            .map { row throws(StorageError) in try StoredObject(row: row) }
        var folders: [String] = []
        var seenFolders: Set<String> = []
        var files: [ListEntry] = []
        for object in objects {
            let rest = object.name.dropFirst(folder.count)
            if let slash = rest.firstIndex(of: "/") {
                let sub = String(rest[..<slash])
                if seenFolders.insert(sub).inserted { folders.append(sub) }
            } else {
                files.append(.object(name: String(rest), object))
            }
        }
        var entries = folders.map { ListEntry.folder(name: $0) } + files
        if let search = options.search?.lowercased(), !search.isEmpty {
            entries = entries.filter { $0.name.lowercased().hasPrefix(search) }
        }
        entries.sort { Self.precedes($0, $1, by: options.sortColumn, descending: options.descending) }
        return Array(entries.dropFirst(max(options.offset, 0)).prefix(max(options.limit, 0)))
    }

    static func precedes(_ a: ListEntry, _ b: ListEntry, by column: ListOptions.SortColumn, descending: Bool) -> Bool {
        func key(_ entry: ListEntry) -> String? {
            guard case .object(_, let object) = entry else { return nil }
            switch column {
            case .name: return entry.name
            case .createdAt: return object.createdAt
            case .updatedAt: return object.updatedAt
            case .lastAccessedAt: return object.lastAccessedAt
            }
        }
        let left = column == .name ? a.name : key(a), right = column == .name ? b.name : key(b)
        switch (left, right) {
        case (nil, nil): return a.name < b.name
        case (nil, _): return true
        case (_, nil): return false
        case (let l?, let r?):
            if l == r { return a.name < b.name }
            return descending ? l > r : l < r
        }
    }
}

extension TableSchema {
    /// A column storage names itself (a programming error if it is missing).
    func requireColumnForStorage(_ name: String) throws(StorageError) -> Column {
        guard let column = column(named: name) else {
            throw StorageError(.internalError, "Internal Server Error", internalDetail: "\(self.name).\(name) is not declared")
        }
        return column
    }
}
