/// Renders a ``Condition`` as an SQL expression with bound parameters: no value is ever
/// spliced into SQL text, only quoted identifiers.
///
/// - `==` renders as `=`, and `!=` as the dialect's NULL-safe ``SQLDialect/differs(_:_:)``, so a missing value is unequal to every value;
///   `NOT` renders as `NOT COALESCE(…, false)` (the dialect's false), so a test on a missing value (NULL in SQL) inverts
///   to true, as it does in `NSPredicate`.
/// - Decimal columns (stored as exact text) compare numerically, cast to a double by the dialect.
/// - String tests are the dialect's (``SQLDialect/stringTest(_:options:value:needle:)``), which
///   compare Unicode as Foundation does.
/// - A to-one hop becomes `column IN (SELECT id FROM destination WHERE …)`; a to-many
///   quantifier becomes a correlated `EXISTS` on the inverse to-one's column or through the join
///   table. Through a hop, a missing relationship makes the test false.
///
/// The renderer is a ``ConditionVisitor``: it decides what to say for each node, and
/// ``ConditionSQL`` says it, so every piece of SQL text a condition becomes is written there.
struct SQLPredicateRenderer {
    private let layout: SchemaLayout
    /// How the engine spells what differs between engines (see ``ConditionSQL``).
    let dialect: any SQLDialect
    private(set) var arguments: [SQLValue] = []
    private var aliasCount = 0

    init(layout: SchemaLayout, dialect: any SQLDialect) {
        self.layout = layout
        self.dialect = dialect
    }

    /// A fresh table alias (`t1`, `t2`, …), so nested subqueries can refer to their outer rows.
    mutating func makeAlias() -> String {
        aliasCount += 1
        return "t\(aliasCount)"
    }

    /// Appends an argument for a `?` the caller wrote itself.
    mutating func bindLiteral(_ value: SQLValue) {
        arguments.append(value)
    }

    /// Renders `condition` over rows of `entity` named by `alias`.
    mutating func render(_ condition: Condition, entity: EntityLayout, alias: String) throws -> String {
        try condition.accept(&self, in: SQLScope(entity: entity, alias: alias))
    }

    /// `ORDER BY` terms for sort keys: columns of the entity, its ID, or fields reached through
    /// to-one relationships.
    func orderBy(_ keys: [SortKey], entity: EntityLayout, alias: String) throws -> String {
        try keys.map { key in
            dialect.sortTerm(
                try value(at: key.path, entity: entity, alias: alias), ascending: key.ascending,
                mayBeNull: try mayBeNull(key.path, entity: entity))
        }
        .joined(separator: ", ")
    }

    /// Whether a sort value can be NULL: through a hop (an empty relationship), an optional
    /// column, or any column of a table that entities share (other entities' rows leave it empty).
    private func mayBeNull(_ path: ColumnPath, entity: EntityLayout) throws -> Bool {
        guard path.hops.isEmpty else { return true }
        guard path.column != "id", path != ColumnPath.rowNumber else { return false }
        return try column(path.column, of: entity).isOptional || entity.hasDiscriminator
    }

    /// The value at `path` for the row `alias` of `entity`, as a sort key orders by it and a
    /// results controller groups sections by it. Through a to-one hop it is a scalar subquery on
    /// the destination, NULL (first when ascending, as SQLite sorts NULL) when the relationship is empty.
    /// With `numeric` false, a decimal is its stored text (what an aggregate reads to stay exact).
    func value(
        at path: ColumnPath, entity: EntityLayout, alias: String, depth: Int = 0, numeric: Bool = true
    ) throws -> String {
        guard let hop = path.hops.first else {
            guard path.column != "id" else { return ConditionSQL.column("id", of: alias) }
            // Results controllers break ties by SQLite's row number: unique like the ID, and the last
            // column of every index, so an index on the sort keys still orders the rows without a sort.
            guard path != ColumnPath.rowNumber else { return try ConditionSQL.rowNumber(of: alias, in: dialect) }
            let column = try self.column(path.column, of: entity)
            let value = ConditionSQL.numeric(
                ConditionSQL.column(column.name, of: alias), numeric && column.isDecimal, in: dialect)
            // Sorted and grouped by code point on every engine, whatever the database's collation.
            return column.storage == .text ? dialect.byCodePoint(value) : value
        }
        let (relationship, destination) = try layout.destination(of: hop, from: entity)
        guard relationship.cardinality == .toOne else {
            throw StoreError.unsupportedQuery("sorting through the to-many relationship '\(hop)'")
        }
        let rest = ColumnPath(hops: Array(path.hops.dropFirst()), column: path.column)
        let inner = "s\(depth + 1)"
        let value = try value(at: rest, entity: destination, alias: inner, depth: depth + 1, numeric: numeric)
        return ConditionSQL.valueThroughHop(
            value, table: destination.table, alias: inner, outer: alias, column: entity.columnName(hop))
    }

    // MARK: - Columns and relationships

    /// Renders a test on a column, following to-one hops through `IN (SELECT …)` subqueries:
    /// `test` gets the renderer, the column's SQL and whether it holds a decimal.
    mutating func atColumn(
        _ path: ColumnPath,
        in scope: SQLScope,
        test: (inout SQLPredicateRenderer, String, Bool) throws -> String
    ) throws -> String {
        try atColumn(path, in: scope) { renderer, column, isDecimal, _ in try test(&renderer, column, isDecimal) }
    }

    /// ``atColumn(_:in:test:)`` for a test that orders values (`<`, `=`, `IN`, `BETWEEN`): `test`
    /// also learns whether the column holds text, which such a test compares by code point
    /// (``ConditionSQL/compared(_:isDecimal:isText:in:)``).
    mutating func atColumn(
        _ path: ColumnPath,
        in scope: SQLScope,
        test: (inout SQLPredicateRenderer, String, Bool, Bool) throws -> String
    ) throws -> String {
        let hops = try follow(path.hops, from: scope)
        let column = try path.column == "id" ? nil : self.column(path.column, of: hops.scope.entity)
        let tested = ConditionSQL.column(column?.name ?? path.column, of: hops.scope.alias)
        return hops.wrap(try test(&self, tested, column?.isDecimal ?? false, column?.storage == .text))
    }

    /// Follows to-one `hops` from `scope`, naming each destination with a fresh alias.
    private mutating func follow(_ hops: [String], from scope: SQLScope) throws -> HopChain {
        var chain = HopChain(scope: scope, prefixes: [])
        for hop in hops {
            let current = chain.scope
            let (relationship, destination) = try layout.destination(of: hop, from: current.entity)
            guard relationship.cardinality == .toOne else {
                throw StoreError.unsupportedQuery("'\(hop)' is to-many: use any, all, none or count")
            }
            let inner = makeAlias()
            chain.prefixes.append(
                ConditionSQL.inSubqueryPrefix(
                    current.alias, column: current.entity.columnName(hop), table: destination.table, alias: inner))
            chain.scope = SQLScope(entity: destination, alias: inner)
        }
        return chain
    }

    /// Reaches the to-many relationship at `path`: the to-one hops before it, then the correlated
    /// `FROM … WHERE …` of its destinations (through the inverse column or the join table).
    private mutating func reach(_ path: RelationshipPath, from scope: SQLScope) throws -> SQLRelationshipFrame {
        let hops = try follow(path.hops, from: scope)
        let owner = hops.scope
        let (relationship, destination) = try layout.destination(of: path.relationship, from: owner.entity)
        guard relationship.cardinality == .toMany else {
            throw StoreError.unsupportedQuery("'\(path.relationship)' is to-one: compare its fields instead")
        }
        let inner = makeAlias()
        var from: String
        switch try layout.storage(of: relationship, from: owner.entity) {
        case .inverseColumn(let inverse, _):
            from = ConditionSQL.destinationsThroughInverse(
                table: destination.table, alias: inner, inverse: inverse, owner: owner.alias)
        case .joinTable(let table, let source, let target, _):
            let join = makeAlias()
            from = ConditionSQL.destinationsThroughJoin(
                table: table, joinAlias: join, source: source, target: target,
                destination: destination.table, alias: inner, owner: owner.alias)
        }
        if let discriminator = destination.discriminatorSQL(alias: inner) {
            from = ConditionSQL.and(from, discriminator)
        }
        return SQLRelationshipFrame(hops: hops, from: from, destination: SQLScope(entity: destination, alias: inner))
    }

    private func column(_ name: String, of entity: EntityLayout) throws -> ColumnLayout {
        guard let column = entity.column(forKey: name) else {
            throw StoreError.unknownProperty(entity: entity.name, property: name)
        }
        return column
    }

    /// Binds `value` and returns its placeholder.
    mutating func parameter(_ value: SQLValue, isDecimal: Bool) -> String {
        arguments.append(value)
        return ConditionSQL.placeholder(isDecimal: isDecimal, in: dialect)
    }
}

/// Where a condition is rendered: the entity whose rows it tests, and their alias in the query.
struct SQLScope {
    /// The entity whose rows the condition tests.
    let entity: EntityLayout
    /// The alias those rows have in the query (`t0` for the request's own entity).
    let alias: String
}

/// The to-one hops a test follows: the scope reached and the `IN (SELECT …` prefix of each hop.
private struct HopChain {
    var scope: SQLScope
    var prefixes: [String]

    /// `test`, nested inside every hop's subquery, innermost last.
    func wrap(_ test: String) -> String {
        prefixes.reversed().reduce(test) { nested, prefix in ConditionSQL.closeSubquery(prefix, nested) }
    }
}

/// What the renderer keeps between entering a to-many relationship and leaving its quantifier.
struct SQLRelationshipFrame {
    fileprivate let hops: HopChain
    /// `FROM <destinations> WHERE <correlated with the owner>`.
    fileprivate let from: String
    /// The destinations' entity and alias, where the quantifier's condition is rendered.
    fileprivate let destination: SQLScope
}

// MARK: - ConditionVisitor

extension SQLPredicateRenderer: ConditionVisitor {
    typealias Output = String
    typealias Scope = SQLScope
    typealias Frame = SQLRelationshipFrame
    typealias Failure = any Error

    mutating func constant(_ value: Bool, in scope: SQLScope) -> String {
        ConditionSQL.constant(value, in: dialect)
    }

    mutating func comparison(
        _ path: ColumnPath, _ comparison: ComparisonOperator, _ value: SQLValue, in scope: SQLScope
    ) throws -> String {
        try atColumn(path, in: scope) { renderer, column, isDecimal, isText in
            switch (comparison, value) {
            case (.equal, .null): return ConditionSQL.isNull(column, negated: false)
            case (.notEqual, .null): return ConditionSQL.isNull(column, negated: true)
            default:
                let parameter = renderer.parameter(value, isDecimal: isDecimal)
                return ConditionSQL.compare(
                    ConditionSQL.compared(column, isDecimal: isDecimal, isText: isText, in: renderer.dialect),
                    comparison, parameter, in: renderer.dialect)
            }
        }
    }

    mutating func inList(_ path: ColumnPath, _ values: [SQLValue], in scope: SQLScope) throws -> String {
        let hops = try follow(path.hops, from: scope)
        let layout = try path.column == "id" ? nil : column(path.column, of: hops.scope.entity)
        let storage = layout?.storage ?? .uuid
        return hops.wrap(
            try atColumn(ColumnPath(column: path.column), in: hops.scope) { renderer, column, isDecimal, isText in
                // `IN (NULL)` never matches; a nil in the list means "or missing", as NSPredicate reads it.
                let present = values.filter { $0 != .null }
                let compared = ConditionSQL.compared(
                    column, isDecimal: isDecimal, isText: isText, in: renderer.dialect)
                let test: String
                if renderer.dialect.bindsListsAsArrays, !present.isEmpty {
                    // One parameter for the whole list: `= ANY` is `IN`'s test, NULL for a missing value alike.
                    renderer.arguments.append(SQLValueList.argument(present))
                    test = ConditionSQL.anyOf(compared, renderer.dialect.arrayParameter(of: storage))
                } else {
                    let placeholders = present.map { renderer.parameter($0, isDecimal: isDecimal) }
                    test = ConditionSQL.inList(compared, placeholders, in: renderer.dialect)
                }
                guard present.count < values.count else { return test }
                return present.isEmpty
                    ? ConditionSQL.isNull(column, negated: false) : ConditionSQL.orNull(test, column: column)
            })
    }

    mutating func string(
        _ path: ColumnPath, _ operation: StringOperation, _ needle: String, _ options: StringComparisonOptions,
        in scope: SQLScope
    ) throws -> String {
        try atColumn(path, in: scope) { renderer, column, _ in
            let needle = renderer.parameter(.text(needle), isDecimal: false)
            return try renderer.dialect.stringTest(operation, options: options, value: column, needle: needle)
        }
    }

    mutating func search(_ path: ColumnPath, _ query: SearchQuery, in scope: SQLScope) throws -> String {
        let hops = try follow(path.hops, from: scope)
        let entity = hops.scope.entity
        let column = try column(path.column, of: entity)
        guard
            SchemaSQL.searchIndexes(for: layout).contains(where: {
                $0.table == entity.table && $0.columns.contains(column.name)
            })
        else {
            throw StoreError.unsupportedQuery(
                "'\(path.keyPath)' has no full-text index: mark it @searchable in the schema to search it")
        }
        let parameter = parameter(.text(dialect.searchQuery(query)), isDecimal: false)
        return hops.wrap(
            try dialect.searchTest(
                row: ConditionSQL.column("id", of: hops.scope.alias),
                index: SchemaSQL.searchIndexName(of: entity.table),
                column: column.name, query: parameter))
    }

    mutating func count(
        _ path: RelationshipPath, _ comparison: ComparisonOperator, _ number: Int, in scope: SQLScope
    ) throws -> String {
        let frame = try reach(path, from: scope)
        let parameter = parameter(.integer(Int64(number)), isDecimal: false)
        return frame.hops.wrap(ConditionSQL.count(frame.from, comparison, parameter))
    }

    mutating func not(_ operand: String, in scope: SQLScope) -> String {
        ConditionSQL.not(operand, in: dialect)
    }

    mutating func and(_ operands: [String], in scope: SQLScope) -> String {
        ConditionSQL.all(operands, in: dialect)
    }

    mutating func or(_ operands: [String], in scope: SQLScope) -> String {
        ConditionSQL.any(operands, in: dialect)
    }

    mutating func enter(
        _ path: RelationshipPath, in scope: SQLScope
    ) throws -> (scope: SQLScope, frame: SQLRelationshipFrame) {
        let frame = try reach(path, from: scope)
        return (frame.destination, frame)
    }

    mutating func quantified(
        _ quantifier: Quantifier, _ operand: String, frame: SQLRelationshipFrame, in scope: SQLScope
    ) -> String {
        frame.hops.wrap(ConditionSQL.quantified(quantifier, frame.from, operand, in: dialect))
    }
}

/// The values a condition binds, in the order ``SQLPredicateRenderer`` places their `?`, without
/// rendering: what a cached statement of the same shape binds (see `QueryShape`). It sits beside
/// the renderer because it states the renderer's binding rule, operator by operator: a leaf binds
/// its values, except the `.null` that `==` and `!=` spell `IS NULL` and the `.null`s of a list. A
/// derived operator binds what the condition it stands for binds, as the renderer renders that
/// condition (``ConditionVisitor``'s defaults).
struct SQLArgumentCollector: ConditionVisitor {
    typealias Output = Void
    typealias Scope = Void
    typealias Frame = Void
    typealias Failure = Never

    /// The values collected so far.
    private(set) var arguments: [SQLValue] = []
    /// The engine's dialect, which says whether a list binds as one argument or one per value.
    private let dialect: any SQLDialect

    init(dialect: any SQLDialect) {
        self.dialect = dialect
    }

    /// Collects the values a leaf binds, in the order the renderer places their markers.
    mutating func collect(_ values: SQLValue...) {
        arguments += values
    }

    mutating func constant(_ value: Bool, in scope: Void) {}

    mutating func comparison(_ path: ColumnPath, _ comparison: ComparisonOperator, _ value: SQLValue, in scope: Void) {
        switch (comparison, value) {
        case (.equal, .null), (.notEqual, .null): break
        default: arguments.append(value)
        }
    }

    mutating func inList(_ path: ColumnPath, _ values: [SQLValue], in scope: Void) {
        let present = values.filter { $0 != .null }
        guard dialect.bindsListsAsArrays else {
            arguments += present
            return
        }
        if !present.isEmpty { arguments.append(SQLValueList.argument(present)) }
    }

    mutating func string(
        _ path: ColumnPath, _ operation: StringOperation, _ needle: String, _ options: StringComparisonOptions,
        in scope: Void
    ) {
        arguments.append(.text(needle))
    }

    mutating func search(_ path: ColumnPath, _ query: SearchQuery, in scope: Void) {
        arguments.append(.text(dialect.searchQuery(query)))
    }

    mutating func count(_ path: RelationshipPath, _ comparison: ComparisonOperator, _ number: Int, in scope: Void) {
        arguments.append(.integer(Int64(number)))
    }

    mutating func not(_ operand: Void, in scope: Void) {}
    mutating func and(_ operands: [Void], in scope: Void) {}
    mutating func or(_ operands: [Void], in scope: Void) {}
    mutating func enter(_ path: RelationshipPath, in scope: Void) -> (scope: Void, frame: Void) { ((), ()) }
    mutating func quantified(_ quantifier: Quantifier, _ operand: Void, frame: Void, in scope: Void) {}
}

// MARK: - SQL text

/// Every piece of SQL text a condition, a sort order or a section key becomes: keywords,
/// operators, placeholders, subqueries. The renderer decides what to say and this says it; what
/// differs between engines (parameters, casts, NULL-safe `<>`, the row number, string tests) it
/// takes from the dialect, so the traversal never names an engine.
enum ConditionSQL {
    /// An always-true or always-false test, in the dialect's literal for a condition.
    static func constant(_ value: Bool, in dialect: any SQLDialect) -> String {
        dialect.truth(value)
    }

    /// All operands: `(a AND b)`, true when there are none.
    static func all(_ operands: [String], in dialect: any SQLDialect) -> String {
        operands.isEmpty ? constant(true, in: dialect) : "(" + operands.joined(separator: " AND ") + ")"
    }

    /// Any operand: `(a OR b)`, false when there are none.
    static func any(_ operands: [String], in dialect: any SQLDialect) -> String {
        operands.isEmpty ? constant(false, in: dialect) : "(" + operands.joined(separator: " OR ") + ")"
    }

    /// The opposite of `operand`, where a NULL (a test on a missing value) counts as false: the
    /// fallback is the dialect's false, so PostgreSQL compares a boolean with a boolean.
    static func not(_ operand: String, in dialect: any SQLDialect) -> String {
        "NOT COALESCE(\(operand), \(constant(false, in: dialect)))"
    }

    /// `lhs AND rhs`, unparenthesised (a correlation and a discriminator test).
    static func and(_ lhs: String, _ rhs: String) -> String {
        "\(lhs) AND \(rhs)"
    }

    /// A column of the row `alias`.
    static func column(_ name: String, of alias: String) -> String {
        "\(alias).\(quoted(name))"
    }

    /// The row number of the row `alias` (a results controller's last tie-breaker).
    static func rowNumber(of alias: String, in dialect: any SQLDialect) throws -> String {
        "\(alias).\(try dialect.rowNumberColumn)"
    }

    /// A placeholder for one bound value; a decimal (stored as exact text) compares as a number.
    static func placeholder(isDecimal: Bool, in dialect: any SQLDialect) -> String {
        numeric(dialect.parameter, isDecimal, in: dialect)
    }

    /// A column's value as a test that orders values compares it: a decimal (stored as exact
    /// text) as a number, text by code point (the dialect's ``SQLDialect/byCodePoint(_:)``).
    static func compared(_ column: String, isDecimal: Bool, isText: Bool, in dialect: any SQLDialect) -> String {
        isText ? dialect.byCodePoint(column) : numeric(column, isDecimal, in: dialect)
    }

    /// A column's value as it compares: a decimal (stored as exact text) as a number.
    static func numeric(_ column: String, _ isDecimal: Bool, in dialect: any SQLDialect) -> String {
        isDecimal ? dialect.cast(column, to: dialect.decimalComparison) : column
    }

    /// The column is (or is not) missing.
    static func isNull(_ column: String, negated: Bool) -> String {
        negated ? "\(column) IS NOT NULL" : "\(column) IS NULL"
    }

    /// `lhs <op> rhs`; `!=` is the dialect's NULL-safe test, so a missing value is unequal to every value.
    static func compare(
        _ lhs: String, _ comparison: ComparisonOperator, _ rhs: String, in dialect: any SQLDialect
    ) -> String {
        comparison == .notEqual ? dialect.differs(lhs, rhs) : "\(lhs) \(comparison.sqlSymbol) \(rhs)"
    }

    /// `lhs IN (…)`; an empty list is false, spelled so on every engine (PostgreSQL refuses `IN ()`).
    static func inList(_ lhs: String, _ placeholders: [String], in dialect: any SQLDialect) -> String {
        guard !placeholders.isEmpty else { return constant(false, in: dialect) }
        return "\(lhs) IN (\(placeholders.joined(separator: ", ")))"
    }

    /// `lhs = ANY(array)`: `lhs` is one of the array parameter's values, with `IN`'s NULL rules (a
    /// missing `lhs` gives NULL; the array never holds NULL).
    static func anyOf(_ lhs: String, _ array: String) -> String {
        "\(lhs) = ANY(\(array))"
    }

    /// `test`, or the column is missing.
    static func orNull(_ test: String, column: String) -> String {
        "(\(test) OR \(isNull(column, negated: false)))"
    }

    /// The start of a to-one hop: `outer.column IN (SELECT alias."id" FROM table alias WHERE `;
    /// ``closeSubquery(_:_:)`` puts the test on the destination after it.
    static func inSubqueryPrefix(_ outer: String, column: String, table: String, alias: String) -> String {
        "\(outer).\(quoted(column)) IN (SELECT \(alias).\"id\" FROM \(quoted(table)) \(alias) WHERE "
    }

    /// A hop's prefix with the test on its destination.
    static func closeSubquery(_ prefix: String, _ nested: String) -> String {
        prefix + nested + ")"
    }

    /// The destinations of a to-many relationship stored as a column on the destination:
    /// `FROM table alias WHERE alias.inverse = owner."id"`.
    static func destinationsThroughInverse(table: String, alias: String, inverse: String, owner: String) -> String {
        "FROM \(quoted(table)) \(alias) WHERE \(alias).\(quoted(inverse)) = \(owner).\"id\""
    }

    /// The destinations of a to-many relationship stored in a join table.
    static func destinationsThroughJoin(
        table: String, joinAlias: String, source: String, target: String, destination: String, alias: String,
        owner: String
    ) -> String {
        "FROM \(quoted(table)) \(joinAlias) JOIN \(quoted(destination)) \(alias) "
            + "ON \(alias).\"id\" = \(joinAlias).\(quoted(target)) WHERE \(joinAlias).\(quoted(source)) = \(owner).\"id\""
    }

    /// Any, all or none of the destinations (`from`) satisfy `test`.
    static func quantified(_ quantifier: Quantifier, _ from: String, _ test: String, in dialect: any SQLDialect)
        -> String
    {
        switch quantifier {
        case .any: "EXISTS (SELECT 1 \(from) AND \(test))"
        case .none: "NOT EXISTS (SELECT 1 \(from) AND \(test))"
        case .all: "NOT EXISTS (SELECT 1 \(from) AND \(not(test, in: dialect)))"
        }
    }

    /// The number of destinations (`from`) compared with `rhs`.
    static func count(_ from: String, _ comparison: ComparisonOperator, _ rhs: String) -> String {
        "(SELECT COUNT(*) \(from)) \(comparison.sqlSymbol) \(rhs)"
    }

    /// A value on the destination of a to-one hop, for sorting: a scalar subquery.
    static func valueThroughHop(_ value: String, table: String, alias: String, outer: String, column: String)
        -> String
    {
        "(SELECT \(value) FROM \(quoted(table)) \(alias) WHERE \(alias).\"id\" = \(outer).\(quoted(column)))"
    }
}
