package import CaravanCore

/// The reference tables beside `places`: `areas` from the districts file and `categories` from the places' own
/// categories, with their `places_count`s. Run after an import (the CLI does), through the write pipeline.
package struct PlacesReferenceData: Sendable {
    /// What a sync did.
    package struct Summary: Sendable, Hashable {
        package var areas = 0
        package var rejectedAreas: [String] = []
        package var newCategories = 0
        package var categories = 0
    }

    package let pipeline: WritePipeline
    package let access: AccessContext

    package init(pipeline: WritePipeline, access: AccessContext) {
        self.pipeline = pipeline
        self.access = access
    }

    /// Upserts the districts of `districtsCSV` (header `district_id,name_ar,name_en`) into `areas`, with the number of
    /// active places in each (see `PlacesSearch.areaFilter`); adds a `categories` row for each category the places use
    /// that has none (`name_ar` from the places' Arabic label, `name_en` from the id: `place_of_worship` →
    /// `Place of worship`; existing rows keep their names), then recounts every category's places.
    package func sync(districtsCSV: String?) async throws -> Summary {
        let parsed = districtsCSV.map(Self.districts) ?? ([], [])
        return try await pipeline.run(access) { transaction in
            var summary = Summary()
            summary.rejectedAreas = parsed.1
            let areas = PlacesSchema.areas
            let places = PlacesSchema.places
            for row in parsed.0 {
                guard case .text(let id)? = row["id"] else { continue }
                var values = row
                let counting = try ReadPlan(table: places, query: Query(select: [.column(name: "id", alias: nil, cast: nil)], limit: 0),
                                            access: .both(try await PlacesSearch.areaFilter(id, transaction: transaction, names: Self.names(row)),
                                                          .isBool(try places.requireColumn("is_active"), true)),
                                            maxRows: nil, includeCount: true)
                values = RowValues(columns: values.columns + ["places_count"],
                                   values: values.values + [.integer(Int64(try await transaction.fetch(counting).totalCount ?? 0))])
                for outcome in try await transaction.upsertEach([values], into: areas, conflictColumns: ["id"]) {
                    if case .rejected(let error) = outcome { summary.rejectedAreas.append("\(id): \(error.message)") } else { summary.areas += 1 }
                }
            }
            summary.newCategories = try await Self.addMissingCategories(transaction)
            try await PlacesFunctions.refreshCategoryCounts(in: transaction)
            summary.categories = try await transaction.fetch(try ReadPlan(
                table: PlacesSchema.categories, query: Query(select: [.column(name: "id", alias: nil, cast: nil)], limit: 0),
                access: .constant(true), maxRows: nil, includeCount: true)).totalCount ?? 0
            return summary
        }
    }

    private static func names(_ row: RowValues) -> [String] {
        ["name_ar", "name_en"].compactMap { if case .text(let name)? = row[$0] { name } else { nil } }
    }

    /// The `areas` rows of a districts CSV, and a reason for each line that is not one.
    package static func districts(_ text: String) -> ([RowValues], [String]) {
        var rows: [RowValues] = []
        var rejected: [String] = []
        let lines = text.split(omittingEmptySubsequences: true) { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }
        guard let header = lines.first else { return ([], ["the districts file is empty"]) }
        let columns = header.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingSpaces }
        guard columns == ["district_id", "name_ar", "name_en"] else {
            return ([], ["the districts file's header must be district_id,name_ar,name_en"])
        }
        for (offset, line) in lines.dropFirst().enumerated() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmingSpaces }
            guard fields.count == 3, !fields[0].isEmpty, !fields[1].isEmpty, !line.contains("\"") else {
                rejected.append("line \(offset + 2): expected three plain fields (district_id,name_ar,name_en)")
                continue
            }
            rows.append(RowValues(["id": .text(fields[0]), "name_ar": .text(fields[1]), "name_en": fields[2].isEmpty ? .null : .text(fields[2])]))
        }
        return (rows, rejected)
    }

    /// Inserts a category row for every category used by a place and not yet in `categories`; returns how many.
    static func addMissingCategories(_ transaction: any StoreTransaction) async throws -> Int {
        let categories = PlacesSchema.categories
        let known = try await transaction.fetch(try ReadPlan(table: categories, query: Query(select: [.column(name: "id", alias: nil, cast: nil)]),
                                                       access: .constant(true), maxRows: nil, includeCount: false))
        var seen = Set(known.rows.compactMap { if case .text(let id) = $0[0] { id } else { nil } })
        var added = 0
        // One category at a time: the next unknown category in id order, through the category index.
        while true {
            let next = try await transaction.fetch(try ReadPlan(
                table: PlacesSchema.places,
                query: Query(select: [.column(name: "category", alias: nil, cast: nil), .column(name: "category_ar", alias: nil, cast: nil)],
                             filters: seen.isEmpty ? [] : [.not(.condition(Condition(column: "category", op: .in, operand: .list(Array(seen)))))],
                             order: [OrderTerm(column: "category")], limit: 1),
                access: .constant(true), maxRows: nil, includeCount: false))
            guard let row = next.rows.first, case .text(let id) = row[0] else { break }
            seen.insert(id)
            let label: String = if case .text(let arabic) = row[1], !arabic.isEmpty { arabic } else { id }
            let outcome = try await transaction.insert([RowValues(["id": .text(id), "name_ar": .text(label), "name_en": .text(englishName(id))])],
                                                 into: categories, conflict: ConflictTarget(columns: ["id"], resolution: .ignore))
            added += outcome.inserted
        }
        return added
    }

    /// `place_of_worship` → `Place of worship`.
    static func englishName(_ id: String) -> String {
        let words = id.split(separator: "_").joined(separator: " ")
        return words.prefix(1).uppercased() + words.dropFirst()
    }
}
