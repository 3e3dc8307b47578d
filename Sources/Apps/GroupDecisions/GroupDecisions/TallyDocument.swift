package import CaravanCore

/// The JSON of `caravan decisions tally`: `{"candidates":[ids],"ballots":[[ids]…]}` in,
/// `{"winner":id,"rounds":[{"counts":{id:n},"eliminated":id|null}…],"weights":{id:x}}` out (keys sorted by id).
package enum TallyDocument {
    /// Reads the candidates and ballots; every error is 22023 naming the field and what was found.
    package static func parse(_ document: JSONValue) throws(CaravanError) -> (candidates: [String], ballots: [[String]]) {
        guard case .object = document else {
            throw CaravanError(.invalidParameterValue, "the tally input must be a JSON object, not \(document.typeName)")
        }
        let candidates = try strings(document["candidates"], field: "candidates")
        guard case .array(let ballotValues)? = document["ballots"] else {
            throw CaravanError(.invalidParameterValue, "ballots must be an array of arrays of ids",
                               details: "field ballots, found \(document["ballots"]?.typeName ?? "nothing")")
        }
        var ballots: [[String]] = []
        for (index, value) in ballotValues.enumerated() {
            ballots.append(try strings(value, field: "ballots[\(index)]"))
        }
        return (candidates, ballots)
    }

    static func strings(_ value: JSONValue?, field: String) throws(CaravanError) -> [String] {
        guard case .array(let items)? = value else {
            throw CaravanError(.invalidParameterValue, "\(field) must be an array of ids",
                               details: "field \(field), found \(value?.typeName ?? "nothing")")
        }
        var result: [String] = []
        for (index, item) in items.enumerated() {
            guard case .string(let id) = item else {
                throw CaravanError(.invalidParameterValue, "\(field)[\(index)] must be a string id",
                                   details: "field \(field)[\(index)], found \(item.typeName)")
            }
            result.append(id)
        }
        return result
    }

    /// The tally as the command's output document.
    package static func render(_ tally: Tally) -> JSONValue {
        let rounds = tally.rounds.map { round in
            JSONValue.object([
                ("counts", .object(round.counts.keys.sorted().map { ($0, JSONValue.integer(Int64(round.counts[$0] ?? 0))) })),
                ("eliminated", round.eliminated.map(JSONValue.string) ?? .null),
            ])
        }
        return .object([
            ("winner", .string(tally.winner)),
            ("rounds", .array(rounds)),
            ("weights", weightsObject(tally.weights)),
        ])
    }

    /// Weights as a JSON object with sorted keys.
    package static func weightsObject(_ weights: [String: Double]) -> JSONValue {
        .object(weights.keys.sorted().map { ($0, JSONValue.double(weights[$0] ?? 0)) })
    }

    /// Parses, tallies and renders: the whole command, so the CLI and tests run the same code as the RPC.
    package static func run(input: [UInt8]) throws(CaravanError) -> String {
        let (candidates, ballots) = try parse(try JSONParser.parse(bytes: input))
        return render(try InstantRunoff.tally(candidates: candidates, ballots: ballots)).jsonText
    }
}
