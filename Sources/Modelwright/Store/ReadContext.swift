import Foundation

/// What a `performQuery` closure reads through: fetches, counts and lookups by ID, all inside
/// one read transaction, so they see one consistent snapshot of the store.
///
/// ```swift
/// let (count, top) = try await store.performQuery { context in
///     (try context.count(User.request()), try context.fetch(User.request().limit(10)))
/// }
/// ```
///
/// A context is valid only inside its closure; do not keep it.
///
/// ## Topics
///
/// ### Fetching
/// - ``fetch(_:)->[Target]``
/// - ``fetchOne(_:)``
/// - ``existing(_:)``
/// - ``forEach(_:_:)``
///
/// ### Running prepared requests
/// - ``fetch(_:_:)``
/// - ``fetchOne(_:_:)``
///
/// ### Counting
/// - ``count(_:)``
/// - ``exists(_:)``
///
/// ### Searching
/// - ``search(_:for:in:snippetWords:)``
public class ReadContext {
    let connection: any DatabaseConnection
    let layout: SchemaLayout

    init(connection: any DatabaseConnection, layout: SchemaLayout) {
        self.connection = connection
        self.layout = layout
    }

    /// The dialect's parameter marker, for the SQL the contexts write by hand.
    var marker: String { connection.dialect.parameter }

    /// Every record the request matches, in its order.
    public func fetch<Target: Record>(_ request: FetchRequest<Target>) throws -> [Target] {
        try records(of: try rows(of: request), limit: request.fetchLimit)
    }

    /// The records of the cursor's rows, which it then closes.
    func records<Target: Record>(of cursor: RowCursor, limit: Int?) throws -> [Target] {
        defer { cursor.close() }
        var cursor = cursor
        // (A negative limit is SQLite's "no limit".)
        if let limit, limit > 0 { cursor.capacity = Swift.min(limit, RowCursor.reservedAtMost) }
        var records: [Target] = []
        try Target.appendRecords(of: cursor, to: &records)
        return records
    }

    /// Calls `body` with each record the request matches, one row at a time, so a million rows
    /// never need to be in memory together.
    public func forEach<Target: Record>(_ request: FetchRequest<Target>, _ body: (Target) throws -> Void) throws {
        let cursor = try rows(of: request)
        defer { cursor.close() }
        while let id = try cursor.next() {
            try body(try cursor.decode { try Target(id: RecordID(id), row: &$0) })
        }
    }

    /// The request's rows, its statement (kept by the connection for requests of its shape) bound,
    /// for a loop to step through.
    private func rows<Target: Record>(of request: FetchRequest<Target>) throws -> RowCursor {
        // Resolved into a request without a page start; a request without one is used as it is,
        // not copied.
        guard request.pageStart == nil else { return try rows(of: try resolvingPageStart(request)) }
        let entity = try layout.entity(Target.entityName)
        let shape = selectShape(entity.selectList, request, entity: entity, defaultSort: true)
        if let kept = connection.keptStatement(for: shape) {
            let arguments = try self.arguments(of: request, defaultSort: true)
            bind(arguments, to: kept)
            bindLimit(of: request, after: arguments.count, to: kept)
            return RowCursor(statement: kept, entity: entity.name)
        }
        let (sql, arguments) = try select(entity.selectList, request, entity: entity)
        return rows(try connection.keepStatement(sql, for: shape), arguments, entity: entity)
    }

    /// The rows of `statement` (a select of `entity.selectList`) with `arguments` bound.
    func rows(_ statement: any DatabaseStatement, _ arguments: [SQLValue], entity: EntityLayout) -> RowCursor {
        bind(arguments, to: statement)
        return RowCursor(statement: statement, entity: entity.name)
    }

    /// Binds `arguments` to the first parameters of `statement`.
    private func bind(_ arguments: [SQLValue], to statement: any DatabaseStatement) {
        for (index, argument) in arguments.enumerated() {
            statement.bind(argument, Int32(index + 1))
        }
    }

    /// Binds a limited request's limit and offset to the parameters after the first `count`, the
    /// last of its SQL (the values ``appendLimit(of:to:)`` appends).
    private func bindLimit<Target: Record>(
        of request: FetchRequest<Target>, after count: Int, to statement: any DatabaseStatement
    ) {
        let parameters = Self.limitParameters(of: request)
        guard parameters > 0 else { return }
        statement.bind(limitValue(of: request), Int32(count + 1))
        if parameters == 2 { statement.bind(Int64(request.fetchOffset), Int32(count + 2)) }
    }

    /// How many parameters a request's `LIMIT` clause has: none without a limit or an offset, one
    /// (the limit, or no limit) without an offset, two with one. An offset of 0 is left out, which
    /// saves SQLite a few instructions on every row.
    static func limitParameters<Target: Record>(of request: FetchRequest<Target>) -> Int {
        request.fetchOffset > 0 ? 2 : request.fetchLimit == nil ? 0 : 1
    }

    /// The value of a request's limit parameter: its limit, or the dialect's "no limit" when it has
    /// none or a negative one (SQLite's reading of a negative limit, which PostgreSQL refuses).
    private func limitValue<Target: Record>(of request: FetchRequest<Target>) -> SQLValue {
        guard let limit = request.fetchLimit, limit >= 0 else { return connection.dialect.noLimit }
        return .integer(Int64(limit))
    }

    /// The `LIMIT` clause of a request, its markers for the values ``appendLimit(of:to:)`` appends;
    /// empty for a request without a limit or an offset.
    func limitClause<Target: Record>(of request: FetchRequest<Target>) -> String {
        switch Self.limitParameters(of: request) {
        case 0: ""
        case 1: connection.dialect.limit(marker, offset: nil)
        default: connection.dialect.limit(marker, offset: marker)
        }
    }

    /// The first record the request matches: the first that ``fetch(_:)->[Target]`` returns (none
    /// when the request's limit is 0).
    ///
    /// A request that matches one unique key (`id` or a single-key uniqueness constraint) with a
    /// value reads its one row through SQL rendered once per entity and key, with no shape to
    /// build and hash and no limit to bind.
    public func fetchOne<Target: Record>(_ request: FetchRequest<Target>) throws -> Target? {
        // A limit of 0 returns no record.
        guard request.fetchLimit != 0 else { return nil }
        let entity = try layout.entity(Target.entityName)
        guard case .comparison(let path, .equal, let value)? = request.condition, path.hops.isEmpty,
            value != .null, entity.uniqueKeys.contains(path.column), request.scope == nil, request.fetchOffset == 0
        else {
            return try fetch(request.limit(1)).first
        }
        // Its order cannot matter, so it has none.
        var arguments: [SQLValue] = []
        QueryShape.collectArguments(
            of: .comparison(path, .equal, value), dialect: connection.dialect, into: &arguments)
        return try fetchRow(keyLookup(path, value, entity: entity, Target.self), arguments, entity: entity)
    }

    /// The record with this ID, if it exists: the lookup `fetchOne` makes for `filter { $0.id == id }`,
    /// without building the request.
    public func existing<Target: Record>(_ id: RecordID<Target>) throws -> Target? {
        let entity = try layout.entity(Target.entityName)
        let path = ColumnPath(column: "id")
        let value = id.sqlValue
        return try fetchRow(keyLookup(path, value, entity: entity, Target.self), [value], entity: entity)
    }

    /// The record of the first row of `statement`, if any.
    private func fetchRow<Target: Record>(
        _ statement: any DatabaseStatement, _ arguments: [SQLValue], entity: EntityLayout
    ) throws -> Target? {
        try firstRecord(of: rows(statement, arguments, entity: entity))
    }

    /// The record of the cursor's first row, if any; the cursor is then closed.
    func firstRecord<Target: Record>(of cursor: RowCursor) throws -> Target? {
        defer { cursor.close() }
        guard let id = try cursor.next() else { return nil }
        return try cursor.decode { try Target(id: RecordID(id), row: &$0) }
    }

    /// The statement of a lookup by the unique key at `path` (one parameter, its value), kept by the
    /// connection for its entity and key; its SQL is rendered once per entity and key and connection,
    /// and `value` is the first lookup's, which renders like any other.
    private func keyLookup<Target: Record>(
        _ path: ColumnPath,
        _ value: SQLValue,
        entity: EntityLayout,
        _ target: Target.Type
    ) throws -> any DatabaseStatement {
        let shape = RequestShape.keyLookup(KeyLookupShape(entity: entity.name, key: path.column))
        if let kept = connection.keptStatement(for: shape) { return kept }
        if let sql = connection.renderedSQL[shape] { return try connection.keepStatement(sql, for: shape) }
        let lookup = FetchRequest<Target>(condition: .comparison(path, .equal, value))
        let (sql, _) = try render(entity.selectList, lookup, entity: entity, defaultSort: false)
        if connection.renderedSQL.count > 512 { connection.renderedSQL.removeAll() }
        connection.renderedSQL[shape] = sql
        return try connection.keepStatement(sql, for: shape)
    }

    /// How many records the request matches (its limit and offset apply).
    public func count<Target: Record>(_ request: FetchRequest<Target>) throws -> Int {
        let entity = try layout.entity(Target.entityName)
        var unsorted = request
        unsorted.sortKeys = []
        let (inner, arguments) = try select("1", unsorted, entity: entity, defaultSort: false)
        let statement = try connection.statement(Self.countSQL(inner))
        defer { statement.reset() }
        for (index, argument) in arguments.enumerated() {
            statement.bind(argument, Int32(index + 1))
        }
        guard try statement.step() else { return 0 }
        return Int(statement.int64(0))
    }

    /// The SQL that counts the rows of the select `inner`.
    static func countSQL(_ inner: String) -> String { "SELECT COUNT(*) FROM (\(inner)) AS counted" }

    /// Whether the request matches any record.
    public func exists<Target: Record>(_ request: FetchRequest<Target>) throws -> Bool {
        // A limit of 0 matches no record.
        guard request.fetchLimit != 0 else { return false }
        return try count(request.limit(1)) > 0
    }

    /// `SELECT <columns> FROM <table> t0 WHERE … ORDER BY … LIMIT … OFFSET …` and its arguments.
    ///
    /// The SQL depends only on the request's shape (its condition without values, its sort, scope
    /// and whether it has a limit), so it is rendered once per shape and connection; the values
    /// are collected in the order the renderer places their parameters.
    func select<Target: Record>(
        _ columns: String,
        _ request: FetchRequest<Target>,
        entity: EntityLayout,
        defaultSort: Bool = true
    ) throws -> (String, [SQLValue]) {
        guard request.pageStart == nil else {
            return try select(columns, try resolvingPageStart(request), entity: entity, defaultSort: defaultSort)
        }
        let shape = selectShape(columns, request, entity: entity, defaultSort: defaultSort)
        var arguments: [SQLValue]
        let sql: String
        if let cached = connection.renderedSQL[shape] {
            sql = cached
            arguments = try self.arguments(of: request, defaultSort: defaultSort)
        } else {
            (sql, arguments) = try render(columns, request, entity: entity, defaultSort: defaultSort)
            if connection.renderedSQL.count > 512 { connection.renderedSQL.removeAll() }
            connection.renderedSQL[shape] = sql
        }
        appendLimit(of: request, to: &arguments)
        return (sql, arguments)
    }

    /// What the SQL of a select depends on (`request` with its page start resolved).
    func selectShape<Target: Record>(
        _ columns: String, _ request: FetchRequest<Target>, entity: EntityLayout, defaultSort: Bool
    ) -> RequestShape {
        .select(
            SelectShape(
                columns: columns,
                entity: entity.name,
                condition: request.condition.map(QueryShape.shape),
                sortKeys: request.sortKeys,
                scope: request.scope.map { [$0.entity, $0.relationship] },
                limitParameters: Self.limitParameters(of: request),
                defaultSort: defaultSort
            ))
    }

    /// The arguments of a select rendered before, limit and offset excepted, in the order its SQL
    /// binds them (`request` with its page start resolved).
    func arguments<Target: Record>(of request: FetchRequest<Target>, defaultSort: Bool) throws
        -> [SQLValue]
    {
        guard let scope = request.scope else {
            // The common request: its condition's values alone, collected into the array returned.
            return request.condition.map { QueryShape.arguments(of: $0, dialect: connection.dialect) } ?? []
        }
        var arguments = [scope.source.sqlValue]
        if let condition = request.condition {
            QueryShape.collectArguments(of: condition, dialect: connection.dialect, into: &arguments)
        }
        if try orderedThroughJoinTable(scope), request.sortKeys.isEmpty, defaultSort {
            arguments.append(scope.source.sqlValue)
        }
        return arguments
    }

    /// Appends a limited request's limit and offset, the last parameters of its SQL (``limitClause(of:)``).
    func appendLimit<Target: Record>(of request: FetchRequest<Target>, to arguments: inout [SQLValue]) {
        let parameters = Self.limitParameters(of: request)
        if parameters > 0 { arguments.append(limitValue(of: request)) }
        if parameters == 2 { arguments.append(.integer(Int64(request.fetchOffset))) }
    }

    /// Whether a scoped request is ordered by a position in a join table (one more parameter).
    private func orderedThroughJoinTable(_ scope: RelationshipScope) throws -> Bool {
        let owner = try layout.entity(scope.entity)
        guard let relationship = owner.relationships.first(where: { $0.name == scope.relationship }),
            case .joinTable(_, _, _, .some) = try layout.storage(of: relationship, from: owner)
        else { return false }
        return true
    }

    /// Renders the SQL of a request and its arguments, limit and offset excepted.
    func render<Target: Record>(
        _ columns: String,
        _ request: FetchRequest<Target>,
        entity: EntityLayout,
        defaultSort: Bool
    ) throws -> (String, [SQLValue]) {
        var renderer = SQLPredicateRenderer(layout: layout, dialect: connection.dialect)
        var conditions: [String] = []
        if let discriminator = entity.discriminatorSQL(alias: "t0") {
            conditions.append(discriminator)
        }
        var scopeOrder: String?
        var scopeOrderArguments: [SQLValue] = []
        if let scope = request.scope {
            let owner = try layout.entity(scope.entity)
            guard let relationship = owner.relationships.first(where: { $0.name == scope.relationship }) else {
                throw StoreError.unknownProperty(entity: owner.name, property: scope.relationship)
            }
            let source = scope.source.sqlValue
            switch try layout.storage(of: relationship, from: owner) {
            case .inverseColumn(let inverse, let position):
                conditions.append("t0.\(quoted(inverse)) = \(marker)")
                renderer.bindLiteral(source)
                scopeOrder = position.map { "t0.\(quoted($0))" }
            case .joinTable(let table, let sourceColumn, let target, let position):
                conditions.append(
                    "t0.\"id\" IN (SELECT \(quoted(target)) FROM \(quoted(table)) WHERE \(quoted(sourceColumn)) = \(marker))"
                )
                renderer.bindLiteral(source)
                if let position {
                    scopeOrder =
                        "(SELECT \(quoted(position)) FROM \(quoted(table)) WHERE \(quoted(sourceColumn)) = \(marker) AND \(quoted(target)) = t0.\"id\")"
                    scopeOrderArguments = [source]
                }
            }
        }
        if let condition = request.condition {
            conditions.append(try renderer.render(condition, entity: entity, alias: "t0"))
        }
        var sql = "SELECT \(columns) FROM \(quoted(entity.table)) t0"
        if !conditions.isEmpty {
            sql += " WHERE " + conditions.joined(separator: " AND ")
        }
        var keys = request.sortKeys
        if keys.isEmpty, defaultSort, let scopeOrder {
            sql += " ORDER BY \(scopeOrder), t0.\"id\""
            for argument in scopeOrderArguments { renderer.bindLiteral(argument) }
        } else if keys.isEmpty, defaultSort {
            keys = (layout.schema.entity(named: entity.name)?.defaultSort ?? []).map {
                SortKey(path: ColumnPath(column: $0.attribute), ascending: $0.ascending)
            }
        }
        if !keys.isEmpty {
            sql += " ORDER BY " + (try renderer.orderBy(keys, entity: entity, alias: "t0"))
        }
        let arguments = renderer.arguments
        return (sql + limitClause(of: request), arguments)
    }
}
