package import CaravanCore
import Foundation

/// Where a pull stands: inside the initial snapshot, or following the change log. Opaque on the wire (base64url
/// of a small JSON object); it names the deployment's epoch and the scope (caller and tables) it was made for,
/// so a cursor from another history or another scope is refused with 409 must-refetch instead of silently
/// skipping rows. It also names the sync epoch of each pulled table (`Catalog.syncEpoch(of:)`, field `te`, written
/// only when one is past 1): a table whose epoch was raised since gets 409 for that table alone, and a pull with
/// `refetch=` re-snapshots it while the other tables follow the log on (`refetch`, field `r`).
package struct SyncCursor: Sendable, Hashable {
    package enum Position: Sendable, Hashable {
        /// Snapshot in progress: it began when the log's head was `start`; `table` (index into the pull's tables)
        /// is being paged after `lastKey` (nil: from its first row). The log is followed from `start` afterwards.
        case snapshot(start: Int64, table: Int, lastKey: [JSONValue]?)
        /// Following the change log after `seq`.
        case log(seq: Int64)
    }

    /// Tables of the pull re-snapshotted from a log cursor (`refetch=`): the snapshot pages only them; then the log
    /// is followed from the position's `start` (where the other tables stood), without these tables' entries at or
    /// below `through` (the log's head when the refetch began: the snapshot holds them).
    package struct Refetch: Sendable, Hashable {
        /// Indices into the pull's tables, ascending.
        package let tables: [Int]
        package let through: Int64

        package init(tables: [Int], through: Int64) {
            self.tables = tables
            self.through = through
        }
    }

    package let epoch: String
    package let scope: UInt64
    package let position: Position
    /// The sync epoch of each pulled table, in the pull's order, when the cursor was made (empty: all at 1).
    package let tableEpochs: [Int]
    package let refetch: Refetch?

    package init(epoch: String, scope: UInt64, position: Position, tableEpochs: [Int] = [], refetch: Refetch? = nil) {
        self.epoch = epoch
        self.scope = scope
        self.position = position
        self.tableEpochs = tableEpochs.allSatisfy { $0 == 1 } ? [] : tableEpochs
        self.refetch = refetch
    }

    /// The epoch of the pull's table `index` this cursor was made under.
    package func tableEpoch(_ index: Int) -> Int { index < tableEpochs.count ? tableEpochs[index] : 1 }

    /// The log position this cursor depends on (entries after it must still be in the log).
    package var logSeq: Int64 {
        switch position {
        case .snapshot(let start, _, _): start
        case .log(let seq): seq
        }
    }

    package var encoded: String {
        var pairs: [(key: String, value: JSONValue)] = [("v", .integer(1)), ("e", .string(epoch)), ("h", .string(String(scope, radix: 16)))]
        switch position {
        case .snapshot(let start, let table, let lastKey):
            pairs += [("s", .integer(start)), ("t", .integer(Int64(table))), ("k", lastKey.map(JSONValue.array) ?? .null)]
        case .log(let seq):
            pairs += [("s", .integer(seq))]
        }
        if !tableEpochs.isEmpty { pairs.append(("te", .array(tableEpochs.map { .integer(Int64($0)) }))) }
        if let refetch {
            pairs.append(("r", .object([("t", .array(refetch.tables.map { .integer(Int64($0)) })), ("s", .integer(refetch.through))])))
        }
        let text = JSONValue.object(pairs).jsonText
        return Data(text.utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// Decodes a cursor; anything that is not one this server wrote is `mustRefetch`, never a 500.
    package static func decode(_ text: String) throws(CaravanError) -> SyncCursor {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard text.count <= 4096, let data = Data(base64Encoded: base64),
              case .object(let pairs)? = try? JSONParser.parse(bytes: Array(data)) else {
            throw malformed
        }
        let fields = Dictionary(pairs.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        guard case .integer(1)? = fields["v"], case .string(let epoch)? = fields["e"],
              case .string(let scopeText)? = fields["h"], let scope = UInt64(scopeText, radix: 16),
              case .integer(let seq)? = fields["s"], seq >= 0 else {
            throw malformed
        }
        let tableEpochs = try indices(fields["te"], minimum: 1)
        var refetch: Refetch?
        if let field = fields["r"] {
            guard case .integer(let through)? = field["s"], through >= 0 else { throw malformed }
            let tables = try indices(field["t"], minimum: 0)
            guard !tables.isEmpty, tables == tables.sorted(), Set(tables).count == tables.count, tables.allSatisfy({ $0 < 1_000 }) else { throw malformed }
            refetch = Refetch(tables: tables, through: through)
        }
        guard let table = fields["t"] else {
            return SyncCursor(epoch: epoch, scope: scope, position: .log(seq: seq), tableEpochs: tableEpochs, refetch: refetch)
        }
        guard case .integer(let index) = table, index >= 0, index < 1_000 else { throw malformed }
        switch fields["k"] {
        case .null?, nil:
            return SyncCursor(epoch: epoch, scope: scope, position: .snapshot(start: seq, table: Int(index), lastKey: nil), tableEpochs: tableEpochs,
                              refetch: refetch)
        case .array(let key)?:
            return SyncCursor(epoch: epoch, scope: scope, position: .snapshot(start: seq, table: Int(index), lastKey: key), tableEpochs: tableEpochs,
                              refetch: refetch)
        default:
            throw malformed
        }
    }

    /// A JSON array of integers at least `minimum` (absent: empty).
    private static func indices(_ value: JSONValue?, minimum: Int64) throws(CaravanError) -> [Int] {
        guard let value else { return [] }
        guard case .array(let items) = value, items.count <= 1_000 else { throw malformed }
        var out: [Int] = []
        for item in items {
            guard case .integer(let number) = item, number >= minimum, number < Int64(Int32.max) else { throw malformed }
            out.append(Int(number))
        }
        return out
    }

    static var malformed: CaravanError {
        CaravanError(.mustRefetch, "The sync cursor is not valid", hint: "Pull again without a cursor")
    }

    /// The scope of a pull: who asks, which tables in order, and the filters on them (FNV-1a, 64 bits; a consistency
    /// check, not a secret). A pull without filters keeps the scope it had before filters existed.
    package static func scope(of identity: Identity, tables: [String], shape: String = "") -> UInt64 {
        var text = "\(identity.role.rawValue)\u{1}\(identity.userID ?? "")\u{1}\(tables.joined(separator: ","))"
        if !shape.isEmpty { text += "\u{1}" + shape }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }
}
