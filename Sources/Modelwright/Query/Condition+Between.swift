// `between`, a kind of condition node, in one place: its typed spelling on fields, its SQL (what it
// renders and the values it binds) and its `NSPredicate` format. `Condition.swift` holds the rest
// of it, as of every kind: the case, its `ConditionVisitor` requirement and its line in `accept`,
// its forwarding in `UniformLeafVisitor`, its `testedPath` and `replacingValues`. A new kind of
// node is those lines and a file like this one (see <doc:Contributing>).

extension Field where Value: ColumnValue & Comparable {
    /// `lower <= field <= upper`.
    public func between(_ lower: Value, _ upper: Value) -> Condition {
        range(path, lower, upper)
    }
}

extension Field where Value: OptionalField, Value.Wrapped: ColumnValue & Comparable {
    /// `lower <= field <= upper`; a missing value is in no range.
    public func between(_ lower: Value.Wrapped, _ upper: Value.Wrapped) -> Condition {
        range(path, lower, upper)
    }
}

/// `lower <= column <= upper`; a bound that cannot be stored (NaN) matches nothing.
private func range<Value: ColumnValue>(_ path: ColumnPath, _ lower: Value, _ upper: Value) -> Condition {
    guard let lower = try? lower.sqlValue, let upper = try? upper.sqlValue else { return .constant(false) }
    return .between(path, lower, upper)
}

extension SQLPredicateRenderer {
    /// `column BETWEEN ? AND ?`, numeric for a decimal column.
    mutating func between(
        _ path: ColumnPath, _ lower: SQLValue, _ upper: SQLValue, in scope: SQLScope
    ) throws -> String {
        try atColumn(path, in: scope) { renderer, column, isDecimal, isText in
            let low = renderer.parameter(lower, isDecimal: isDecimal)
            let high = renderer.parameter(upper, isDecimal: isDecimal)
            let value = ConditionSQL.compared(column, isDecimal: isDecimal, isText: isText, in: renderer.dialect)
            return ConditionSQL.between(value, low, high)
        }
    }
}

extension SQLArgumentCollector {
    /// Both bounds, in the order the renderer places them.
    mutating func between(_ path: ColumnPath, _ lower: SQLValue, _ upper: SQLValue, in scope: Void) {
        collect(lower, upper)
    }
}

extension ConditionSQL {
    /// `lhs BETWEEN low AND high`.
    static func between(_ lhs: String, _ low: String, _ high: String) -> String {
        "\(lhs) BETWEEN \(low) AND \(high)"
    }
}

extension FormatWriter {
    /// `%K BETWEEN %@`, the bounds as one list argument.
    mutating func between(_ path: ColumnPath, _ lower: SQLValue, _ upper: SQLValue, in depth: Int) -> String {
        let column = key(Self.keyPath(of: path), depth: depth)
        return "\(column) BETWEEN \(placeholder(.list([lower, upper])))"
    }
}
