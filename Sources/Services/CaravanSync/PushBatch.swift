package import CaravanCore

/// One client mutation of a push (wire-protocol §6.2).
package struct ClientMutation: Sendable {
    package enum Operation: String, Sendable { case insert, upsert, update, delete }

    /// The client's idempotency key: a UUID, lowercase.
    package let id: String
    package let table: String
    package let operation: Operation
    package let key: JSONValue?
    package let record: JSONValue?
}

/// A push request body, checked for shape: anything else is `malformedBody` (PGRST102) for the whole batch.
package struct PushBatch: Sendable {
    package let clientID: String?
    package let mutations: [ClientMutation]

    /// Most mutations in one push, and most bytes in its body.
    package static let maximumMutations = 1_000
    package static let maximumBytes = 5 * 1024 * 1024

    package init(bytes: [UInt8]) throws(CaravanError) {
        guard bytes.count <= Self.maximumBytes else {
            throw CaravanError(.payloadTooLarge, "The push body is larger than \(Self.maximumBytes) bytes", hint: "Send fewer mutations per request")
        }
        guard case .object(let pairs) = try JSONParser.parse(bytes: bytes) else { throw Self.shape("the body must be a JSON object") }
        let fields = Dictionary(pairs.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        switch fields["client_id"] {
        case nil, .null?: clientID = nil
        case .string(let id)?: clientID = id
        default: throw Self.shape("client_id must be a string")
        }
        guard case .array(let items)? = fields["mutations"] else { throw Self.shape("mutations must be an array") }
        guard items.count <= Self.maximumMutations else {
            throw CaravanError(.payloadTooLarge, "A push holds at most \(Self.maximumMutations) mutations, got \(items.count)",
                               hint: "Send fewer mutations per request")
        }
        var mutations: [ClientMutation] = []
        var seen = Set<String>()
        for (index, item) in items.enumerated() {
            let mutation = try Self.mutation(item, index: index)
            guard seen.insert(mutation.id).inserted else { throw Self.shape("mutations[\(index)].id repeats an earlier mutation's id") }
            mutations.append(mutation)
        }
        self.mutations = mutations
    }

    private static func mutation(_ item: JSONValue, index: Int) throws(CaravanError) -> ClientMutation {
        guard case .object(let pairs) = item else { throw shape("mutations[\(index)] must be an object") }
        let fields = Dictionary(pairs.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        guard case .string(let rawID)? = fields["id"], let id = ColumnType.canonicalUUID(rawID) else {
            throw shape("mutations[\(index)].id must be a UUID")
        }
        guard case .string(let table)? = fields["table"], !table.isEmpty else { throw shape("mutations[\(index)].table must be a string") }
        guard case .string(let op)? = fields["op"], let operation = ClientMutation.Operation(rawValue: op) else {
            throw shape("mutations[\(index)].op must be insert, upsert, update or delete")
        }
        for name in ["key", "record"] {
            switch fields[name] {
            case nil, .null?, .object?: continue
            default: throw shape("mutations[\(index)].\(name) must be an object")
            }
        }
        let key = fields["key"].flatMap { $0 == .null ? nil : $0 }
        let record = fields["record"].flatMap { $0 == .null ? nil : $0 }
        return ClientMutation(id: id, table: table, operation: operation, key: key, record: record)
    }

    private static func shape(_ details: String) -> CaravanError {
        CaravanError(.malformedBody, "Empty or invalid json", details: details)
    }
}
