/// A condition's shape and values, taken apart so a store can render SQL once per shape and
/// bind new values each time (rendering showed up in profiles of small indexed fetches).
///
/// Both functions follow ``SQLPredicateRenderer``'s order of parameters exactly; the query tests
/// run every operator through the cached path after the first, rendered, one.
enum QueryShape {
    /// The condition with every value replaced by a placeholder that renders the same SQL: a
    /// missing value stays missing (it renders `IS NULL`), every other value becomes 0.
    static func shape(_ condition: Condition) -> Condition {
        switch condition {
        case .constant: condition
        case .comparison(let path, let comparison, let value): .comparison(path, comparison, placeholder(value))
        case .inList(let path, let values): .inList(path, values.map(placeholder))
        case .between(let path, _, _): .between(path, .integer(0), .integer(0))
        case .string(let path, let operation, _, let options): .string(path, operation, "", options)
        case .not(let operand): .not(shape(operand))
        case .and(let operands): .and(operands.map(shape))
        case .or(let operands): .or(operands.map(shape))
        case .quantified(let path, let quantifier, let operand): .quantified(path, quantifier, shape(operand))
        case .count(let path, let comparison, _): .count(path, comparison, 0)
        }
    }

    /// The condition's parameter values, in the order the rendered SQL binds them.
    static func collectArguments(of condition: Condition, into arguments: inout [SQLValue]) {
        switch condition {
        case .constant: break
        case .comparison(_, _, let value): if value != .null { arguments.append(value) }
        case .inList(_, let values): arguments += values.filter { $0 != .null }
        case .between(_, let lower, let upper): arguments += [lower, upper]
        case .string(_, _, let needle, _): arguments.append(.text(needle))
        case .not(let operand): collectArguments(of: operand, into: &arguments)
        case .and(let operands), .or(let operands):
            for operand in operands { collectArguments(of: operand, into: &arguments) }
        case .quantified(_, _, let operand): collectArguments(of: operand, into: &arguments)
        case .count(_, _, let number): arguments.append(.integer(Int64(number)))
        }
    }

    private static func placeholder(_ value: SQLValue) -> SQLValue {
        value == .null ? .null : .integer(0)
    }
}

/// What the SQL of a select depends on: everything in a request but its values.
struct SelectShape: Hashable {
    let columns: String
    let entity: String
    let condition: Condition?
    let sortKeys: [SortKey]
    let scope: [String]?
    let isLimited: Bool
    let defaultSort: Bool
}
