public import CaravanCore
import CaravanClientSQLite
public import Observation
import Synchronization

extension LocalStore {
    /// The records of `Record`'s table matching `predicate`, in `order` (then by primary key), at most `limit`: now,
    /// then after every committed transaction that changes the table, and only when the result differs. A
    /// transaction is seen whole: a local write at once, a pull (all its pages) or a realtime batch when it commits.
    /// The sequence ends when the task iterating it is cancelled.
    ///
    /// ```swift
    /// for try await cafes in try store.live(Place.self, where: .column(Place.CodingKeys.category, .eq, "cafe"),
    ///                                       order: [OrderTerm(Place.CodingKeys.googleRating, .descending)], limit: 50) {
    ///     show(cafes)
    /// }
    /// ```
    public func live<Record: TableRecord>(_ type: Record.Type, where predicate: Predicate = .constant(true), order: [OrderTerm] = [],
                                          limit: Int? = nil) throws -> AsyncThrowingStream<[Record], any Error> {
        let table = try table(for: Record.self)
        let bound = try Self.bind(predicate, to: table)
        for term in order where table.column(named: term.column) == nil {
            throw ClientError(.local, code: CaravanError.Code.unknownColumn.description, "\(table.name) has no column \(term.column)")
        }
        // A whole table follows the rows each transaction wrote (a one-row change reads one row); a limited list is
        // read again after each commit (its rows are few; what a change pushes in or out is for SQL to say), as is a
        // table with a column named like the rowid.
        let updates: AsyncThrowingStream<LiveRowsUpdate, any Error>
        if limit == nil, LocalDatabase.canFollowRows(of: table) {
            updates = database.observeRows(table, matching: bound, order: order)
        } else {
            updates = database.observe(removingDuplicates: false) { .all(try $0.localRows(table, matching: bound, order: order, limit: limit)) }
        }
        let rowOrder = try RowOrder(order, of: table)
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    var decoded = DecodedRows<Record>()
                    for try await update in updates {
                        if let records = try decoded.records(after: update, in: rowOrder) { continuation.yield(records) }
                    }
                    continuation.finish()
                } catch let error as LocalStorageError {
                    continuation.finish(throwing: ClientError(.local, error.description))
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// `live(_:where:order:limit:)` for a parsed `Query` (filters, order, limit).
    public func live<Record: TableRecord>(_ type: Record.Type, query: Query) throws -> AsyncThrowingStream<[Record], any Error> {
        try Self.checkLocal(query)
        return try live(type, where: query.filter, order: query.order, limit: query.limit)
    }
}

/// The records of a live query's last result, so the next one decodes only the rows that changed: a one-row change
/// in a result of thousands decodes one row. Rows are compared as their stored bytes (`LocalRows`).
struct DecodedRows<Record: TableRecord> {
    private var rows: LocalRows?
    private var records: [Record] = []

    /// The records after `update`, or nil when the result is the same (nothing to emit).
    mutating func records(after update: LiveRowsUpdate, in order: RowOrder) throws -> [Record]? {
        switch update {
        case .all(let page):
            return try records(of: page)
        case .changed(let rowids, let changed, let matching):
            guard var rows else { return nil }   // (the first update is `.all`)
            let edits = rows.apply(changed: rowids, rows: changed, matching: matching, in: order)
            self.rows = rows
            return try edits.isEmpty ? nil : records(after: edits, of: changed)
        }
    }

    /// The last records with `edits` made, inserted rows decoded from `changed`.
    private mutating func records(after edits: [LiveRowsEdit], of changed: LocalRows) throws -> [Record] {
        for edit in edits {
            switch edit {
            case .remove(let index): records.remove(at: index)
            case .insert(let row, let index): records.insert(try LocalStore.record(Record.self, from: changed.json(row)), at: index)
            }
        }
        return records
    }

    /// The records of `page`, or nil when it is the last result again (nothing to emit).
    mutating func records(of page: LocalRows) throws -> [Record]? {
        if let rows, page.count == rows.count {
            // The common case, the same rows in the same places but a few: the last records, those few replaced.
            var changed: [Int] = []
            for index in 0..<page.count where !page.same(index, as: index, of: rows) {
                changed.append(index)
                if changed.count > 32 { break }
            }
            if changed.isEmpty { return nil }
            if changed.count <= 32 {
                var next = records
                for index in changed { next[index] = try LocalStore.record(Record.self, from: page.json(index)) }
                self.rows = page
                records = next
                return next
            }
        }
        // Rows came or went: each row's record by place, else by value, else decoded.
        var next: [Record] = []
        next.reserveCapacity(page.count)
        var misses = 0
        var previous: [ArraySlice<UInt8>: Int]?
        for index in 0..<page.count {
            if let rows, index < rows.count, page.same(index, as: index, of: rows) {   // the same row at the same place
                next.append(records[index])
                continue
            }
            misses += 1
            if previous == nil, misses > 32, let rows {   // rows moved: look them up by value
                previous = Dictionary((0..<rows.count).map { (rows.row($0), $0) }, uniquingKeysWith: { first, _ in first })
            }
            if let known = previous?[page.row(index)] {
                next.append(records[known])
            } else {
                next.append(try LocalStore.record(Record.self, from: page.json(index)))
            }
        }
        rows = page
        records = next
        return next
    }
}

/// A live query as an observable object for SwiftUI: `records` follows `LocalStore.live(_:where:order:limit:)`, set
/// on the main actor at each committed change of the table; `error` is the failure that ended it, if any.
///
/// ```swift
/// let cafes = try LiveQuery(store, Place.self, where: .column(Place.CodingKeys.category, .eq, "cafe"))  // in a view model
/// var body: some View { List(cafes.records, id: \.id) { Text($0.nameEn ?? $0.nameAr) } }
/// ```
@MainActor
@Observable
public final class LiveQuery<Record: TableRecord> {
    /// The query's current result (empty until the first read).
    public private(set) var records: [Record] = []
    /// Whether the first read has arrived.
    public private(set) var isLoaded = false
    /// What ended the query (the store failed, a row no longer decodes as `Record`).
    public private(set) var error: (any Error)?
    @ObservationIgnored private let running = FollowingTask()

    public init(_ store: LocalStore, _ type: Record.Type, where predicate: Predicate = .constant(true), order: [OrderTerm] = [],
                limit: Int? = nil) throws {
        let results = try store.live(type, where: predicate, order: order, limit: limit)
        running.start(Task { [weak self] in
            do {
                for try await records in results {
                    guard let self else { return }
                    self.records = records
                    self.isLoaded = true
                }
            } catch is CancellationError {
                return
            } catch {
                self?.error = error
            }
        })
    }

    /// Stops following the store (also done when the object goes away).
    public nonisolated func cancel() { running.cancel() }

    deinit { running.cancel() }
}

/// The task an observable object follows the store with, cancellable from any isolation (`deinit`).
final class FollowingTask: Sendable {
    private let task = Mutex<Task<Void, Never>?>(nil)
    func start(_ task: Task<Void, Never>) { self.task.withLock { $0 = task } }
    func cancel() { task.withLock { $0?.cancel() } }
}
