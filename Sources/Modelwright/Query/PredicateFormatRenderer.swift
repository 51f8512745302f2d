// Renders a `Condition` as an `NSPredicate` format string and its arguments, for apps that keep
// a Core Data store beside (or instead of) a Modelwright store.
//
// Missing values. `Condition` promises: a comparison with a missing (nil) value is false, except
// `!=`, which is true when exactly one side is missing; `NOT` inverts whatever its operand gives;
// a string test on a missing value is false. `NSPredicate` evaluated in memory (`evaluate(with:)`,
// `NSArray.filtered(using:)`) agrees for `==`, `!=`, string tests and `NOT`, so the rendering is
// direct: `==` and `!=` with `.null` become `%K == nil` and `%K != nil`. Ordering comparisons
// with `.null` render as `FALSEPREDICATE`, the documented result, rather than leave `%K <= nil` to
// `NSPredicate`'s own ordering of nil.
// A Core Data fetch from an SQLite store does NOT agree: Core Data translates the predicate to SQL,
// where `name != %@` and `NOT (name == %@)` drop the rows whose `name` is nil. Callers that need
// those rows from a fetch must add `OR %K == nil` themselves.

/// An `NSPredicate` format string with the arguments for its `%K` and `%@` placeholders, in order.
///
/// Keys and values never appear in ``format`` itself: each one is an argument, so a value
/// holding `'`, `%` or `AND` cannot change the predicate's meaning.
///
/// ```swift
/// let condition = Condition.comparison(ColumnPath(column: "rating"), .greaterOrEqual, .integer(3))
/// let rendered = PredicateFormatRenderer.render(condition)
/// // rendered.format == "%K >= %@"
/// // rendered.arguments == [.keyPath("rating"), .value(.integer(3))]
/// let predicate = NSPredicate(format: rendered.format, argumentArray: rendered.arguments.map(foundationObject))
/// ```
///
/// `foundationObject` is the app's own conversion: a ``SQLValue`` is the stored form, so a
/// `Date` arrives as `.real` seconds since 2001-01-01, a `UUID` as a 16-byte `.blob` and a
/// `Decimal` as `.text`; convert them back to the Core Data attribute's type.
///
/// ## Topics
///
/// ### Contents
/// - ``format``
/// - ``arguments``
public struct PredicateFormat: Sendable, Hashable {
    /// The format text, with `%K` for each key path and `%@` for each value.
    public let format: String
    /// One argument per placeholder of ``format``, in the order the placeholders appear.
    public let arguments: [PredicateArgument]
}

/// What one placeholder of a ``PredicateFormat`` stands for.
///
/// ```swift
/// // "%K IN %@"
/// [PredicateArgument.keyPath("status"), .list([.text("open"), .text("held")])]
/// ```
///
/// ## Topics
///
/// ### Cases
/// - ``keyPath(_:)``
/// - ``value(_:)``
/// - ``list(_:)``
public enum PredicateArgument: Sendable, Hashable {
    /// A key path, dotted for to-one hops (`organization.name`), for a `%K`.
    case keyPath(String)
    /// A value, for a `%@`.
    case value(SQLValue)
    /// An array of values, for the `%@` of `IN` and of `BETWEEN` (`[lower, upper]`).
    case list([SQLValue])
}

/// Turns a ``Condition`` into an `NSPredicate` format string and its arguments.
///
/// ```swift
/// let rating: Field<Int16> = FieldPath.root.field("rating")
/// let title: Field<String> = FieldPath.root.field("title")
/// let rendered = PredicateFormatRenderer.render(rating >= 3 && !title.hasPrefix("a", caseInsensitive: true))
/// // rendered.format == "(%K >= %@) AND (NOT (%K BEGINSWITH[c] %@))"
/// // rendered.arguments == [.keyPath("rating"), .value(.integer(3)), .keyPath("title"), .value(.text("a"))]
/// ```
///
/// - Compound conditions put each operand in parentheses: `(a) AND (b)`, `NOT (a)`. An empty
///   `AND` is `TRUEPREDICATE`, an empty `OR` is `FALSEPREDICATE`, and one operand renders alone.
/// - String tests use `BEGINSWITH`, `ENDSWITH`, `CONTAINS`, `LIKE` (the same `*` and `?`
///   wildcards) and `==`, with `[c]`, `[d]` or `[cd]` for the folding options.
/// - A quantifier over a to-many relationship is a `SUBQUERY` whose variable is `$x`, `$y`, `$z`,
///   then `$x4`, `$x5`… by nesting depth: `any` is `SUBQUERY(%K, $x, …).@count > 0`, `none` is
///   `… == 0`, and `all` is `SUBQUERY(%K, $x, NOT (…)).@count == 0`. Inside it, the
///   destination's key paths read `$x.%K`.
/// - A relationship count is `%K.@count <op> %@`.
///
/// ## Topics
///
/// ### Rendering
/// - ``render(_:)``
public enum PredicateFormatRenderer {
    /// The format string and arguments for `condition`.
    ///
    /// A condition with a full-text search anywhere in it renders as `FALSEPREDICATE` whole:
    /// `NSPredicate` has no full-text search, and no stand-in for the search alone keeps its
    /// meaning under `NOT` (`NOT (FALSEPREDICATE)` would select every row, the searched ones too).
    /// A fetch then finds nothing rather than rows the store would not return.
    public static func render(_ condition: Condition) -> PredicateFormat {
        var writer = FormatWriter()
        let format = condition.accept(&writer, in: 0)
        guard !writer.hasSearch else { return PredicateFormat(format: "FALSEPREDICATE", arguments: []) }
        return PredicateFormat(format: format, arguments: writer.arguments)
    }
}

/// Writes format text while collecting the arguments in the order their placeholders appear. Its
/// scope is the subquery depth: key paths start at the request's own entity at depth 0, and at the
/// subquery variable of the depth inside a quantifier. Not private: each kind of node's file
/// (`Condition+Between.swift`) extends it with the kind's format.
struct FormatWriter: ConditionVisitor {
    typealias Output = String
    typealias Scope = Int
    typealias Frame = String
    typealias Failure = Never

    private(set) var arguments: [PredicateArgument] = []
    /// Whether the condition holds a full-text search, which makes the whole of it
    /// `FALSEPREDICATE` (see ``PredicateFormatRenderer/render(_:)``).
    private(set) var hasSearch = false

    mutating func constant(_ value: Bool, in depth: Int) -> String {
        value ? "TRUEPREDICATE" : "FALSEPREDICATE"
    }

    mutating func comparison(
        _ path: ColumnPath, _ comparison: ComparisonOperator, _ value: SQLValue, in depth: Int
    ) -> String {
        guard value == .null else {
            let column = key(Self.keyPath(of: path), depth: depth)
            return "\(column) \(comparison.predicateSymbol) \(placeholder(.value(value)))"
        }
        switch comparison {
        case .equal, .notEqual:
            let column = key(Self.keyPath(of: path), depth: depth)
            return "\(column) \(comparison.predicateSymbol) nil"
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            return "FALSEPREDICATE"
        }
    }

    mutating func inList(_ path: ColumnPath, _ values: [SQLValue], in depth: Int) -> String {
        let column = key(Self.keyPath(of: path), depth: depth)
        return "\(column) IN \(placeholder(.list(values)))"
    }

    mutating func string(
        _ path: ColumnPath, _ operation: StringOperation, _ needle: String, _ options: StringComparisonOptions,
        in depth: Int
    ) -> String {
        let column = key(Self.keyPath(of: path), depth: depth)
        return "\(column) \(operation.predicateKeyword)\(Self.suffix(options)) \(placeholder(.value(.text(needle))))"
    }

    /// `NSPredicate` has no full-text search (Core Data's is Spotlight's, outside the predicate):
    /// the search is noted, and the whole condition renders as `FALSEPREDICATE`.
    mutating func search(_ path: ColumnPath, _ query: SearchQuery, in depth: Int) -> String {
        hasSearch = true
        return "FALSEPREDICATE"
    }

    mutating func count(
        _ path: RelationshipPath, _ comparison: ComparisonOperator, _ number: Int, in depth: Int
    ) -> String {
        let column = key(path.keyPath, depth: depth)
        return "\(column).@count \(comparison.predicateSymbol) \(placeholder(.value(.integer(Int64(number)))))"
    }

    mutating func not(_ operand: String, in depth: Int) -> String {
        "NOT (\(operand))"
    }

    mutating func and(_ operands: [String], in depth: Int) -> String {
        join(operands, with: "AND", empty: "TRUEPREDICATE")
    }

    mutating func or(_ operands: [String], in depth: Int) -> String {
        join(operands, with: "OR", empty: "FALSEPREDICATE")
    }

    /// The collection's `%K` comes before every placeholder of the subquery's condition.
    mutating func enter(_ path: RelationshipPath, in depth: Int) -> (scope: Int, frame: String) {
        (depth + 1, key(path.keyPath, depth: depth))
    }

    mutating func quantified(_ quantifier: Quantifier, _ test: String, frame collection: String, in depth: Int)
        -> String
    {
        let variable = Self.variable(depth: depth + 1)
        switch quantifier {
        case .any: return "SUBQUERY(\(collection), \(variable), \(test)).@count > 0"
        case .all: return "SUBQUERY(\(collection), \(variable), NOT (\(test))).@count == 0"
        case .none: return "SUBQUERY(\(collection), \(variable), \(test)).@count == 0"
        }
    }

    /// One operand alone; several each in parentheses.
    private func join(_ operands: [String], with keyword: String, empty: String) -> String {
        guard operands.count > 1 else { return operands.first ?? empty }
        return operands.map { "(\($0))" }.joined(separator: " \(keyword) ")
    }

    /// The key path of a column. A record's ID is the object itself in Core Data: `self` on the
    /// request's entity, and the relationship's own key path through hops (`owner.id` is `owner`).
    static func keyPath(of path: ColumnPath) -> String {
        guard path.column == "id" else { return path.keyPath }
        return path.hops.isEmpty ? "self" : path.hops.joined(separator: ".")
    }

    /// `%K`, or `$x.%K` inside a subquery: the variable is format text, never an argument.
    mutating func key(_ keyPath: String, depth: Int) -> String {
        let marker = placeholder(.keyPath(keyPath))
        return depth == 0 ? marker : "\(Self.variable(depth: depth)).\(marker)"
    }

    /// Appends `argument` and returns its marker: `%K` for a key path, `%@` for a value.
    mutating func placeholder(_ argument: PredicateArgument) -> String {
        arguments.append(argument)
        if case .keyPath = argument { return "%K" }
        return "%@"
    }

    /// `$x`, `$y`, `$z`, then `$x4`, `$x5`…, so a nested subquery never shadows its outer one.
    private static func variable(depth: Int) -> String {
        let letters = ["x", "y", "z"]
        return depth <= letters.count ? "$\(letters[depth - 1])" : "$x\(depth)"
    }

    private static func suffix(_ options: StringComparisonOptions) -> String {
        var flags = ""
        if options.contains(.caseInsensitive) { flags += "c" }
        if options.contains(.diacriticInsensitive) { flags += "d" }
        return flags.isEmpty ? "" : "[\(flags)]"
    }
}
