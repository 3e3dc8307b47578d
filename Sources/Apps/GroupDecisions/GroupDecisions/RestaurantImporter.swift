package import CaravanCore
import Foundation

/// `caravan import restaurants FILE`: the places.json entries whose category is restaurant, fast
/// food or cafe become `restaurants` rows, upserted by `google_place_id`.
///
/// Mapping, with nothing invented: `google_place_id` = the first of `sources`; `name` = `name_en`, else `name_ar`;
/// `address` = `street`; `cuisine` = the OSM kind (`category_en`: restaurant, fast_food, cafe — the data holds no
/// cuisine); `lat`/`lng`; `phone`, `website`; `hours` = `{"opening_hours": <the OSM string>}`. Rating, price range,
/// pick-up time and photos stay NULL: the data has none.
package struct RestaurantImporter: Sendable {
    /// The kinds imported, by `category_en` and by the Arabic `category` label.
    package static let kinds: [(english: String, arabic: String)] = [("restaurant", "مطاعم"), ("fast_food", "وجبات سريعة"), ("cafe", "كافيه")]

    package struct Rejection: Sendable, Equatable {
        package let index: Int
        package let field: String
        package let reason: String
    }

    package struct Summary: Sendable {
        package var total = 0
        package var skipped = 0
        package var inserted = 0
        package var updated = 0
        package var rejections: [Rejection] = []
        /// Rows imported per kind (`restaurant`, `fast_food`, `cafe`).
        package var byKind: [String: Int] = [:]
    }

    let pipeline: WritePipeline
    let access: AccessContext
    let batchSize: Int

    package init(pipeline: WritePipeline, access: AccessContext, batchSize: Int = 500) {
        self.pipeline = pipeline
        self.access = access
        self.batchSize = max(1, batchSize)
    }

    /// The kind of an entry (`restaurant`, `fast_food`, `cafe`), or nil for any other place.
    package static func kind(of entry: JSONValue) -> String? {
        let english = entry["category_en"].flatMap { if case .string(let s) = $0 { s } else { nil } }
        let arabic = entry["category"].flatMap { if case .string(let s) = $0 { s } else { nil } }
        return kinds.first { $0.english == english || $0.arabic == arabic }?.english
    }

    static func string(_ entry: JSONValue, _ field: String) -> String? {
        guard case .string(let text)? = entry[field] else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    static func number(_ entry: JSONValue, _ field: String) -> Value {
        switch entry[field] {
        case .double(let d)?: .double(d)
        case .integer(let i)?: .double(Double(i))
        default: .null
        }
    }

    /// The row of one entry, or the field that cannot be mapped.
    package static func row(from entry: JSONValue, kind: String) throws(RejectionReason) -> RowValues {
        guard case .array(let sources)? = entry["sources"], case .string(let source)? = sources.first, !source.isEmpty else {
            throw RejectionReason(field: "sources", reason: "no source to use as google_place_id")
        }
        guard let name = string(entry, "name_en") ?? string(entry, "name_ar") else {
            throw RejectionReason(field: "name_en", reason: "neither name_en nor name_ar")
        }
        var row = RowValues(["google_place_id": .text(source), "name": .text(name), "cuisine": .text(kind),
                             "lat": number(entry, "lat"), "lng": number(entry, "lng")])
        row.set("address", string(entry, "street").map(Value.text) ?? .null)
        row.set("phone", string(entry, "phone").map(Value.text) ?? .null)
        row.set("website", string(entry, "website").map(Value.text) ?? .null)
        row.set("hours", string(entry, "hours").map { .json(JSONValue.object([("opening_hours", .string($0))]).jsonText) } ?? .null)
        return row
    }

    package struct RejectionReason: Error, Sendable {
        package let field: String
        package let reason: String
    }

    /// Imports the restaurants of `entries` (the places.json array) in batches, upserting by `google_place_id`.
    package func run(_ entries: [JSONValue]) async throws -> Summary {
        var summary = Summary()
        summary.total = entries.count
        var pending: [(index: Int, kind: String, row: RowValues)] = []
        for (index, entry) in entries.enumerated() {
            guard let kind = Self.kind(of: entry) else { summary.skipped += 1; continue }
            do {
                pending.append((index, kind, try Self.row(from: entry, kind: kind)))
            } catch {
                summary.rejections.append(Rejection(index: index, field: error.field, reason: error.reason))
            }
        }
        var start = 0
        while start < pending.count {
            let batch = Array(pending[start..<min(start + batchSize, pending.count)])
            let rows = batch.map(\.row)
            let outcomes = try await pipeline.run(access) { tx in
                try await tx.upsertEach(rows, into: GroupDecisionsSchema.restaurants, conflictColumns: ["google_place_id"])
            }
            for (item, outcome) in zip(batch, outcomes) {
                switch outcome {
                case .inserted: summary.inserted += 1; summary.byKind[item.kind, default: 0] += 1
                case .updated: summary.updated += 1; summary.byKind[item.kind, default: 0] += 1
                case .rejected(let error): summary.rejections.append(Rejection(index: item.index, field: "(row)", reason: error.message))
                }
            }
            start += batchSize
        }
        return summary
    }
}
