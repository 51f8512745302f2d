/// A condition's shape and values, taken apart so a store can render SQL once per shape and
/// bind new values each time (rendering showed up in profiles of small indexed fetches).
///
/// Both functions are readers of the one traversal (``ConditionVisitor``) and know no operator:
/// the shape replaces every leaf's values alike, and the values come from
/// `SQLArgumentCollector`, which states the SQL renderer's binding rule beside the renderer.
enum QueryShape {
    /// The condition with every value replaced by a placeholder that renders the same SQL: a
    /// missing value stays missing (it renders `IS NULL`), every other value becomes 0.
    static func shape(_ condition: Condition) -> Condition {
        var shaper = Shaper()
        return condition.accept(&shaper, in: ())
    }

    /// The condition's parameter values, in the order the rendered SQL binds them on `dialect`'s engine.
    static func collectArguments(
        of condition: Condition, dialect: any SQLDialect, into arguments: inout [SQLValue]
    ) {
        arguments += Self.arguments(of: condition, dialect: dialect)
    }

    /// The condition's parameter values, in the order the rendered SQL binds them on `dialect`'s engine.
    static func arguments(of condition: Condition, dialect: any SQLDialect) -> [SQLValue] {
        var collector = SQLArgumentCollector(dialect: dialect)
        condition.accept(&collector, in: ())
        return collector.arguments
    }
}

/// Rebuilds a condition with placeholders for its values.
private struct Shaper: UniformLeafVisitor {
    typealias Output = Condition
    typealias Scope = Void
    typealias Frame = RelationshipPath
    typealias Failure = Never

    func leaf(_ leaf: Condition, in scope: Void) -> Condition {
        leaf.replacingValues { $0 == .null ? .null : .integer(0) }
    }

    func not(_ operand: Condition, in scope: Void) -> Condition { .not(operand) }
    func and(_ operands: [Condition], in scope: Void) -> Condition { .and(operands) }
    func or(_ operands: [Condition], in scope: Void) -> Condition { .or(operands) }
    func enter(_ path: RelationshipPath, in scope: Void) -> (scope: Void, frame: RelationshipPath) { ((), path) }

    func quantified(_ quantifier: Quantifier, _ operand: Condition, frame path: RelationshipPath, in scope: Void)
        -> Condition
    {
        .quantified(path, quantifier, operand)
    }
}

/// A request whose SQL a connection keeps (``DatabaseConnection/renderedSQL``): a select, a
/// lookup by one unique key, or a prepared request (by its key, unique in the process). A closed type rather than `AnyHashable`, whose box cost every lookup a
/// metadata lookup, an allocation and equality through witnesses.
package enum RequestShape: Hashable {
    case select(SelectShape)
    case keyLookup(KeyLookupShape)
    case prepared(Int)
}

/// What the SQL of a select depends on: everything in a request but its values.
package struct SelectShape: Hashable {
    let columns: String
    let entity: String
    let condition: Condition?
    let sortKeys: [SortKey]
    let scope: [String]?
    let limitParameters: Int
    let defaultSort: Bool

    /// Hashes all but the select list, which the entity and the kind of select already tell
    /// apart: hashing its text took as long as the rest of the shape. Equality still compares
    /// it, at no cost when both sides share one string (the entity's `selectList`).
    package func hash(into hasher: inout Hasher) {
        hasher.combine(entity)
        hasher.combine(condition)
        hasher.combine(sortKeys)
        hasher.combine(scope)
        hasher.combine(limitParameters)
        hasher.combine(defaultSort)
    }
}

/// What the SQL of a lookup by one unique key depends on: the entity and the key.
package struct KeyLookupShape: Hashable {
    let entity: String
    let key: String
}
