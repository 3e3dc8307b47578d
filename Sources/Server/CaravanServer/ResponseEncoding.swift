import CaravanCore

/// The media types a read can produce (wire-protocol §2.7).
struct ReadMediaType: Equatable {
    enum Kind: Equatable {
        case jsonArray
        case singleObject
        case csv
    }

    let kind: Kind
    /// `;nulls=stripped` on PostgREST's vendor types: members whose value is null are left out of every object, at
    /// any depth (PostgreSQL's `json_strip_nulls`); nulls inside arrays stay.
    var stripsNulls = false

    static let jsonArray = ReadMediaType(kind: .jsonArray)
    static let singleObject = ReadMediaType(kind: .singleObject)
    static let csv = ReadMediaType(kind: .csv)

    var isSingleObject: Bool { kind == .singleObject }

    var contentType: String {
        switch (kind, stripsNulls) {
        case (.jsonArray, false): "application/json; charset=utf-8"
        case (.jsonArray, true): "application/vnd.pgrst.array+json;nulls=stripped; charset=utf-8"
        case (.singleObject, false): "application/vnd.pgrst.object+json; charset=utf-8"
        case (.singleObject, true): "application/vnd.pgrst.object+json;nulls=stripped; charset=utf-8"
        case (.csv, _): "text/csv; charset=utf-8"
        }
    }

    /// Chooses from an `Accept` header: the first listed type Caravan can produce; PGRST107 if none.
    static func negotiate(_ accept: String?) throws(CaravanError) -> ReadMediaType {
        guard let accept, !accept.trimmingSpaces.isEmpty else { return .jsonArray }
        for item in accept.split(separator: ",") {
            let parts = item.split(separator: ";").map { String($0).trimmingSpaces.lowercased() }
            let type = parts.first ?? ""
            let stripped = parts.dropFirst().contains("nulls=stripped")
            switch type {
            case "application/json", "*/*", "application/*":
                return .jsonArray
            case "application/vnd.pgrst.array+json", "application/vnd.pgrst.array":
                return ReadMediaType(kind: .jsonArray, stripsNulls: stripped)
            case "application/vnd.pgrst.object+json", "application/vnd.pgrst.object":
                return ReadMediaType(kind: .singleObject, stripsNulls: stripped)
            case "text/csv", "text/*":
                return .csv
            default:
                continue
            }
        }
        throw CaravanError(.notAcceptable, "None of these media types are available: \(accept.prefix(200))")
    }

    /// `body` (JSON) with null object members left out at every depth when this type strips them; else as it is.
    func finish(_ body: [UInt8]) -> [UInt8] {
        guard stripsNulls, kind != .csv, let value = try? JSONParser.parse(bytes: body) else { return body }
        return Array(Self.strippingNulls(value).jsonText.utf8)
    }

    static func strippingNulls(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members): .object(members.compactMap { key, member in member == .null ? nil : (key, strippingNulls(member)) })
        case .array(let items): .array(items.map(strippingNulls))
        default: value
        }
    }
}

/// Serializes read results without Foundation's JSONEncoder: keys are encoded once per response.
enum ResultEncoder {
    static func jsonArray(_ result: ReadResult) -> [UInt8] {
        var writer = JSONWriter(reservingCapacity: 64 + result.rows.count * 256)
        let layout = ObjectLayout(result.outputs)
        writer.bytes.append(UInt8(ascii: "["))
        for (r, row) in result.rows.enumerated() {
            if r > 0 { writer.bytes.append(UInt8(ascii: ",")) }
            layout.write(row, into: &writer)
        }
        writer.bytes.append(UInt8(ascii: "]"))
        return writer.bytes
    }

    static func object(_ row: [Value], outputs: [OutputColumn]) -> [UInt8] {
        var writer = JSONWriter()
        ObjectLayout(outputs).write(row, into: &writer)
        return writer.bytes
    }

    /// What every object of one result shares, worked out once per response: the encoded keys (`"name":`, with
    /// the comma before all but the first) side by side in one buffer, and each column's cast. Writing a row then
    /// copies bytes and values only (no per-cell copies of the output descriptions or of a key array).
    private struct ObjectLayout {
        let keys: [UInt8]
        /// Where each column's key ends in `keys`.
        let keyEnds: [Int]
        let casts: [SelectCast?]

        init(_ outputs: [OutputColumn]) {
            var writer = JSONWriter()
            var ends: [Int] = []
            ends.reserveCapacity(outputs.count)
            for (index, output) in outputs.enumerated() {
                if index > 0 { writer.bytes.append(UInt8(ascii: ",")) }
                writer.writeString(output.name)
                writer.bytes.append(UInt8(ascii: ":"))
                ends.append(writer.bytes.count)
            }
            keys = writer.bytes
            keyEnds = ends
            casts = outputs.map(\.cast)
        }

        func write(_ row: [Value], into writer: inout JSONWriter) {
            writer.bytes.append(UInt8(ascii: "{"))
            keys.withUnsafeBufferPointer { keys in
                var start = 0
                for i in row.indices {
                    let end = keyEnds[i]
                    writer.bytes.append(contentsOf: UnsafeBufferPointer(rebasing: keys[start..<end]))
                    start = end
                    if let cast = casts[i] {
                        writer.write(row[i].casting(to: cast))
                    } else {
                        writer.write(row[i])
                    }
                }
            }
            writer.bytes.append(UInt8(ascii: "}"))
        }
    }
}
