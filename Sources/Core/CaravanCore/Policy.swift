/// The commands a policy applies to, as in Postgres RLS.
public enum PolicyCommand: String, Sendable, Hashable, CaseIterable {
    case select, insert, update, delete
}

/// A value in a policy expression, resolved per request.
public enum PolicyOperand: Sendable, Hashable {
    /// A column of the row the policy guards.
    case column(String)
    /// A constant.
    case literal(Value)
    /// `auth.uid()`: the caller's user id, NULL for anon and the service role.
    case authUID
    /// `auth.jwt() -> … ->> last`: a claim of the caller's token as text, NULL when absent.
    case claim([String])
    /// The caller's role name (`anon`, `authenticated`, `service_role`).
    case role
}

/// A policy expression (`using` / `with check`): comparisons over columns, literals, `auth.uid()`, claims and the
/// role, `in`, `is null`, `and` / `or` / `not`, and membership through a subquery on another table.
public indirect enum PolicyRule: Sendable, Hashable {
    case always(Bool)
    case and([PolicyRule])
    case or([PolicyRule])
    case not(PolicyRule)
    case compare(PolicyOperand, ComparisonOperator, PolicyOperand)
    case isNull(PolicyOperand)
    case isIn(PolicyOperand, [PolicyOperand])
    /// `EXISTS (SELECT 1 FROM table WHERE where)`: inside `where`, `.column` names the subquery table's columns
    /// and `outer` names the guarded row's columns.
    case exists(table: String, where: [SubqueryCondition])
    /// Storage's owner folders: in a bucket (the text column `bucket`) that an app module declares with
    /// `BucketDeclaration.pathsStartWithOwnerID`, the object path in the text column `path` lies under the caller's
    /// user id (`<user_id>/…`, Supabase's `(storage.foldername(name))[1] = auth.uid()::text`); true in every other
    /// bucket. Anon and the service role have no user id: nothing is under their folder.
    case inOwnerFolder(bucket: String, path: String)

    /// `column = auth.uid()`.
    public static func ownedBy(_ column: String) -> PolicyRule { .compare(.column(column), .eq, .authUID) }
}

/// One equality inside a membership subquery: `inner_column = outer_column` or `inner_column = operand`.
public enum SubqueryCondition: Sendable, Hashable {
    case matchesOuter(inner: String, outer: String)
    case equals(inner: String, PolicyOperand)
}

/// One policy: a name, the commands and roles it applies to, and its `using` / `with check` expressions.
/// Policies are permissive: a row passes when any applicable policy admits it.
public struct TablePolicy: Sendable, Hashable {
    public let name: String
    public let commands: Set<PolicyCommand>
    public let roles: Set<Role>
    /// Which existing rows the command sees (select, update, delete).
    public let using: PolicyRule?
    /// Which new rows the command may write (insert, update); defaults to `using`, as in Postgres.
    public let check: PolicyRule?

    public init(_ name: String, for commands: Set<PolicyCommand>, to roles: Set<Role> = [.anon, .authenticated],
                using: PolicyRule? = nil, check: PolicyRule? = nil) {
        self.name = name
        self.commands = commands
        self.roles = roles
        self.using = using
        self.check = check
    }

    /// `FOR ALL`.
    public static let allCommands: Set<PolicyCommand> = Set(PolicyCommand.allCases)
}

extension PolicyRule {
    /// Substitutes the caller's identity and binds columns to `table`, giving a predicate adapters compile and the
    /// evaluator runs. Unknown columns or tables are programming errors reported as `CaravanError`.
    public func resolve(for identity: Identity, table: TableSchema, catalog: Catalog) throws(CaravanError) -> BoundPredicate {
        switch self {
        case .always(let b): return .constant(b)
        case .and(let items):
            var out: [BoundPredicate] = []
            for item in items { out.append(try item.resolve(for: identity, table: table, catalog: catalog)) }
            return .and(out)
        case .or(let items):
            var out: [BoundPredicate] = []
            for item in items { out.append(try item.resolve(for: identity, table: table, catalog: catalog)) }
            return .or(out)
        case .not(let inner): return .not(try inner.resolve(for: identity, table: table, catalog: catalog))
        case .isNull(let operand):
            switch try Self.resolve(operand, identity: identity, table: table) {
            case .column(let column): return .isNull(column)
            case .value(let value): return .constant(value.isNull)
            }
        case .compare(let lhs, let op, let rhs):
            return try Self.resolveComparison(lhs, op, rhs, identity: identity, table: table)
        case .isIn(let operand, let list):
            return try resolveIn(operand, list, identity: identity, table: table)
        case .exists(let tableName, let conditions):
            return try Self.resolveExists(tableName, conditions, identity: identity, table: table, catalog: catalog)
        case .inOwnerFolder(let bucketName, let pathName):
            let buckets = catalog.modules.flatMap(\.buckets).filter(\.pathsStartWithOwnerID).map { Value.text($0.id) }
            guard !buckets.isEmpty else { return .constant(true) }
            let bucket = try table.requireColumn(bucketName), path = try table.requireColumn(pathName)
            let underOwner = identity.userID.map { BoundPredicate.like(path, pattern: LikePattern.escaped($0 + "/") + "%", caseInsensitive: false) }
            return .or([.not(.inList(bucket, buckets)), underOwner ?? .constant(false)])
        }
    }

    private static func resolveComparison(_ lhs: PolicyOperand, _ op: ComparisonOperator, _ rhs: PolicyOperand, identity: Identity,
                                          table: TableSchema) throws(CaravanError) -> BoundPredicate {
        let left = try resolve(lhs, identity: identity, table: table)
        let right = try resolve(rhs, identity: identity, table: table)
        switch (left, right) {
        case (.column(let column), .value(let value)):
            return .compare(column, op, try typed(value, for: column))
        case (.value(let value), .column(let column)):
            return .compare(column, op.flipped, try typed(value, for: column))
        case (.value(let a), .value(let b)):
            return .constant(BoundPredicate.compareValues(a, op, b) ?? false)
        case (.column(let a), .column(let b)):
            return .compareColumns(a, op, b)
        }
    }

    private func resolveIn(_ operand: PolicyOperand, _ list: [PolicyOperand], identity: Identity, table: TableSchema) throws(CaravanError) -> BoundPredicate {
        guard case .column(let column) = try Self.resolve(operand, identity: identity, table: table) else {
            throw CaravanError(.internalFailure, "policy `in` needs a column on its left", internalDetail: "\(self)")
        }
        var values: [Value] = []
        for item in list {
            guard case .value(let value) = try Self.resolve(item, identity: identity, table: table) else {
                throw CaravanError(.internalFailure, "policy `in` list items must be values", internalDetail: "\(self)")
            }
            values.append(try Self.typed(value, for: column))
        }
        return .inList(column, values)
    }

    private static func resolveExists(_ tableName: String, _ conditions: [SubqueryCondition], identity: Identity, table: TableSchema,
                                      catalog: Catalog) throws(CaravanError) -> BoundPredicate {
        guard let inner = catalog.table(named: tableName) else {
            throw CaravanError(.internalFailure, "policy subquery names an unknown table", internalDetail: tableName)
        }
        var parts: [BoundPredicate] = []
        for condition in conditions {
            switch condition {
            case .matchesOuter(let innerName, let outerName):
                parts.append(.compareColumns(try inner.requireColumn(innerName), .eq, try table.requireColumn(outerName).qualified(by: table.name)))
            case .equals(let innerName, let operand):
                let column = try inner.requireColumn(innerName)
                switch try resolve(operand, identity: identity, table: inner) {
                case .value(let value): parts.append(.compare(column, .eq, try typed(value, for: column)))
                case .column(let other): parts.append(.compareColumns(column, .eq, other))
                }
            }
        }
        return .exists(inner, .and(parts))
    }

    private enum Resolved {
        case column(Column)
        case value(Value)
    }

    private static func resolve(_ operand: PolicyOperand, identity: Identity, table: TableSchema) throws(CaravanError) -> Resolved {
        switch operand {
        case .column(let name): return .column(try table.requireColumn(name))
        case .literal(let value): return .value(value)
        case .authUID: return .value(identity.userID.map(Value.text) ?? .null)
        case .claim(let path): return .value(identity.claimText(path).map(Value.text) ?? .null)
        case .role: return .value(.text(identity.role.rawValue))
        }
    }

    /// Types a resolved value for comparison with `column`; a value that cannot be typed compares as NULL
    /// (a malformed `sub` never matches anything).
    private static func typed(_ value: Value, for column: Column) throws(CaravanError) -> Value {
        guard case .text(let text) = value, column.type != .text else { return value }
        do {
            return try column.type.value(fromText: text)
        } catch {
            return .null
        }
    }
}

extension ComparisonOperator {
    /// The operator with its operands swapped (`a < b` ⇔ `b > a`).
    var flipped: ComparisonOperator {
        switch self {
        case .gt: .lt
        case .gte: .lte
        case .lt: .gt
        case .lte: .gte
        default: self
        }
    }
}

extension Column {
    /// The same column, marked as belonging to the outer row of a subquery.
    func qualified(by table: String) -> Column {
        Column(name, type, nullable: isNullable, default: defaultValue, qualifier: table)
    }
}

/// The policies of every table, and what they allow an identity to do.
public struct PolicySet: Sendable {
    private let byTable: [String: [TablePolicy]]

    public init(_ policies: [String: [TablePolicy]]) { self.byTable = policies }

    public func policies(for table: String) -> [TablePolicy] { byTable[table] ?? [] }

    /// The predicate rows must satisfy for `command` by `identity`: the OR of every applicable policy's `using`
    /// (or `check` when `forCheck`). The service role bypasses policies; no applicable policy means no rows.
    public func rule(_ command: PolicyCommand, on table: TableSchema, for identity: Identity, catalog: Catalog, forCheck: Bool = false) throws(CaravanError) -> BoundPredicate {
        if identity.role == .serviceRole { return .constant(true) }
        var admitted: [BoundPredicate] = []
        for policy in policies(for: table.name) where policy.commands.contains(command) && policy.roles.contains(identity.role) {
            let rule = forCheck ? (policy.check ?? policy.using) : policy.using
            admitted.append(try (rule ?? .always(true)).resolve(for: identity, table: table, catalog: catalog))
        }
        switch admitted.count {
        case 0: return .constant(false)
        case 1: return admitted[0].simplified
        default: return BoundPredicate.or(admitted).simplified
        }
    }
}
