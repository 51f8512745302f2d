/// Renders a ``Condition`` as an SQL expression with bound parameters: no value is ever
/// spliced into SQL text, only quoted identifiers.
///
/// - `==` renders as `=`, and `!=` as `IS NOT`, so a missing value is unequal to every value;
///   `NOT` renders as `NOT COALESCE(…, 0)`, so a test on a missing value (NULL in SQL) inverts
///   to true, as it does in `NSPredicate`.
/// - Decimal columns (stored as exact text) compare numerically through `CAST(… AS REAL)`.
/// - String tests call `mw_string` (see `StringFunctions`), which compares Unicode correctly.
/// - A to-one hop becomes `column IN (SELECT id FROM destination WHERE …)`; a to-many
///   quantifier becomes a correlated `EXISTS` on the inverse to-one's column or through the join
///   table. Through a hop, a missing relationship makes the test false.
struct SQLPredicateRenderer {
    private let layout: SchemaLayout
    private(set) var arguments: [SQLValue] = []
    private var aliasCount = 0

    init(layout: SchemaLayout) {
        self.layout = layout
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
        switch condition {
        case .constant(let value):
            return value ? "1" : "0"
        case .and(let operands):
            guard !operands.isEmpty else { return "1" }
            return "(" + (try operands.map { try render($0, entity: entity, alias: alias) }).joined(separator: " AND ")
                + ")"
        case .or(let operands):
            guard !operands.isEmpty else { return "0" }
            return "(" + (try operands.map { try render($0, entity: entity, alias: alias) }).joined(separator: " OR ")
                + ")"
        case .not(let operand):
            return "NOT COALESCE(\(try render(operand, entity: entity, alias: alias)), 0)"
        case .comparison(let path, let comparison, let value):
            return try atColumn(path, entity: entity, alias: alias) { renderer, column, isDecimal in
                renderer.comparison(column, comparison, value, isDecimal: isDecimal)
            }
        case .inList(let path, let values):
            return try atColumn(path, entity: entity, alias: alias) { renderer, column, isDecimal in
                // `IN (NULL)` never matches; a nil in the list means "or missing", as NSPredicate reads it.
                let present = values.filter { $0 != .null }
                let placeholders = present.map { renderer.parameter($0, isDecimal: isDecimal) }
                let test = "\(renderer.numeric(column, isDecimal)) IN (\(placeholders.joined(separator: ", ")))"
                guard present.count < values.count else { return test }
                return present.isEmpty ? "\(column) IS NULL" : "(\(test) OR \(column) IS NULL)"
            }
        case .between(let path, let lower, let upper):
            return try atColumn(path, entity: entity, alias: alias) { renderer, column, isDecimal in
                let low = renderer.parameter(lower, isDecimal: isDecimal)
                let high = renderer.parameter(upper, isDecimal: isDecimal)
                return "\(renderer.numeric(column, isDecimal)) BETWEEN \(low) AND \(high)"
            }
        case .string(let path, let operation, let needle, let options):
            return try atColumn(path, entity: entity, alias: alias) { renderer, column, _ in
                let needle = renderer.parameter(.text(needle), isDecimal: false)
                return "mw_string(\(operation.rawValue), \(options.rawValue), \(column), \(needle))"
            }
        case .quantified(let path, let quantifier, let operand):
            return try atRelationship(path, entity: entity, alias: alias) { renderer, correlated, destination, inner in
                let test = try renderer.render(operand, entity: destination, alias: inner)
                switch quantifier {
                case .any: return "EXISTS (\(correlated) AND \(test))"
                case .none: return "NOT EXISTS (\(correlated) AND \(test))"
                case .all: return "NOT EXISTS (\(correlated) AND NOT COALESCE(\(test), 0))"
                }
            }
        case .count(let path, let comparison, let number):
            return try atRelationship(path, entity: entity, alias: alias) { renderer, correlated, _, _ in
                let counted = correlated.replacingOccurrences(of: "SELECT 1 FROM", with: "SELECT COUNT(*) FROM")
                return
                    "(\(counted)) \(Self.sqlOperator(comparison)) \(renderer.parameter(.integer(Int64(number)), isDecimal: false))"
            }
        }
    }

    /// `ORDER BY` terms for sort keys: columns of the entity, its ID, or fields reached through
    /// to-one relationships.
    func orderBy(_ keys: [SortKey], entity: EntityLayout, alias: String) throws -> String {
        try keys.map { key in
            "\(try value(at: key.path, entity: entity, alias: alias)) \(key.ascending ? "ASC" : "DESC")"
        }.joined(separator: ", ")
    }

    /// The value at `path` for the row `alias` of `entity`, as a sort key orders by it and a
    /// results controller groups sections by it. Through a to-one hop it is a scalar subquery on
    /// the destination, NULL (first when ascending, as SQLite sorts NULL) when the relationship is empty.
    func value(at path: ColumnPath, entity: EntityLayout, alias: String, depth: Int = 0) throws -> String {
        guard let hop = path.hops.first else {
            guard path.column != "id" else { return "\(alias).\"id\"" }
            // Results controllers break ties by SQLite's row number: unique like the ID, and the last
            // column of every index, so an index on the sort keys still orders the rows without a sort.
            guard path != ColumnPath.rowNumber else { return "\(alias).rowid" }
            let column = try self.column(path.column, of: entity)
            return numeric("\(alias).\(quoted(column.name))", column.isDecimal)
        }
        let (relationship, destination) = try layout.destination(of: hop, from: entity)
        guard relationship.cardinality == .toOne else {
            throw StoreError.unsupportedQuery("sorting through the to-many relationship '\(hop)'")
        }
        let rest = ColumnPath(hops: Array(path.hops.dropFirst()), column: path.column)
        let inner = "s\(depth + 1)"
        let value = try value(at: rest, entity: destination, alias: inner, depth: depth + 1)
        return
            "(SELECT \(value) FROM \(quoted(destination.table)) \(inner) WHERE \(inner).\"id\" = \(alias).\(quoted(entity.columnName(hop))))"
    }

    // MARK: - Columns and relationships

    /// Renders a test on a column, following to-one hops through `IN (SELECT …)` subqueries.
    private mutating func atColumn(
        _ path: ColumnPath,
        entity: EntityLayout,
        alias: String,
        test: (inout SQLPredicateRenderer, String, Bool) throws -> String
    ) throws -> String {
        guard let hop = path.hops.first else {
            let column = try path.column == "id" ? nil : self.column(path.column, of: entity)
            return try test(&self, "\(alias).\(quoted(column?.name ?? path.column))", column?.isDecimal ?? false)
        }
        let (relationship, destination) = try layout.destination(of: hop, from: entity)
        guard relationship.cardinality == .toOne else {
            throw StoreError.unsupportedQuery("'\(hop)' is to-many: use any, all, none or count")
        }
        let inner = makeAlias()
        let rest = ColumnPath(hops: Array(path.hops.dropFirst()), column: path.column)
        let nested = try atColumn(rest, entity: destination, alias: inner, test: test)
        return
            "\(alias).\(quoted(entity.columnName(hop))) IN (SELECT \(inner).\"id\" FROM \(quoted(destination.table)) \(inner) WHERE \(nested))"
    }

    /// Renders a test on a to-many relationship: `test` gets the correlated `SELECT 1 FROM … WHERE …`
    /// prefix, the destination and its alias.
    private mutating func atRelationship(
        _ path: RelationshipPath,
        entity: EntityLayout,
        alias: String,
        test: (inout SQLPredicateRenderer, String, EntityLayout, String) throws -> String
    ) throws -> String {
        guard let hop = path.hops.first else {
            let (relationship, destination) = try layout.destination(of: path.relationship, from: entity)
            guard relationship.cardinality == .toMany else {
                throw StoreError.unsupportedQuery("'\(path.relationship)' is to-one: compare its fields instead")
            }
            let inner = makeAlias()
            var correlated: String
            switch try layout.storage(of: relationship, from: entity) {
            case .inverseColumn(let inverse, _):
                correlated =
                    "SELECT 1 FROM \(quoted(destination.table)) \(inner) WHERE \(inner).\(quoted(inverse)) = \(alias).\"id\""
            case .joinTable(let table, let source, let target, _):
                let join = makeAlias()
                correlated =
                    "SELECT 1 FROM \(quoted(table)) \(join) JOIN \(quoted(destination.table)) \(inner) "
                    + "ON \(inner).\"id\" = \(join).\(quoted(target)) WHERE \(join).\(quoted(source)) = \(alias).\"id\""
            }
            if let discriminator = destination.discriminatorSQL(alias: inner) {
                correlated += " AND \(discriminator)"
            }
            return try test(&self, correlated, destination, inner)
        }
        let (relationship, destination) = try layout.destination(of: hop, from: entity)
        guard relationship.cardinality == .toOne else {
            throw StoreError.unsupportedQuery("'\(hop)' is to-many: use any, all, none or count")
        }
        let inner = makeAlias()
        let rest = RelationshipPath(hops: Array(path.hops.dropFirst()), relationship: path.relationship)
        let nested = try atRelationship(rest, entity: destination, alias: inner, test: test)
        return
            "\(alias).\(quoted(entity.columnName(hop))) IN (SELECT \(inner).\"id\" FROM \(quoted(destination.table)) \(inner) WHERE \(nested))"
    }

    private func column(_ name: String, of entity: EntityLayout) throws -> ColumnLayout {
        guard let column = entity.column(forKey: name) else {
            throw StoreError.unknownProperty(entity: entity.name, property: name)
        }
        return column
    }

    // MARK: - Values

    private mutating func comparison(
        _ column: String, _ comparison: ComparisonOperator, _ value: SQLValue, isDecimal: Bool
    )
        -> String
    {
        switch (comparison, value) {
        case (.equal, .null): return "\(column) IS NULL"
        case (.notEqual, .null): return "\(column) IS NOT NULL"
        case (.notEqual, _):
            return "\(numeric(column, isDecimal)) IS NOT \(parameter(value, isDecimal: isDecimal))"
        default:
            return
                "\(numeric(column, isDecimal)) \(Self.sqlOperator(comparison)) \(parameter(value, isDecimal: isDecimal))"
        }
    }

    private mutating func parameter(_ value: SQLValue, isDecimal: Bool) -> String {
        arguments.append(value)
        return isDecimal ? "CAST(? AS REAL)" : "?"
    }

    private func numeric(_ column: String, _ isDecimal: Bool) -> String {
        isDecimal ? "CAST(\(column) AS REAL)" : column
    }

    private static func sqlOperator(_ comparison: ComparisonOperator) -> String {
        switch comparison {
        case .equal: "="
        case .notEqual: "<>"
        case .less: "<"
        case .lessOrEqual: "<="
        case .greater: ">"
        case .greaterOrEqual: ">="
        }
    }
}
