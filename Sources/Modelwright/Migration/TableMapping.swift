/// How the tables and columns of one version correspond to the next's, from the renames the
/// destination declares (`renamedFrom`): what the migrator renames, keeps, converts and fills.
struct TableMapping {
    /// For each destination table that existed before: the source table's name.
    private(set) var sourceTable: [String: String] = [:]
    /// For each mapped destination table: destination column → source column.
    private(set) var sourceColumn: [String: [String: String]] = [:]
    /// For each destination table: the SQL a rebuild fills a column from when it is not simply the
    /// column (a lossless type conversion, a default for a newly required column, a join table
    /// whose sides swapped).
    private(set) var copyExpression: [String: [String: String]] = [:]
    /// For each destination table: the default (the dialect's SQL) that the rows of a column take
    /// where they hold no value, because an optional attribute became required with a default;
    /// part of the copy expression, and what an alteration in place fills such rows with.
    private(set) var defaultFill: [String: [String: String]] = [:]
    /// For each destination join table that continues a source one: the source table's name, and
    /// whether the other side owned it before (its `source` and `destination` columns trade places).
    /// Sync's record of the links follows the table by it.
    private(set) var joinTableSource: [String: (table: String, tradesSides: Bool)] = [:]
    /// Entities renamed inside a table with an `_entity` column: destination table → (old, new).
    private(set) var entityRenames: [String: [(old: String, new: String)]] = [:]
    /// Destination tables whose `_entity` column is new, with the entity existing rows belong to.
    private(set) var newDiscriminator: [String: String] = [:]
    /// Columns with the default `now`, which has no SQL form: destination table → columns, each
    /// with the entity whose rows it fills.
    private(set) var nowColumns: [String: [(column: String, entity: String)]] = [:]
    /// For each destination entity: destination column → the source column its rows' values come
    /// from (the entity's own columns only; a column shared with a sibling lists it for both).
    private(set) var entitySource: [String: [String: String]] = [:]
    /// Destination columns that take their values row by row, because their entities' values come
    /// from different source columns (siblings that stop or start sharing a column, see
    /// `ColumnNames`): destination table → fills, in order. The add phase runs them.
    private(set) var fills: [String: [ColumnFill]] = [:]

    /// How one destination column gets its values when its rows' values come from several
    /// source columns, or from a source column that another destination column continues.
    struct ColumnFill {
        /// The destination column.
        let column: String
        /// For each entity whose rows it fills (by its destination name): the source column and
        /// the SQL converting it, over the placeholder `SOURCE`.
        let sources: [(entity: String, column: String, expression: String)]
        /// Entities whose rows must hold NULL here afterwards: they read the source column, which
        /// this destination column continues, but their values moved to another column.
        let cleared: [String]
    }

    /// The placeholder a fill's expression names its source column by.
    static let sourcePlaceholder = "\u{1}SOURCE\u{1}"

    init(source: SchemaLayout, destination: SchemaLayout, dialect: some SQLDialect) {
        let old = source.schema
        let new = destination.schema
        // Tables first: a root entity keeps its table when it was a root before.
        for entity in new.entities {
            let oldName = entity.renamedFrom ?? entity.name
            guard destination.entities[entity.name]?.table == entity.name,
                source.entities[oldName]?.table == oldName
            else { continue }
            sourceTable[entity.name] = oldName
            sourceColumn[entity.name, default: [:]]["id"] = "id"
        }
        for entity in new.entities {
            let oldName = entity.renamedFrom ?? entity.name
            guard let newLayout = destination.entities[entity.name] else { continue }
            let table = newLayout.table
            for attribute in entity.attributes where attribute.defaultValue == .now {
                nowColumns[table, default: []].append((newLayout.columnName(attribute.name), entity.name))
            }
            guard let oldLayout = source.entities[oldName], sourceTable[table] == oldLayout.table else { continue }
            mapColumns(of: entity, in: newLayout, from: oldLayout, new: new, dialect: dialect)
            if newLayout.hasDiscriminator {
                if oldLayout.hasDiscriminator {
                    sourceColumn[table, default: [:]]["_entity"] = "_entity"
                    if oldName != entity.name { entityRenames[table, default: []].append((oldName, entity.name)) }
                } else if oldLayout.table == oldName {
                    newDiscriminator[table] = entity.name
                }
            }
            mapJoinTables(
                of: entity, in: newLayout, destination: destination, from: oldLayout, source: source, old: old)
        }
        resolveColumns(source: source, destination: destination, dialect: dialect)
    }

    /// The entity's own columns' sources (with their conversions), collected per column; which
    /// ones become renames and which fills is decided for the whole table in `resolveColumns`.
    private var candidates: [String: [String: [(entity: String, column: String, expression: String)]]] = [:]

    private mutating func mapColumns(
        of entity: EntityDescription, in newLayout: EntityLayout, from oldLayout: EntityLayout, new: SchemaDescription,
        dialect: some SQLDialect
    ) {
        let table = newLayout.table
        let attributes = Self.lineage(of: entity, in: new).flatMap(\.attributes)
        for column in newLayout.columns {
            let renamedFrom = attributes.first { $0.name == column.property }?.renamedFrom
            guard
                let (oldColumn, expression, fill) = Self.source(
                    of: column, renamedFrom: renamedFrom, in: newLayout, from: oldLayout, dialect: dialect)
            else { continue }
            if let fill { defaultFill[table, default: [:]][column.name] = fill }
            entitySource[entity.name, default: [:]][column.name] = oldColumn
            candidates[table, default: [:]][column.name, default: []].append((entity.name, oldColumn, expression))
        }
        for column in newLayout.positionColumns {
            let inverse = String(column.dropLast("._position".count))
            guard let key = newLayout.columns.first(where: { $0.name == inverse })?.key,
                let relationship = entity.relationships.first(where: { $0.name == key })
            else { continue }
            let oldKey = relationship.renamedFrom ?? relationship.name
            let oldPosition = ToManyStorage.positionColumn(forInverse: oldLayout.columnName(oldKey))
            if oldLayout.positionColumns.contains(oldPosition) {
                sourceColumn[table, default: [:]][column] = oldPosition
            }
        }
    }

    /// The source column a destination column continues, with the SQL that converts its value
    /// (over ``sourcePlaceholder``) and the default it fills rows without a value with, or `nil`
    /// for a new column.
    static func source(
        of column: ColumnLayout, renamedFrom: String?, in newLayout: EntityLayout, from oldLayout: EntityLayout,
        dialect: some SQLDialect
    ) -> (String, String, String?)? {
        let placeholder = sourcePlaceholder
        guard let description = newLayout.relationships.first(where: { $0.name == column.property }),
            column.type == nil
        else {
            // An attribute, or a composite's field (whose type changes only a custom stage converts).
            let oldKey = renamedFrom ?? column.property
            let old = oldLayout.columns.first { old in
                old.type != nil && old.property == oldKey && old.field == column.field
            }
            return old.map { old in
                let conversion =
                    column.field == nil
                    ? Self.conversion(from: old.type, to: column.type, column: placeholder, dialect: dialect) : nil
                var expression = conversion ?? placeholder
                var fill: String?
                // Rows without a value take the default: those of an optional attribute made
                // required, and those whose value the new type cannot hold (`mw_float` of 1e300).
                let clears =
                    old.type?.scalar.flatMap { before in column.type?.scalar.flatMap(before.conversion(to:)) }?
                    .clearsValues ?? false
                if old.isOptional || clears, !column.isOptional, let literal = column.defaultLiteral {
                    let value = dialect.defaultExpression(literal, for: column.storage)
                    if old.isOptional { fill = value }
                    expression = "COALESCE(\(expression), \(value))"
                }
                return (old.name, expression, fill)
            }
        }
        let oldKey = description.renamedFrom ?? description.name
        guard let old = oldLayout.column(forKey: oldKey), old.type == nil else { return nil }
        return (old.name, placeholder, nil)
    }

    /// Decides, per destination table, which columns are renames of one source column (kept
    /// whole: the ALTER TABLE path) and which are filled row by row, because their entities' values
    /// come from different places, or because another destination column continues their source.
    private mutating func resolveColumns(source: SchemaLayout, destination: SchemaLayout, dialect: some SQLDialect) {
        for (table, columns) in candidates {
            // The source column each destination column would continue whole.
            var whole: [String: (column: String, expression: String)] = [:]
            var mixed: Set<String> = []
            for (column, sources) in columns {
                let first = sources[0]
                if sources.allSatisfy({ $0.column == first.column && $0.expression == first.expression }) {
                    whole[column] = (first.column, first.expression)
                } else {
                    mixed.insert(column)
                }
            }
            // A source column continues whole into one destination column: the one of its own
            // name, else the first by name; the others take its values by a fill.
            var claimants: [String: [String]] = [:]
            for (column, origin) in whole { claimants[origin.column, default: []].append(column) }
            var renamed: [String: String] = [:]
            for (origin, names) in claimants {
                let keeper = names.contains(origin) ? origin : names.min() ?? origin
                renamed[keeper] = origin
                for name in names where name != keeper { mixed.insert(name) }
            }
            for (column, origin) in renamed {
                sourceColumn[table, default: [:]][column] = origin
                let expression = whole[column]?.expression ?? Self.sourcePlaceholder
                if expression != Self.sourcePlaceholder {
                    copyExpression[table, default: [:]][column] = expression.replacingOccurrences(
                        of: Self.sourcePlaceholder, with: quoted(column))
                }
            }
            // Entities that read a continued source column but whose values went elsewhere.
            var oldReaders: [String: Set<String>] = [:]
            for (entity, sources) in entitySource where destination.entities[entity]?.table == table {
                for (_, origin) in sources { oldReaders[origin, default: []].insert(entity) }
            }
            for column in mixed.sorted() {
                let sources = (columns[column] ?? []).sorted { $0.entity < $1.entity }
                fills[table, default: []].append(ColumnFill(column: column, sources: sources, cleared: []))
            }
            for (column, origin) in renamed.sorted(by: { $0.key < $1.key }) {
                let users = Set((columns[column] ?? []).map(\.entity))
                let stale = (oldReaders[origin] ?? []).subtracting(users).sorted()
                if !stale.isEmpty {
                    fills[table, default: []].append(ColumnFill(column: column, sources: [], cleared: stale))
                }
                // An attribute moved up from one sub-entity: the other entities that now have it
                // held nothing there, and get its default, as a new attribute's rows would.
                let unfilled = destination.entities.values.filter { entity in
                    entity.table == table && !entity.isAbstract && entity.hasDiscriminator
                        && !users.contains(entity.name)
                }.compactMap { entity -> (String, String)? in
                    // The default as the engine's typed column takes it (`true`, not SQLite's `1`).
                    guard let layout = entity.columns.first(where: { $0.name == column }),
                        let literal = layout.defaultLiteral
                    else { return nil }
                    return (entity.name, dialect.defaultExpression(literal, for: layout.storage))
                }.sorted { $0.0 < $1.0 }
                if !unfilled.isEmpty {
                    fills[table, default: []].append(
                        ColumnFill(
                            column: column, sources: unfilled.map { ($0.0, origin, $0.1) },
                            cleared: []))
                }
            }
        }
    }

    private mutating func mapJoinTables(
        of entity: EntityDescription, in newLayout: EntityLayout, destination: SchemaLayout,
        from oldLayout: EntityLayout, source: SchemaLayout, old: SchemaDescription
    ) {
        let oldRelationships = oldLayout.relationships
        for relationship in entity.relationships where relationship.cardinality == .toMany {
            guard
                case .joinTable(let name, "source", _, let position)? = try? destination.storage(
                    of: relationship, from: newLayout),
                let oldRelationship = oldRelationships.first(where: {
                    $0.name == (relationship.renamedFrom ?? relationship.name) && $0.cardinality == .toMany
                }),
                case .joinTable(let oldName, let oldSource, _, let oldPosition)? = try? source.storage(
                    of: oldRelationship, from: oldLayout)
            else { continue }
            sourceTable[name] = oldName
            joinTableSource[name] = (oldName, oldSource != "source")
            var columns = ["source": "source", "destination": "destination"]
            if position != nil, oldPosition != nil { columns["position"] = "position" }
            sourceColumn[name] = columns
            if oldSource != "source" {
                // The other side owned the table before: its columns trade places.
                copyExpression[name] = ["source": "\"destination\"", "destination": "\"source\""]
            }
        }
    }

    /// The SQL that converts a column's stored value from one type to another (the one rule,
    /// ``ScalarType/conversion(to:)``), or `nil` when the stored value serves as it is (or only a
    /// custom stage can convert it).
    static func conversion(
        from old: AttributeType?, to new: AttributeType?, column: String, dialect: some SQLDialect
    ) -> String? {
        guard let old = old?.scalar, let new = new?.scalar, let cast = old.conversion(to: new)?.cast else {
            return nil
        }
        return dialect.cast(column, to: cast)
    }

    /// The least magnitude that a `Float` rounds to infinity: the greatest `Float` and half its
    /// last place (2^128 - 2^103; to even, the tie goes up).
    static let floatInfinityBound = "\(Double(sign: .plus, exponent: 128, significand: 1) - 0x1p103)"

    /// The greatest magnitude that a `Float` rounds to zero: half the least `Float` (2^-150; to
    /// even, the tie goes down).
    static let floatZeroBound = "\(Double(sign: .plus, exponent: -150, significand: 1))"

    /// The SQL that converts `name`, a stored value of `old`, to `layout`'s type on an engine
    /// whose columns are typed (PostgreSQL: an alteration in place, rows moving to another table):
    /// `copy` (the mapping's copy expression, SQLite's, which reads any value as any type) where
    /// the stored type stays; else the one rule's conversion (``ScalarType/conversion(to:)``)
    /// spelled with typed casts, a narrowing guarded so a value the new type cannot hold becomes
    /// the default or NULL as SQLite's value check would clear it; NULL where no cast converts.
    static func typedConversion(
        of name: String, from old: ColumnLayout, to layout: ColumnLayout, copy: String?, dialect: some SQLDialect
    ) -> String {
        guard let new = layout.type?.scalar else { return copy ?? "NULL" }
        if old.storage == layout.storage { return copy ?? dialect.cast(name, to: layout.storage) }
        guard let before = old.type?.scalar, before.conversion(to: new) != nil else { return "NULL" }
        // A boolean converts through a 32-bit integer, the one integer PostgreSQL casts it to and from.
        let through = old.storage == .boolean || layout.storage == .boolean
        let value = through ? dialect.cast(name, to: .integer32) : name
        let cast = dialect.cast(value, to: layout.storage)
        // A value the new type cannot hold takes the attribute's default, or NULL when it has none
        // (then it is optional: the plan refuses a required one, `TypeConversion.clearsValues`).
        // Rows without a value keep none: in a hierarchy's table they may be another entity's.
        let lost =
            layout.isOptional
            ? ""
            : layout.defaultLiteral.map {
                " WHEN \(name) IS NOT NULL THEN \(dialect.defaultExpression($0, for: layout.storage))"
            } ?? ""
        if let range = new.integerRange {
            // The range is tested on the stored value itself: a `bigint` outside an `integer`'s
            // range would fail its cast to one (22003) before the test could clear it.
            let tested = old.storage == .boolean ? value : name
            return "CASE WHEN \(tested) BETWEEN \(range.lowerBound) AND \(range.upperBound) THEN \(cast)\(lost) END"
        }
        // Only a double or a decimal can hold what a `real` cannot (an integer's text 'NaN' would
        // not even parse as the column's type). The rule is Swift's `Float(_:)`, as SQLite's
        // `mw_float` applies it: a finite value that rounds past a `Float`'s range is cleared
        // (PostgreSQL would refuse it, 22003), one that rounds to zero becomes a zero of its sign
        // (PostgreSQL would refuse that too, as an underflow), the others round to nearest, even.
        if layout.storage == .float, old.storage == .double || old.storage == .decimal {
            let zero = "CASE WHEN \(name) < 0 THEN CAST('-0' AS real) ELSE CAST('0' AS real) END"
            return "CASE WHEN \(name) IN ('NaN', 'Infinity', '-Infinity') THEN \(cast) "
                + "WHEN \(name) <> 0 AND abs(\(name)) <= \(floatZeroBound) THEN \(zero) "
                + "WHEN abs(\(name)) < \(floatInfinityBound) THEN \(cast)\(lost) END"
        }
        return cast
    }

    /// The entity and its ancestors, root first.
    static func lineage(of entity: EntityDescription, in schema: SchemaDescription) -> [EntityDescription] {
        var result = [entity]
        while let parent = result[0].parent.flatMap(schema.entity(named:)),
            !result.contains(where: { $0.name == parent.name })
        {
            result.insert(parent, at: 0)
        }
        return result
    }
}
