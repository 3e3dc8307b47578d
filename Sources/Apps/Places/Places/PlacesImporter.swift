package import CaravanCore

/// Maps one places.json entry to a `places` row (design §2.3, with its fallbacks).
package enum PlaceRecordMapping {
    /// A field that could not be mapped: the JSON field name and the reason.
    package struct FieldError: Error, Sendable, Hashable {
        package let field: String
        package let reason: String
    }

    /// (column, JSON fields tried in order). The first present, non-null field wins.
    static let fields: [(column: String, sources: [String])] = [
        ("id", ["id"]),
        ("name_ar", ["name_ar"]),
        ("name_en", ["name_en"]),
        ("category", ["category_en"]),
        ("category_ar", ["category", "category_ar"]),
        ("neighborhood", ["neighborhood"]),
        ("neighborhood_en", ["neighborhood_en"]),
        ("description_ar", ["description_ar"]),
        ("google_rating", ["google_rating"]),
        ("rating_count", ["rating_count"]),
        ("price_range", ["price_range", "price_level"]),
        ("latitude", ["lat", "latitude"]),
        ("longitude", ["lng", "longitude"]),
        ("google_maps_url", ["google_maps_url"]),
        ("address_ar", ["address_ar", "address", "street"]),
        ("phone", ["phone"]),
        ("website", ["website"]),
        ("instagram", ["instagram"]),
        ("hours", ["hours"]),
        ("cover_image_url", ["cover_image_url"]),
        ("images", ["images"]),
        ("tags", ["tags"]),
        ("perfect_for", ["perfect_for"]),
        ("audience", ["audience"]),
        ("features", ["features"]),
        ("is_trending", ["trending", "is_trending"]),
        ("is_new", ["is_new"]),
        ("is_free", ["is_free"]),
        ("is_verified", ["is_verified"]),
        ("data_sources", ["sources", "data_sources"]),
    ]

    /// Fallbacks the design gives when a field is absent.
    static let fallbacks: [String: Value] = [
        "category": .text("other"),
        "category_ar": .text(""),
        "google_rating": .double(0),
        "is_trending": .bool(false),
        "is_new": .bool(false),
        "is_free": .bool(false),
    ]

    /// The row for `entry`, or the first field that cannot be mapped. CHECK and NOT NULL constraints are
    /// validated too, and reported against the JSON field(s) they concern.
    /// The places validator, with its CHECK rules bound once.
    static let validator: RowValidator = {
        do {
            return try RowValidator(table: PlacesSchema.places)
        } catch {
            preconditionFailure("the places schema's checks must bind to it: \(error)")  // a programming error, caught by every test
        }
    }()

    package static func row(from entry: JSONValue) throws(FieldError) -> RowValues {
        guard case .object = entry else { throw FieldError(field: "(row)", reason: "expected a JSON object, found \(entry.typeName)") }
        let table = PlacesSchema.places
        var columns: [String] = []
        var values: [Value] = []
        var sourceOf: [String: String] = [:]
        for (columnName, sources) in fields {
            guard let column = table.column(named: columnName) else { continue }
            var found: (field: String, json: JSONValue)?
            for source in sources {
                if let json = entry[source], json != .null { found = (source, json); break }
            }
            let value: Value
            if let found {
                sourceOf[columnName] = found.field
                value = try Self.value(of: column, field: found.field, json: found.json)
            } else if let fallback = fallbacks[columnName] {
                value = fallback
                sourceOf[columnName] = sources[0]
            } else {
                continue
            }
            columns.append(columnName)
            values.append(value)
        }
        if columns.firstIndex(of: "name_ar") == nil, let english = entry["name_en"], case .string(let name) = english, !name.isEmpty {
            // The data's name_ar falls back to the primary name; an entry with only name_en is still a place.
            columns.append("name_ar")
            values.append(.text(name))
            sourceOf["name_ar"] = "name_en"
        }
        for required in ["id", "name_ar"] {
            guard let index = columns.firstIndex(of: required), case .text(let text) = values[index], !text.isEmpty else {
                throw FieldError(field: required, reason: "is required and must be a non-empty string")
            }
        }
        let row = RowValues(columns: columns, values: values)
        do {
            try validator.validate(row)
        } catch {
            throw checkFailure(error, sourceOf: sourceOf)
        }
        return row
    }

    /// The value of `column` from the JSON found in `field`: identifiers and Arabic names trimmed; a text column
    /// takes only a string, and a JSON column keeps a string as it is (hours in OSM form, "Mo-Fr 08:00-17:00").
    static func value(of column: Column, field: String, json found: JSONValue) throws(FieldError) -> Value {
        var json = found
        if ["name_ar", "id", "category", "category_ar"].contains(column.name), case .string(let s) = json {
            json = .string(s.trimmingSpaces)
        }
        if column.type == .text {
            guard case .string = json else { throw FieldError(field: field, reason: "expected a string, found \(json.typeName)") }
        }
        do {
            return try column.type.value(fromJSON: json)
        } catch {
            throw FieldError(field: field, reason: error.message)
        }
    }

    /// A failed CHECK as the error of the input fields its rule reads (or of the row).
    static func checkFailure(_ error: CaravanError, sourceOf: [String: String]) -> FieldError {
        let check = PlacesSchema.places.checks.first { error.message.contains("\"\($0.name)\"") }
        let fieldsInvolved = (check?.rule.columns ?? []).reduce(into: [String]()) { result, column in
            let field = sourceOf[column] ?? fields.first(where: { $0.column == column })?.sources.first ?? column
            if !result.contains(field) { result.append(field) }
        }
        return FieldError(field: fieldsInvolved.isEmpty ? "(row)" : fieldsInvolved.joined(separator: ","), reason: error.message)
    }
}

/// Imports a places.json document: batched upserts in transactions, every bad row reported and skipped.
package struct PlacesImporter: Sendable {
    /// A row that was not imported.
    package struct Rejection: Sendable, Hashable {
        /// The row's zero-based index in the file's array.
        package let index: Int
        /// The row's `id`, when it has one.
        package let id: String?
        package let field: String
        package let reason: String
    }

    /// What an import did (or, in a dry run, would do).
    package struct Summary: Sendable {
        package var total = 0
        package var inserted = 0
        package var updated = 0
        package var valid = 0
        package var rejections: [Rejection] = []
        package var dryRun = false
    }

    package let pipeline: WritePipeline
    package let access: AccessContext
    package let batchSize: Int

    /// Imports through `pipeline` as `access.identity` (the service role from the CLI): policies, change log and
    /// publishing apply as to any other write.
    package init(pipeline: WritePipeline, access: AccessContext, batchSize: Int = 500) {
        self.pipeline = pipeline
        self.access = access
        self.batchSize = batchSize
    }

    /// The entries of a places.json document: a top-level array, or an object with a `places` array.
    package static func entries(of document: JSONValue) throws(CaravanError) -> [JSONValue] {
        switch document {
        case .array(let items): return items
        case .object:
            if case .array(let items)? = document["places"] { return items }
            fallthrough
        default:
            throw CaravanError(.malformedBody, "places.json must be an array of places (or an object with a \"places\" array)")
        }
    }

    /// Imports `entries`. `progress(done, total)` is called after each batch.
    package func run(_ entries: [JSONValue], dryRun: Bool, progress: @Sendable (Int, Int) -> Void = { _, _ in }) async throws -> Summary {
        var summary = Summary()
        summary.total = entries.count
        summary.dryRun = dryRun
        var start = 0
        while start < entries.count {
            let end = min(start + batchSize, entries.count)
            var rows: [RowValues] = []
            var indexes: [Int] = []
            for index in start..<end {
                let entry = entries[index]
                let id: String? = if case .string(let s)? = entry["id"] { s } else { nil }
                do {
                    rows.append(try PlaceRecordMapping.row(from: entry))
                    indexes.append(index)
                } catch {
                    summary.rejections.append(Rejection(index: index, id: id, field: error.field, reason: error.reason))
                }
            }
            summary.valid += rows.count
            if !dryRun, !rows.isEmpty {
                let batch = rows
                let outcomes = try await pipeline.run(access) { transaction in
                    try await transaction.upsertEach(batch, into: PlacesSchema.places, conflictColumns: ["id"])
                }
                for (offset, outcome) in outcomes.enumerated() {
                    switch outcome {
                    case .inserted: summary.inserted += 1
                    case .updated: summary.updated += 1
                    case .rejected(let error):
                        let row = rows[offset]
                        let id: String? = if case .text(let s)? = row["id"] { s } else { nil }
                        summary.rejections.append(Rejection(index: indexes[offset], id: id, field: "(row)", reason: error.message))
                        summary.valid -= 1
                    }
                }
            }
            progress(end, entries.count)
            start = end
        }
        summary.rejections.sort { $0.index < $1.index }
        return summary
    }
}
