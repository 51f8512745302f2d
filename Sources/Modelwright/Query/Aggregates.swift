import Foundation

/// What an aggregate computes over the rows of a group.
package enum AggregateFunction: Sendable, Hashable {
    /// The number of rows.
    case count
    /// The sum of the field's present values; 0 for none.
    case sum
    /// The smallest present value; NULL for none.
    case min
    /// The largest present value; NULL for none.
    case max
    /// The mean of the present values; NULL for none.
    case average
}

/// Why an aggregate could not be computed.
public enum AggregateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The sum of an integer field does not fit in an `Int64`.
    case overflow(entity: String, field: String)

    /// What went wrong, and what to do instead.
    public var description: String {
        switch self {
        case .overflow(let entity, let field):
            "the sum of \(entity).\(field) does not fit in an Int64: "
                + "sum fewer rows (filter or limit the request), or sum the field as a Double"
        }
    }
}

/// One number (or value) computed over the records a request matches: a count, sum, minimum,
/// maximum or average, run by ``ReadContext/fetch(_:)-(AggregateRequest<Target,Value>)`` and observed
/// with ``Store/observe(_:)-(AggregateRequest<Target,Value>)``.
///
/// ```swift
/// let request = Trip.request().filter { $0.travellers >= 2 }
/// let (trips, seconds, latest) = try await store.performQuery { context in
///     (
///         try context.fetch(request.countAll()),
///         try context.fetch(request.sum { $0.totalSeconds }),
///         try context.fetch(request.max { $0.startsOn })
///     )
/// }
/// ```
///
/// The result follows the field's type: a sum of integers is an `Int64` (never wrapping), a
/// minimum or maximum is the field's type, `nil` when no record has a value, and an average is a
/// `Double` (a `Decimal` for a decimal field). A request's limit and offset apply first.
///
/// SQLite has no decimal arithmetic, so a decimal field's sum, average, minimum and maximum are
/// computed exactly by the store from the stored decimal text, one row at a time.
public struct AggregateRequest<Target: Record, Value: ColumnValue & Hashable>: Sendable, Hashable {
    /// The records summarised.
    public let request: FetchRequest<Target>
    let function: AggregateFunction
    /// The field summarised; `nil` for a count of records.
    let path: ColumnPath?
    /// Whether the field is a decimal, summarised exactly from its text.
    let isDecimal: Bool
    /// Whether the field is a `Double` or `Float`, whose sum or average may be NaN (SQLite's
    /// NULL), which costs a second pass; integers never are.
    var isFloating = false

    /// The aggregate computed for each group of records with equal `keys`, in the order of the
    /// keys (missing values first).
    ///
    /// ```swift
    /// let perOwner = try await store.performQuery { context in
    ///     try context.fetch(Trip.request().sum { $0.travellers }.grouped { ($0.owner.username, $0.priority) })
    /// }
    /// for group in perOwner { print(group.keys.0, group.keys.1, group.value) }
    /// ```
    public func grouped<each Key: ColumnValue>(
        by keys: (Target.Fields) -> (repeat Field<each Key>)
    ) -> GroupedAggregateRequest<Target, repeat each Key, Value> {
        var paths: [ColumnPath] = []
        for field in repeat each keys(Target.Fields(path: .root)) { paths.append(field.path) }
        return GroupedAggregateRequest(aggregate: self, keys: paths)
    }
}

/// An aggregate computed per group of records with equal key fields (see
/// ``AggregateRequest/grouped(by:)``).
public struct GroupedAggregateRequest<Target: Record, each Key: ColumnValue, Value: ColumnValue & Hashable>: Sendable {
    /// The aggregate computed in each group.
    public let aggregate: AggregateRequest<Target, Value>
    /// The fields whose values make a group.
    public let keys: [ColumnPath]
}

/// The result of a grouped aggregate for one group.
public struct AggregateGroup<each Key, Value> {
    /// The group's key values, in the order of the fields grouped by.
    public let keys: (repeat each Key)
    /// The aggregate over the group's records.
    public let value: Value
}

extension AggregateGroup: Sendable where repeat each Key: Sendable, Value: Sendable {}

extension AggregateGroup where repeat each Key: ColumnValue, Value: ColumnValue {
    /// The groups of an aggregate's rows: each row's key values, then its aggregate. A missing key
    /// for a key type that is not optional is refused, naming the field and the fix.
    static func decode<Target: Record>(
        _ rows: [[SQLValue]], _ grouped: GroupedAggregateRequest<Target, repeat each Key, Value>
    ) throws -> [AggregateGroup<repeat each Key, Value>] {
        try rows.map { row in
            var index = 0
            func next<Decoded: ColumnValue>(_ type: Decoded.Type) throws -> Decoded {
                defer { index += 1 }
                do {
                    return try Decoded(sqlValue: row[index])
                } catch let error as ColumnValueError {
                    let field = grouped.keys[index].keyPath
                    let fix = row[index] == .null ? "; group by `$0.\(field).orNil` to have them as a group of nil" : ""
                    throw StoreError.invalidValue(
                        entity: Target.entityName,
                        message: "some records have no value for the group key '\(field)' (\(error.message))\(fix)")
                }
            }
            let keys = (repeat try next((each Key).self))
            return AggregateGroup(keys: (repeat each keys), value: try Value(sqlValue: row[index]))
        }
    }
}

extension Field {
    /// This field as optional: a group key reached through a to-one relationship that may be
    /// empty, `grouped { $0.owner.organization.name.orNil }`, where the records without one make a
    /// group of `nil`.
    public var orNil: Field<Value?> { Field<Value?>(path: path) }
}

extension FetchRequest {
    /// The number of records the request matches, as an aggregate that can be grouped and observed.
    public func countAll() -> AggregateRequest<Target, Int> {
        AggregateRequest(request: self, function: .count, path: nil, isDecimal: false)
    }

    /// The number of records whose `field` has a value.
    public func count<Operand: AggregateOperand>(
        _ field: (Target.Fields) -> Field<Operand>
    ) -> AggregateRequest<Target, Int> {
        aggregate(.count, field)
    }

    /// The sum of `field` over the records (0 for none; a missing value counts as nothing).
    public func sum<Operand: AggregateOperand>(
        _ field: (Target.Fields) -> Field<Operand>
    ) -> AggregateRequest<Target, Operand.Base.Sum> where Operand.Base: SummableValue {
        aggregate(.sum, field)
    }

    /// The mean of `field`'s present values; `nil` when no record has one.
    public func average<Operand: AggregateOperand>(
        _ field: (Target.Fields) -> Field<Operand>
    ) -> AggregateRequest<Target, Operand.Base.Mean?> where Operand.Base: SummableValue {
        aggregate(.average, field)
    }

    /// The smallest value of `field`; `nil` when no record has one. Text compares by its bytes
    /// (UTF-8), as the store sorts it.
    public func min<Operand: AggregateOperand>(
        _ field: (Target.Fields) -> Field<Operand>
    ) -> AggregateRequest<Target, Operand.Base?> {
        aggregate(.min, field)
    }

    /// The largest value of `field`; `nil` when no record has one.
    public func max<Operand: AggregateOperand>(
        _ field: (Target.Fields) -> Field<Operand>
    ) -> AggregateRequest<Target, Operand.Base?> {
        aggregate(.max, field)
    }

    private func aggregate<Operand: AggregateOperand, Result>(
        _ function: AggregateFunction, _ field: (Target.Fields) -> Field<Operand>
    ) -> AggregateRequest<Target, Result> {
        AggregateRequest(
            request: self, function: function, path: field(Target.Fields(path: .root)).path,
            isDecimal: Operand.Base.self == Decimal.self,
            isFloating: Operand.Base.self == Double.self || Operand.Base.self == Float.self)
    }
}

extension ReadContext {
    /// The aggregate's value over the records its request matches.
    public func fetch<Target: Record, Value>(_ aggregate: AggregateRequest<Target, Value>) throws -> Value {
        let rows = try aggregateRows(aggregate, keys: [])
        return try Value(sqlValue: rows.first?.last ?? .null)
    }

    /// The aggregate's value for each group of records with equal keys, in the order of the keys.
    public func fetch<Target: Record, each Key: ColumnValue, Value>(
        _ grouped: GroupedAggregateRequest<Target, repeat each Key, Value>
    ) throws -> [AggregateGroup<repeat each Key, Value>] {
        try AggregateGroup.decode(try aggregateRows(grouped.aggregate, keys: grouped.keys), grouped)
    }

    /// The rows of an aggregate: each group's key values, then the aggregate, as stored values.
    /// Decimals are summarised here, exactly, from the rows of the group in key order.
    func aggregateRows<Target: Record, Value>(
        _ aggregate: AggregateRequest<Target, Value>, keys: [ColumnPath]
    ) throws -> [[SQLValue]] {
        do {
            return try aggregateRows(aggregate, keys: keys, summingHere: false)
        } catch AggregateError.overflow where aggregate.function == .sum && !aggregate.isDecimal {
            // SQLite's SUM fails as soon as a running total leaves Int64, even when the total
            // fits again ([Int64.max, 1, -1]): sum the rows here, wide, and check only the total.
            return try aggregateRows(aggregate, keys: keys, summingHere: true)
        }
    }

    /// The rows of an aggregate, summarised by the store's SQL or, for decimals and when
    /// `summingHere`, from the rows of each group in key order by a ``ValueReducer``.
    private func aggregateRows<Target: Record, Value>(
        _ aggregate: AggregateRequest<Target, Value>, keys: [ColumnPath], summingHere: Bool
    ) throws -> [[SQLValue]] {
        let entity = try layout.entity(Target.entityName)
        let renderer = SQLPredicateRenderer(layout: layout, dialect: connection.dialect)
        var columns: [String] = []
        // The names the groups are ordered by: each key, after its numeric value when the key
        // is a decimal (stored as text, so "10" would sort before "9"), as a sort by it orders.
        var orderNames: [String] = []
        for (index, key) in keys.enumerated() {
            let text = try renderer.value(at: key, entity: entity, alias: "t0", numeric: false)
            let number = try renderer.value(at: key, entity: entity, alias: "t0", numeric: true)
            columns.append(text + " AS k\(index)")
            if number != text {
                columns.append(number + " AS o\(index)")
                orderNames.append("o\(index)")
            }
            orderNames.append("k\(index)")
        }
        let operand = try aggregate.path.map { try renderer.value(at: $0, entity: entity, alias: "t0", numeric: false) }
        columns.append((operand ?? "1") + " AS v")
        var request = aggregate.request
        let isLimited = request.fetchLimit != nil || request.fetchOffset > 0
        // Which rows a limit keeps depends on the order; without one, the order is irrelevant.
        if !isLimited { request.sortKeys = [] }
        let (inner, arguments) = try select(
            columns.joined(separator: ", "), request, entity: entity, defaultSort: isLimited)
        let keyNames = keys.indices.map { "k\($0)" }
        let exactly = (aggregate.isDecimal && aggregate.function != .count) || summingHere
        let dialect = connection.dialect
        var sql: String
        if exactly {
            sql = dialect.grouped(keyNames + ["v"], from: inner, by: [])
            if !orderNames.isEmpty { sql += " ORDER BY " + orderNames.joined(separator: ", ") }
        } else {
            // SQLite turns a NaN result (inf + -inf) into NULL: the count of present values and,
            // for a sum, the sum before COALESCE tell a NaN from no values.
            // Only a floating-point field can give NaN: the extra columns cost SQLite a second
            // sum (2.4 times hand-written SQL for an integer sum), so integers go without.
            var extra: [String] = []
            switch aggregate.function {
            case .sum where aggregate.isFloating: extra = ["COUNT(v)", "SUM(v)"]
            case .average where aggregate.isFloating: extra = ["COUNT(v)", "AVG(v)"]
            case .sum, .average, .count, .min, .max: break
            }
            sql = dialect.grouped(
                keyNames + [dialect.aggregate(aggregate.function, of: "v")] + extra, from: inner, by: orderNames)
        }
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        for (index, argument) in arguments.enumerated() {
            statement.bind(argument, Int32(index + 1))
        }
        let width = Int32(keys.count + 1)
        var rows: [[SQLValue]] = []
        let reducerFor = { ValueReducer(function: aggregate.function, integers: summingHere) }
        var reducer = reducerFor()
        var groupKeys: [SQLValue]?
        while try stepAggregate(statement, aggregate, entity: entity) {
            var row = (0..<width).map { statement.value($0) }
            guard exactly else {
                if aggregate.isFloating, aggregate.function == .sum || aggregate.function == .average,
                    case .integer(let present) = statement.value(width), present > 0,
                    statement.value(width + 1) == .null
                {
                    row[row.count - 1] = .real(.nan)
                }
                rows.append(row)
                continue
            }
            let rowKeys = Array(row.dropLast())
            if let current = groupKeys, current != rowKeys {
                rows.append(current + [try reducer.result(entity: entity, aggregate.path)])
                reducer = reducerFor()
            }
            groupKeys = rowKeys
            if let last = row.last, last != .null {
                do {
                    try reducer.add(last)
                } catch let error as ColumnValueError {
                    throw StoreError.invalidValue(entity: entity.name, message: error.message)
                }
            }
        }
        if exactly, keys.isEmpty || groupKeys != nil {
            rows.append((groupKeys ?? []) + [try reducer.result(entity: entity, aggregate.path)])
        }
        return rows
    }

    /// Steps an aggregate's statement, naming the field whose integer sum overflowed.
    private func stepAggregate<Target: Record, Value>(
        _ statement: any DatabaseStatement, _ aggregate: AggregateRequest<Target, Value>, entity: EntityLayout
    ) throws -> Bool {
        do {
            return try statement.step()
        } catch let error as SQLiteError where error.message.contains("integer overflow") {
            throw AggregateError.overflow(entity: entity.name, field: aggregate.path?.keyPath ?? "")
        }
    }
}

/// Sums, averages and extremes of decimals, exactly: SQLite has no decimal arithmetic (it would
/// add them as doubles), so the store adds the stored decimal text itself. With `integers`, a
/// sum of integers in 128 bits, so that only a total beyond `Int64` overflows.
private struct ValueReducer {
    let function: AggregateFunction
    let integers: Bool
    private var total = Decimal.zero
    private var count = 0
    private var extreme: Decimal?
    private var high: Int64 = 0
    private var low: UInt64 = 0

    init(function: AggregateFunction, integers: Bool) {
        self.function = function
        self.integers = integers
    }

    mutating func add(_ value: SQLValue) throws {
        guard integers else { return add(try Decimal(sqlValue: value)) }
        guard case .integer(let integer) = value else {
            throw ColumnValueError(message: "expected an integer to sum, found \(value)")
        }
        count += 1
        let (sum, carry) = low.addingReportingOverflow(UInt64(bitPattern: integer))
        low = sum
        high &+= (integer < 0 ? -1 : 0) &+ (carry ? 1 : 0)
    }

    private mutating func add(_ value: Decimal) {
        count += 1
        total += value
        switch function {
        case .min: extreme = extreme.map { Swift.min($0, value) } ?? value
        case .max: extreme = extreme.map { Swift.max($0, value) } ?? value
        default: break
        }
    }

    /// The result as the store would have returned it: decimal text (an integer for a wide
    /// integer sum, which throws when the total does not fit), or NULL for none.
    func result(entity: EntityLayout, _ path: ColumnPath?) throws -> SQLValue {
        if integers {
            let total = Int64(bitPattern: low)
            guard high == (total < 0 ? -1 : 0) else {
                throw AggregateError.overflow(entity: entity.name, field: path?.keyPath ?? "")
            }
            return .integer(total)
        }
        return switch function {
        case .count: .integer(Int64(count))
        case .sum: try total.sqlValue
        case .average: count == 0 ? .null : try (total / Decimal(count)).sqlValue
        case .min, .max: try extreme?.sqlValue ?? .null
        }
    }
}

extension Store {
    /// The aggregate's value now, then again after every commit that changes it: a commit that
    /// writes no column the aggregate reads (its field, its request's filter and sort) wakes
    /// nothing, and a value equal to the last one delivered is not delivered again.
    ///
    /// ```swift
    /// for try await total in store.observe(Trip.request().sum { $0.travellers }) {
    ///     print("travellers:", total)
    /// }
    /// ```
    public func observe<Target: Record, Value>(
        _ aggregate: AggregateRequest<Target, Value>
    ) -> AsyncThrowingStream<Value, Error> {
        observeAggregate(aggregate, keys: []) { rows in try Value(sqlValue: rows.first?.last ?? .null) }
    }

    /// The aggregate's value for each group now, then again after every commit that changes them.
    public func observe<Target: Record, each Key: ColumnValue, Value>(
        _ grouped: GroupedAggregateRequest<Target, repeat each Key, Value>
    ) -> AsyncThrowingStream<[AggregateGroup<repeat each Key, Value>], Error> {
        observeAggregate(grouped.aggregate, keys: grouped.keys) { rows in try AggregateGroup.decode(rows, grouped) }
    }

    /// Whether two results of an aggregate hold the same values: as `==`, except that NaN equals
    /// NaN, so an average or sum that is NaN is not delivered again after every commit.
    private static func sameRows(_ left: [[SQLValue]], _ right: [[SQLValue]]) -> Bool {
        guard left.count == right.count else { return false }
        for (leftRow, rightRow) in zip(left, right) {
            guard leftRow.count == rightRow.count else { return false }
            for (leftValue, rightValue) in zip(leftRow, rightRow) where leftValue != rightValue {
                guard case .real(let a) = leftValue, case .real(let b) = rightValue, a.isNaN, b.isNaN else {
                    return false
                }
            }
        }
        return true
    }

    /// Re-runs an aggregate after each relevant commit and yields its decoded rows when they differ
    /// from the last ones yielded.
    private func observeAggregate<Target: Record, Value, Element: Sendable>(
        _ aggregate: AggregateRequest<Target, Value>,
        keys: [ColumnPath],
        decode: @escaping @Sendable ([[SQLValue]]) throws -> Element
    ) -> AsyncThrowingStream<Element, Error> {
        observedValues(
            of: aggregate.request, extraKeys: keys + (aggregate.path.map { [$0] } ?? []),
            read: { try $0.aggregateRows(aggregate, keys: keys) }, isSame: Self.sameRows, deliver: decode)
    }
}
