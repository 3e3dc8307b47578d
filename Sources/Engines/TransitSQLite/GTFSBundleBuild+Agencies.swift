import CaravanCore
import GRDB
import Transit

/// `agency.txt`: the agencies and the feed's timezone.
extension BundleBuild {
    mutating func loadAgencies(_ db: Database) throws {
        guard var table = try open("agency.txt", required: ["agency_name", "agency_timezone"]) else { return }
        let insert = try RawInsert(db, "INSERT INTO agency(aid, agency_id, name, url, timezone, lang, phone) VALUES (?,?,?,?,?,?,?)")
        let id = table.column("agency_id"), name = table.column("agency_name"), url = table.column("agency_url")
        let zone = table.column("agency_timezone"), lang = table.column("agency_lang"), phone = table.column("agency_phone")
        while let record = try table.next() {
            let agencyID = record[id]
            guard !record[name].isEmpty else { skip(table, record, "agency_name is empty"); continue }
            guard !record[zone].isEmpty else { skip(table, record, "agency_timezone is empty"); continue }
            guard agencyIDs[agencyID] == nil else { skip(table, record, "duplicate agency_id \"\(agencyID)\""); continue }
            let aid = agencyIDs.count + 1
            agencyIDs[agencyID] = aid
            if summary.timezone.isEmpty {
                summary.timezone = record[zone]
            } else if summary.timezone != record[zone] {
                summary.notes.append("agency.txt:\(record.line): agency_timezone \(record[zone]) differs from \(summary.timezone); times are read in \(summary.timezone)")
            }
            try insert.run(.int(aid), .text(agencyID.isEmpty ? nil : agencyID), .text(record[name]), .text(record[url].nilIfEmpty),
                           .text(record[zone]), .text(record[lang].nilIfEmpty), .text(record[phone].nilIfEmpty))
        }
        summary.agencies = agencyIDs.count
        guard summary.agencies > 0 else { throw CaravanError(.invalidFeed, "agency.txt: no valid agency (an agency_timezone is required)") }
    }
}
