package import CaravanCore

/// Imports GeoNames-derived `countries.csv` and `world_cities15000.csv` (columns in `../shared/data/README.md`):
/// countries first, then cities, in batches through the write pipeline (validated, derived search columns,
/// change-logged), upserted by GeoNames id so a re-import updates in place. A bad row is reported and skipped.
package struct WorldImporter: Sendable {
    /// A row that was not imported.
    package struct Rejection: Sendable, Hashable {
        /// `countries` or `cities`.
        package let file: String
        /// The record's line in its file (1 is the header).
        package let line: Int
        package let id: String?
        package let field: String
        package let reason: String
    }

    /// What an import did.
    package struct Summary: Sendable {
        package var countries = Counts()
        package var cities = Counts()
        package var rejections: [Rejection] = []
    }

    package struct Counts: Sendable, Hashable {
        package var total = 0
        package var inserted = 0
        package var updated = 0
    }

    /// A mapped row, or the field it could not map.
    struct Mapped {
        let line: Int
        let id: String?
        let result: Result<RowValues, FieldError>
    }

    struct FieldError: Error {
        let field: String
        let reason: String
    }

    package static let countryColumns = ["geonameid", "iso2", "name", "name_ar", "capital", "continent", "population"]
    package static let cityColumns = ["geonameid", "name", "name_ar", "country_code", "country_name", "admin1_name",
                                     "population", "latitude", "longitude"]

    package let pipeline: WritePipeline
    package let access: AccessContext
    package let batchSize: Int

    /// Imports through `pipeline` as `access.identity` (the service role from the CLI).
    package init(pipeline: WritePipeline, access: AccessContext, batchSize: Int = 1000) {
        self.pipeline = pipeline
        self.access = access
        self.batchSize = max(1, batchSize)
    }

    /// Imports `countriesCSV`, then `citiesCSV`. A city's `country_id` is the id of the country with its
    /// `country_code` in the countries file. `progress(done, total)` is called after each batch (rows of both files).
    package func run(countriesCSV: String, citiesCSV: String, progress: @Sendable (Int, Int) -> Void = { _, _ in }) async throws -> Summary {
        let countryTable = try WorldCSV.table(countriesCSV, file: "countries")
        let cityTable = try WorldCSV.table(citiesCSV, file: "cities")
        try Self.requireColumns(Self.countryColumns, in: countryTable.header, file: "countries")
        try Self.requireColumns(Self.cityColumns, in: cityTable.header, file: "cities")
        var summary = Summary()
        var countryIDs: [String: Int64] = [:]
        let countries = countryTable.rows.map { record in
            let mapped = WorldRowMapping.country(record.values)
            if case .success(let row) = mapped, case .text(let code)? = row["country_code"], case .integer(let id)? = row["id"] {
                countryIDs[code] = id
            }
            return Mapped(line: record.line, id: record.values["geonameid"], result: mapped)
        }
        let cities = cityTable.rows.map { record in
            Mapped(line: record.line, id: record.values["geonameid"], result: WorldRowMapping.city(record.values, countryIDs: countryIDs))
        }
        let total = countries.count + cities.count
        summary.countries = try await load(countries, into: TravelLogSchema.countries, file: "countries", summary: &summary) { progress($0, total) }
        summary.cities = try await load(cities, into: TravelLogSchema.cities, file: "cities", summary: &summary) { progress(countries.count + $0, total) }
        return summary
    }

    static func requireColumns(_ columns: [String], in header: [String], file: String) throws(CaravanError) {
        let missing = columns.filter { !header.contains($0) }
        guard missing.isEmpty else {
            throw CaravanError(.malformedBody, "the \(file) file lacks the column(s) \(missing.joined(separator: ", "))")
        }
    }

    private func load(_ mapped: [Mapped], into table: TableSchema, file: String, summary: inout Summary,
                      progress: (Int) -> Void) async throws -> Counts {
        var counts = Counts()
        counts.total = mapped.count
        var start = 0
        while start < mapped.count {
            let slice = mapped[start..<min(start + batchSize, mapped.count)]
            var rows: [RowValues] = []
            var sources: [Mapped] = []
            for item in slice {
                switch item.result {
                case .success(let row): rows.append(row); sources.append(item)
                case .failure(let error):
                    summary.rejections.append(Rejection(file: file, line: item.line, id: item.id, field: error.field, reason: error.reason))
                }
            }
            let batch = rows
            let outcomes = batch.isEmpty ? [] : try await pipeline.run(access) { transaction in
                try await transaction.upsertEach(batch, into: table, conflictColumns: ["id"])
            }
            for (item, outcome) in zip(sources, outcomes) {
                switch outcome {
                case .inserted: counts.inserted += 1
                case .updated: counts.updated += 1
                case .rejected(let error):
                    summary.rejections.append(Rejection(file: file, line: item.line, id: item.id, field: "(row)", reason: error.message))
                }
            }
            start += slice.count
            progress(start)
        }
        return counts
    }
}
