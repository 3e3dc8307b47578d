/// What a synced table's select rule, resolved for one caller, reads of other tables: one entry per `EXISTS` (or
/// `IN`) subquery, with the columns that link the subquery's rows to the guarded row.
///
/// A committed change to such a table is a *visibility change* for the guarded rows it links to: when the change's
/// old or new row satisfies the subquery's own conditions (the caller's id, a status), the guarded rows whose linked
/// columns equal that row's values may have moved into or out of the caller's view.
package struct PolicyDependency: Sendable, Hashable {
    /// Whether the subquery's rows make guarded rows visible (`EXISTS` under an even number of `NOT`s), hide them
    /// (`NOT EXISTS`, as blocks do), or both (the same subquery in both positions).
    package enum Polarity: Sendable, Hashable {
        case reveals, hides, both

        func merged(with other: Polarity) -> Polarity { self == other ? self : .both }
    }

    /// `guarded.outer = subquery.inner`: one equality between the guarded row and the subquery's row.
    package struct Link: Sendable, Hashable {
        package let outer: Column
        package let inner: Column
    }

    /// The table the subquery reads.
    package let table: TableSchema
    /// The equalities that tie a subquery row to the guarded rows it concerns. Empty when `narrowed` is false.
    package let links: [Link]
    /// The subquery's conditions on its own row alone (the caller's id, a role, a status).
    package let local: BoundPredicate
    /// False when the subquery relates its rows to the guarded row in another way than column equalities at its top
    /// level (an `OR` over outer columns, a range, a nested subquery): a change then concerns the whole guarded table.
    package let narrowed: Bool
    package let polarity: Polarity

    /// The dependencies of `rule` (a select rule already resolved for its caller), one per distinct subquery.
    package static func of(_ rule: BoundPredicate) -> [PolicyDependency] {
        var found: [PolicyDependency] = []
        collect(rule, hiding: false, nested: false, into: &found)
        var merged: [PolicyDependency] = []
        for dependency in found {
            if let index = merged.firstIndex(where: { $0.sameSubquery(as: dependency) }) {
                merged[index] = merged[index].with(polarity: merged[index].polarity.merged(with: dependency.polarity))
            } else {
                merged.append(dependency)
            }
        }
        return merged
    }

    /// The tables `rule` depends on.
    package static func tables(of rule: BoundPredicate) -> Set<String> {
        Set(of(rule).map(\.table.name))
    }

    private static func collect(_ predicate: BoundPredicate, hiding: Bool, nested: Bool, into found: inout [PolicyDependency]) {
        switch predicate {
        case .and(let items), .or(let items):
            for item in items { collect(item, hiding: hiding, nested: nested, into: &found) }
        case .not(let inner):
            collect(inner, hiding: !hiding, nested: nested, into: &found)
        case .exists(let table, let inner), .existsUnaliased(let table, let inner):
            found.append(subquery(table, conjuncts: inner.conjuncts, extraLinks: [], hiding: hiding, nested: nested))
            // A subquery inside the subquery: its table's changes concern the whole guarded table.
            collect(inner, hiding: hiding, nested: true, into: &found)
        case .inSubquery(let column, let table, let selecting, let inner):
            found.append(subquery(table, conjuncts: inner.conjuncts, extraLinks: [Link(outer: column, inner: selecting)], hiding: hiding, nested: nested))
            collect(inner, hiding: hiding, nested: true, into: &found)
        default:
            return
        }
    }

    private static func subquery(_ table: TableSchema, conjuncts: [BoundPredicate], extraLinks: [Link], hiding: Bool, nested: Bool) -> PolicyDependency {
        var links = extraLinks
        var local: [BoundPredicate] = []
        var narrowed = !nested
        for conjunct in conjuncts {
            if case .compareColumns(let a, .eq, let b) = conjunct, (a.qualifier == nil) != (b.qualifier == nil) {
                links.append(a.qualifier == nil ? Link(outer: b, inner: a) : Link(outer: a, inner: b))
            } else if conjunct.readsOuterRow {
                narrowed = false
            } else {
                local.append(conjunct)
            }
        }
        if links.isEmpty { narrowed = false }
        return PolicyDependency(table: table, links: narrowed ? links : [], local: local.count == 1 ? local[0] : .and(local),
                                narrowed: narrowed, polarity: hiding ? .hides : .reveals)
    }

    private func sameSubquery(as other: PolicyDependency) -> Bool {
        table.name == other.table.name && links == other.links && local == other.local && narrowed == other.narrowed
    }

    private func with(polarity: Polarity) -> PolicyDependency {
        PolicyDependency(table: table, links: links, local: local, narrowed: narrowed, polarity: polarity)
    }

    // MARK: What a change moves

    /// The guarded rows a logged row of this dependency's table may move: those whose linked columns equal its
    /// values (every row when the dependency is not narrowed), and whether they may move out (`hides`) or only in.
    /// Nil when the row cannot satisfy the subquery for any guarded row (its own conditions fail, a link is NULL).
    /// `lookup` reads the logged row's columns (NULL when absent).
    package func slice(of lookup: (String) -> Value, appeared: Bool) -> MoveSlice? {
        // Unknown (a nested subquery, a NULL compared) counts as "may hold": the move is then checked by the read.
        if local.evaluate(lookup) == false { return nil }
        var fixed: [MoveSlice.Fixed] = []
        for link in links {
            let value = lookup(link.inner.name)
            if value.isNull { return nil }
            fixed.append(MoveSlice.Fixed(column: link.outer.name, value: value))
        }
        let movesOut = switch polarity {
        case .reveals: !appeared
        case .hides: appeared
        case .both: true
        }
        return MoveSlice(fixed: fixed, movesOut: movesOut)
    }

    /// The slices a logged change of this dependency's table touches: its old row's (which left the table) and its
    /// new row's (which entered it). An update that leaves the subquery's answer the same for every guarded row (both
    /// versions satisfy it with the same linked values) touches none.
    package func slices(old: ((String) -> Value)?, new: ((String) -> Value)?) -> [MoveSlice] {
        let before = old.flatMap { slice(of: $0, appeared: false) }
        let after = new.flatMap { slice(of: $0, appeared: true) }
        if let before, let after, before.fixed == after.fixed { return [] }
        return [before, after].compactMap { $0 }
    }
}

/// Guarded rows that a visibility change may have moved: those whose `fixed` columns have these values.
package struct MoveSlice: Sendable, Hashable {
    package struct Fixed: Sendable, Hashable {
        package let column: String
        package let value: Value

        package init(column: String, value: Value) {
            self.column = column
            self.value = value
        }
    }

    package let fixed: [Fixed]
    /// Whether rows may have left the view (the client drops the slice's rows before the visible ones are sent).
    package let movesOut: Bool

    package init(fixed: [Fixed], movesOut: Bool) {
        self.fixed = fixed
        self.movesOut = movesOut
    }

    /// The fixed columns' values by name.
    package var values: [String: Value] {
        Dictionary(fixed.map { ($0.column, $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}

extension BoundPredicate {
    /// The top-level conjuncts (`a AND (b AND c)` → `[a, b, c]`).
    public var conjuncts: [BoundPredicate] {
        switch self {
        case .and(let items): items.flatMap(\.conjuncts)
        case .constant(true): []
        default: [self]
        }
    }

    /// Whether the predicate names a column of the outer row (a qualified column) anywhere.
    public var readsOuterRow: Bool {
        switch self {
        case .and(let items), .or(let items): items.contains { $0.readsOuterRow }
        case .not(let inner): inner.readsOuterRow
        case .compareColumns(let left, _, let right): left.qualifier != nil || right.qualifier != nil
        case .compare(let column, _, _), .like(let column, _, _), .regex(let column, _, _), .isNull(let column), .isBool(let column, _),
             .inList(let column, _), .array(let column, _, _), .textSearch(let column, _, _):
            column.qualifier != nil
        case .exists(_, let inner), .existsUnaliased(_, let inner): inner.readsOuterRow
        case .inSubquery(let column, _, _, let inner): column.qualifier != nil || inner.readsOuterRow
        case .constant: false
        }
    }

    /// The predicate's value on a row of which only the `fixed` columns are known: false only when no values of
    /// the other columns and no answers of its subqueries could make it hold.
    public func couldHold(fixing fixed: [String: Value]) -> Bool {
        partialValue(fixed) != false
    }

    /// AND (`deciding` false) or OR (`deciding` true) in three-valued logic.
    static func partialCombine(_ values: [Bool?], deciding: Bool) -> Bool? {
        if values.contains(deciding) { return deciding }
        return values.contains(nil) ? nil : !deciding
    }

    private func partialValue(_ fixed: [String: Value]) -> Bool? {
        switch self {
        case .constant(let b): return b
        case .and(let items): return Self.partialCombine(items.map { $0.partialValue(fixed) }, deciding: false)
        case .or(let items): return Self.partialCombine(items.map { $0.partialValue(fixed) }, deciding: true)
        case .not(let inner): return inner.partialValue(fixed).map { !$0 }
        case .exists, .existsUnaliased, .inSubquery: return nil
        case .compareColumns(let left, _, let right):
            guard left.qualifier == nil, right.qualifier == nil, fixed[left.name] != nil, fixed[right.name] != nil else { return nil }
            return evaluate { fixed[$0] ?? .null }
        default:
            guard columnNames.allSatisfy({ fixed[$0] != nil }) else { return nil }
            return evaluate { fixed[$0] ?? .null }
        }
    }
}
