import CaravanCore
import GRDB
import Transit

/// `calendar.txt` and `calendar_dates.txt`: the services' days.
extension BundleBuild {
    mutating func loadCalendars(_ db: Database) throws {
        var starts: [Int] = [], ends: [Int] = []
        try loadCalendar(db, starts: &starts, ends: &ends)
        try loadCalendarDates(db, starts: &starts, ends: &ends)
        summary.services = serviceIDs.count
        let insertID = try RawInsert(db, "INSERT INTO dict_service(service_id, svc) VALUES (?,?)")
        for (serviceID, svc) in serviceIDs { try insertID.run(.text(serviceID), .int(svc)) }
        if let first = starts.min(), let last = ends.max() {
            try db.execute(sql: "INSERT INTO meta(key, value) VALUES ('service_start_date', ?), ('service_end_date', ?)",
                           arguments: [String(first), String(last)])
        }
    }

    /// `calendar.txt`: a weekday mask and a date range per service.
    private mutating func loadCalendar(_ db: Database, starts: inout [Int], ends: inout [Int]) throws {
        let days = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
        if var table = try open("calendar.txt", required: ["service_id"] + days + ["start_date", "end_date"]) {
            let id = table.column("service_id"), start = table.column("start_date"), end = table.column("end_date")
            let dayColumns = days.map { table.column($0) }
            let insert = try RawInsert(db, "INSERT INTO calendar(svc, days, start_date, end_date) VALUES (?,?,?,?)")
            rows: while let record = try table.next() {
                let serviceID = record[id]
                guard !serviceID.isEmpty else { skip(table, record, "service_id is empty"); continue }
                guard serviceIDs[serviceID] == nil else { skip(table, record, "duplicate service_id \"\(serviceID)\""); continue }
                var mask = 0
                for (bit, column) in dayColumns.enumerated() {
                    switch record[column] {
                    case "1": mask |= 1 << bit
                    case "0": break
                    default: skip(table, record, "\(days[bit]) is \"\(record[column])\", not 0 or 1"); continue rows
                    }
                }
                guard let first = GTFSTime.date(record[start]), let last = GTFSTime.date(record[end]) else {
                    skip(table, record, "start_date/end_date \"\(record[start])\",\"\(record[end])\" is not a YYYYMMDD date"); continue
                }
                guard first <= last else { skip(table, record, "start_date \(first) is after end_date \(last)"); continue }
                let svc = serviceIDs.count + 1
                serviceIDs[serviceID] = svc
                starts.append(first); ends.append(last)
                try insert.run(.int(svc), .int(mask), .int(first), .int(last))
                summary.calendars += 1
            }
        }
    }

    /// `calendar_dates.txt`: services added or removed on single dates (a service may exist only here).
    private mutating func loadCalendarDates(_ db: Database, starts: inout [Int], ends: inout [Int]) throws {
        if var table = try open("calendar_dates.txt", required: ["service_id", "date", "exception_type"]) {
            let id = table.column("service_id"), date = table.column("date"), type = table.column("exception_type")
            let insert = try RawInsert(db, "INSERT INTO calendar_date(date, svc, exception_type) VALUES (?,?,?)")
            var seen: [Int: Int] = [:]  // (date * 2^20 + svc) → line
            while let record = try table.next() {
                let serviceID = record[id]
                guard !serviceID.isEmpty else { skip(table, record, "service_id is empty"); continue }
                guard let day = GTFSTime.date(record[date]) else { skip(table, record, "date \"\(record[date])\" is not a YYYYMMDD date"); continue }
                guard let exception = Int(record[type]), exception == 1 || exception == 2 else {
                    skip(table, record, "exception_type \"\(record[type])\" is not 1 or 2"); continue
                }
                let svc: Int
                if let known = serviceIDs[serviceID] {
                    svc = known
                } else {
                    svc = serviceIDs.count + 1  // a calendar_dates-only service
                    serviceIDs[serviceID] = svc
                }
                let key = day << 20 | svc
                if let first = seen[key] { skip(table, record, "duplicate date \(day) for service_id \"\(serviceID)\" (first on line \(first))"); continue }
                seen[key] = record.line
                starts.append(day); ends.append(day)
                try insert.run(.int(day), .int(svc), .int(exception))
                summary.calendarDates += 1
            }
        }
    }
}
