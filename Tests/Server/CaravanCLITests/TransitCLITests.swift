import CaravanCore
import Foundation
import Testing

private let cliFeed: [String: String] = [
    "agency.txt": "agency_name,agency_url,agency_timezone\nTest,http://x,Europe/Lisbon\n",
    "stops.txt": "stop_id,stop_name,stop_lat,stop_lon\nS1,Praça da Sé,38.7,-9.1\nS2,Orchard Road,38.71,-9.11\n",
    "routes.txt": "route_id,route_short_name,route_type\nR1,15E,0\n",
    "calendar.txt": "service_id,monday,tuesday,wednesday,thursday,friday,saturday,sunday,start_date,end_date\nWK,1,1,1,1,1,0,0,20240101,20241231\n",
    "trips.txt": "route_id,service_id,trip_id,trip_headsign\nR1,WK,LATE,Orchard\nR1,WK,EARLY,Orchard\n",
    "stop_times.txt": """
        trip_id,arrival_time,departure_time,stop_id,stop_sequence
        LATE,24:05:00,24:05:00,S1,1
        LATE,24:20:00,24:20:00,S2,2
        EARLY,08:00:00,08:00:00,S1,1
        EARLY,08:15:00,08:15:00,S2,2
        GHOST,08:00:00,08:00:00,S1,1

        """,
]

@Suite("caravan import gtfs and caravan transit", .serialized)
struct TransitCLITests {
    @Test func importSearchAndDepartures() async throws {
        let caravan = try CaravanBinary()
        let directory = temporaryDirectory()
        for (name, text) in cliFeed { try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/" + name)) }
        let bundle = directory + "/transit.sqlite"

        let (status, out, err) = try await caravan.run(["import", "gtfs", directory, "--out", bundle])
        #expect(status == 0, "\(err)")
        #expect(out.contains("skipped stop_times.txt:6: unknown trip_id \"GHOST\" (not in trips.txt)"))
        #expect(out.contains("stops 2, routes 1"))
        #expect(out.contains("stop_times 4"))
        #expect(!err.contains("["))  // no progress bar when stderr is not a terminal

        let (jsonStatus, jsonOut, _) = try await caravan.run(["import", "gtfs", directory, "--out", bundle, "--json"])
        #expect(jsonStatus == 0)
        let summary = try JSONParser.parse(jsonOut)
        #expect(summary["stop_times"] == .integer(4))
        #expect(summary["skipped"] == .integer(1))

        let (searchStatus, search, _) = try await caravan.run(["transit", "search", bundle, "praca", "--json"])
        #expect(searchStatus == 0)
        guard case .array(let stops) = try JSONParser.parse(search) else { Issue.record("not an array: \(search)"); return }
        #expect(stops.count == 1)
        #expect(stops.first?["stop_id"] == .string("S1"))
        #expect(stops.first?["stop_name"] == .string("Praça da Sé"))
        let (_, hostile, _) = try await caravan.run(["transit", "search", bundle, "\"OR* NEAR(", "--json"])
        #expect(hostile == "[]\n")

        // Tuesday 00:00: Monday's LATE trip leaves at 24:05:00 (00:05 today), then Tuesday's EARLY trip, then Tuesday's
        // own LATE trip (00:05 on Wednesday, still Tuesday's service). S2 is the last stop of both trips.
        let (departuresStatus, departures, _) = try await caravan.run(["transit", "departures", bundle, "--stop", "S1", "--at", "2024-06-11T00:00", "--json"])
        #expect(departuresStatus == 0)
        guard case .array(let items) = try JSONParser.parse(departures) else { Issue.record("not an array: \(departures)"); return }
        #expect(items.map { $0["trip_id"] } == [.string("LATE"), .string("EARLY"), .string("LATE")])
        #expect(items.map { $0["departure_time"] } == [.string("24:05:00"), .string("08:00:00"), .string("24:05:00")])
        #expect(items.map { $0["departs_at"] } == [.string("2024-06-11T00:05:00"), .string("2024-06-11T08:00:00"), .string("2024-06-12T00:05:00")])
        #expect(items.allSatisfy { $0["route_short_name"] == .string("15E") && $0["headsign"] == .string("Orchard") })
        let (_, lastStop, _) = try await caravan.run(["transit", "departures", bundle, "--stop", "S2", "--at", "2024-06-11T00:00", "--json"])
        #expect(lastStop == "[]\n")

        let (badStatus, _, badErr) = try await caravan.run(["transit", "departures", bundle, "--stop", "S9", "--at", "2024-06-11T00:00"])
        #expect(badStatus != 0)
        #expect(badErr.contains("no stop with stop_id \"S9\""))
        let (badTime, _, badTimeErr) = try await caravan.run(["transit", "departures", bundle, "--stop", "S1", "--at", "tomorrow"])
        #expect(badTime != 0)
        #expect(badTimeErr.contains("invalid local date and time"))
    }

    @Test func aBrokenFeedFailsNamingTheFile() async throws {
        let caravan = try CaravanBinary()
        let directory = temporaryDirectory()
        for (name, text) in cliFeed where name != "stop_times.txt" { try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/" + name)) }
        let (status, _, err) = try await caravan.run(["import", "gtfs", directory, "--out", directory + "/t.sqlite"])
        #expect(status != 0)
        #expect(err.contains("the feed has no stop_times.txt"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/t.sqlite"))
    }

    @Test func serveAnswersTheTransitRPCsOverHTTP() async throws {
        let caravan = try CaravanBinary()
        let directory = temporaryDirectory()
        for (name, text) in cliFeed { try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/" + name)) }
        let bundle = directory + "/transit.sqlite"
        #expect(try await caravan.run(["import", "gtfs", directory, "--out", bundle]).0 == 0)
        let data = directory + "/data"
        #expect(try await caravan.run(["migrate", "--data-dir", data]).0 == 0)
        let (_, keysJSON, _) = try await caravan.run(["keys", "--data-dir", data, "--json"])
        guard case .string(let anon)? = try JSONParser.parse(keysJSON)["anon_key"] else { Issue.record("no anon key"); return }

        let port = try freePort()
        let server = Process()
        server.executableURL = caravan.url
        server.arguments = ["serve", "--data-dir", data, "--port", String(port), "--bundle", "transit=" + bundle, "--log-level", "warning"]
        server.standardOutput = FileHandle.nullDevice
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { server.terminate() }
        let base = "http://127.0.0.1:\(port)"
        var healthy = false
        for _ in 0..<100 where !healthy {
            if let (status, _, _) = try? await httpGet(base + "/health"), status == 200 { healthy = true } else { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(healthy)

        let (_, cli, _) = try await caravan.run(["transit", "departures", bundle, "--stop", "S1", "--at", "2024-06-11T00:00", "--json"])
        let (status, body, _) = try await httpGet(base + "/rest/v1/rpc/next_departures?stop_id=S1&at=2024-06-11T00:00&select=trip_id,departure_time,departs_at",
                                                  headers: ["apikey": anon])
        #expect(status == 200)
        guard case .array(let fromCLI) = try JSONParser.parse(cli), case .array(let fromHTTP) = try JSONParser.parse(body) else {
            Issue.record("not arrays: \(body)"); return
        }
        #expect(fromHTTP.map { $0["trip_id"] } == fromCLI.map { $0["trip_id"] })
        #expect(fromHTTP.map { $0["departs_at"] } == fromCLI.map { $0["departs_at"] })
        let (_, filtered, _) = try await httpGet(base + "/rest/v1/rpc/next_departures?stop_id=S1&at=2024-06-11T00:00&trip_id=eq.EARLY&select=departure_time",
                                                 headers: ["apikey": anon])
        #expect(filtered == #"[{"departure_time":"08:00:00"}]"#)
        let (_, stops, _) = try await httpGet(base + "/rest/v1/rpc/search_stops?query=orch&select=stop_id,stop_name", headers: ["apikey": anon])
        #expect(stops == #"[{"stop_id":"S2","stop_name":"Orchard Road"}]"#)
        let (_, routes, _) = try await httpGet(base + "/rest/v1/rpc/routes_by_type?route_type=0&select=route_id,route_short_name", headers: ["apikey": anon])
        #expect(routes == #"[{"route_id":"R1","route_short_name":"15E"}]"#)
        let (_, trip, _) = try await httpGet(base + "/rest/v1/rpc/trip_stops?trip_id=LATE&select=stop_id,departure_time", headers: ["apikey": anon])
        #expect(trip == #"[{"stop_id":"S1","departure_time":"24:05:00"},{"stop_id":"S2","departure_time":"24:20:00"}]"#)
        let (missing, missingBody, _) = try await httpGet(base + "/rest/v1/rpc/trip_stops?trip_id=NOPE", headers: ["apikey": anon])
        #expect(missing == 404)
        #expect(try JSONParser.parse(missingBody)["code"] == .string("P0002"))
    }
}
