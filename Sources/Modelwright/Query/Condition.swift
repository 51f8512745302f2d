/// A predicate as a tree of conditions: what a request's `filter` builds, and what both
/// renderers read (`SQLPredicateRenderer` for the store, ``PredicateFormatRenderer`` for
/// `NSPredicate`).
///
/// You rarely build one by hand: the typed fields of a record do it.
///
/// ```swift
/// let request = User.request().filter { $0.rating >= 3 && $0.familyName.hasPrefix("I", caseInsensitive: true) }
/// ```
///
/// **Missing values** are treated the same by both renderers: a comparison with a missing
/// (nil) value is false, except `!=`, which is true when exactly one side is missing; `NOT`
/// inverts whatever its operand gives. A string test on a missing value is false.
public indirect enum Condition: Sendable, Hashable {
    /// Always true or always false (an `IN` with an empty list is `false`).
    case constant(Bool)
    /// `column <op> value`; `==` and `!=` with `.null` test for a missing value.
    case comparison(ColumnPath, ComparisonOperator, SQLValue)
    /// `column IN (values)`.
    case inList(ColumnPath, [SQLValue])
    /// `NOT (column IN (values))`: true when the column is missing, unless the list holds nil.
    case notInList(ColumnPath, [SQLValue])
    /// `lower <= column <= upper`.
    case between(ColumnPath, SQLValue, SQLValue)
    /// A string test, with case and diacritic folding options.
    case string(ColumnPath, StringOperation, String, StringComparisonOptions)
    /// A full-text search of a `@searchable` attribute (see ``SearchQuery``).
    case search(ColumnPath, SearchQuery)
    /// The operand's opposite.
    case not(Condition)
    /// All operands hold.
    case and([Condition])
    /// At least one operand holds.
    case or([Condition])
    /// A to-many relationship, reached through `path`'s to-one hops, has any, all or none of its
    /// destinations satisfying the condition (evaluated on the destination entity).
    case quantified(RelationshipPath, Quantifier, Condition)
    /// The number of destinations of a to-many relationship compared with a number.
    case count(RelationshipPath, ComparisonOperator, Int)

    /// Both conditions.
    public static func && (lhs: Condition, rhs: Condition) -> Condition {
        switch (lhs, rhs) {
        case (.and(let left), .and(let right)): .and(left + right)
        case (.and(let left), _): .and(left + [rhs])
        default: .and([lhs, rhs])
        }
    }

    /// Either condition.
    public static func || (lhs: Condition, rhs: Condition) -> Condition {
        switch (lhs, rhs) {
        case (.or(let left), .or(let right)): .or(left + right)
        case (.or(let left), _): .or(left + [rhs])
        default: .or([lhs, rhs])
        }
    }

    /// The opposite condition.
    public static prefix func ! (condition: Condition) -> Condition {
        .not(condition)
    }
}

/// How many destinations of a to-many relationship must satisfy a condition.
public enum Quantifier: String, Sendable, Hashable {
    /// At least one (`ANY`).
    case any
    /// Every one; true when there are none (`ALL`).
    case all
    /// Not one (`NONE`).
    case none
}

/// A column reached from the request's entity: to-one relationship hops, then a column name.
public struct ColumnPath: Sendable, Hashable {
    /// The to-one relationships followed, in order, from the request's entity.
    public var hops: [String]
    /// The column (attribute or to-one relationship) on the last entity reached.
    public var column: String

    /// Creates a path.
    public init(hops: [String] = [], column: String) {
        self.hops = hops
        self.column = column
    }

    /// The path as a dotted key, as `NSPredicate` writes it: `organization.name`.
    public var keyPath: String { (hops + [column]).joined(separator: ".") }
}

/// A to-many relationship reached from the request's entity through to-one hops.
public struct RelationshipPath: Sendable, Hashable {
    /// The to-one relationships followed first.
    public var hops: [String]
    /// The to-many relationship.
    public var relationship: String

    /// Creates a path.
    public init(hops: [String] = [], relationship: String) {
        self.hops = hops
        self.relationship = relationship
    }

    /// The path as a dotted key: `organization.members`.
    public var keyPath: String { (hops + [relationship]).joined(separator: ".") }
}

/// What a request's `filter` and a to-many relationship's `any`, `all` and `none` accept: a
/// ``Condition``, or a Boolean field, which stands for the condition that it is true.
public protocol ConditionConvertible {
    /// The condition this value stands for.
    var condition: Condition { get }
}

extension Condition: ConditionConvertible {
    /// The condition itself.
    public var condition: Condition { self }
}

// MARK: - One traversal

/// The one traversal of a ``Condition`` tree: every reader of a condition (the SQL renderer, the
/// `NSPredicate` renderer, the reads of a request, the shape of its SQL) implements this
/// protocol instead of walking the tree itself, so a new node kind is one case above, one
/// requirement here and one method in each renderer; the compiler lists the renderers. A kind's
/// methods of every renderer sit together in a file of its own, with its typed spelling on fields
/// (`Condition+Between.swift`), so a kind is this file and that one.
///
/// An operator whose meaning follows from others (`notInList` is `NOT` of `inList`) is a
/// *derived* operator: its requirement has a default, in an extension of this protocol, that
/// reads the condition it stands for, so every reader gets it without a line of its own, and one
/// that can say it better (a native spelling) implements the requirement. Readers that keep
/// values in the order they place them (the SQL renderer and `SQLArgumentCollector`) must then
/// agree, so override such a requirement in both or in neither.
///
/// The traversal is post-order, operands left to right: a renderer sees each operand's output
/// before the node's, in the order the operands appear, which is the order placeholders appear
/// in its text. A to-many quantifier is entered first (``enter(_:in:)`` gives the scope its
/// operand is read in, such as the destination entity or a subquery variable), then left
/// (``quantified(_:_:frame:in:)``) with the operand's output.
///
/// A reader that does not spell operators (the reads of a request, the shape of its SQL) is a
/// ``UniformLeafVisitor``: it implements one method for every leaf, so a new operator leaves it
/// untouched.
protocol ConditionVisitor {
    /// What the reader makes of a node: text, nothing, a new condition.
    associatedtype Output
    /// Where a node is read: the entity and alias of an SQL query, a subquery's depth.
    associatedtype Scope
    /// What a reader keeps from entering a quantifier until leaving it.
    associatedtype Frame
    /// The error a reader throws; `Never` for one that cannot fail.
    associatedtype Failure: Error

    /// Always true or always false.
    mutating func constant(_ value: Bool, in scope: Scope) throws(Failure) -> Output
    /// `column <op> value`.
    mutating func comparison(
        _ path: ColumnPath, _ comparison: ComparisonOperator, _ value: SQLValue, in scope: Scope
    ) throws(Failure) -> Output
    /// `column IN (values)`.
    mutating func inList(_ path: ColumnPath, _ values: [SQLValue], in scope: Scope) throws(Failure) -> Output
    /// `NOT (column IN (values))`; derived: by default read as that condition.
    mutating func notInList(_ path: ColumnPath, _ values: [SQLValue], in scope: Scope) throws(Failure) -> Output
    /// `lower <= column <= upper`.
    mutating func between(
        _ path: ColumnPath, _ lower: SQLValue, _ upper: SQLValue, in scope: Scope
    ) throws(Failure) -> Output
    /// A string test.
    mutating func string(
        _ path: ColumnPath, _ operation: StringOperation, _ needle: String, _ options: StringComparisonOptions,
        in scope: Scope
    ) throws(Failure) -> Output
    /// A full-text search of a `@searchable` attribute.
    mutating func search(_ path: ColumnPath, _ query: SearchQuery, in scope: Scope) throws(Failure) -> Output
    /// A relationship's count compared with a number.
    mutating func count(
        _ path: RelationshipPath, _ comparison: ComparisonOperator, _ number: Int, in scope: Scope
    ) throws(Failure) -> Output
    /// The opposite of `operand`.
    mutating func not(_ operand: Output, in scope: Scope) throws(Failure) -> Output
    /// All of `operands`.
    mutating func and(_ operands: [Output], in scope: Scope) throws(Failure) -> Output
    /// Any of `operands`.
    mutating func or(_ operands: [Output], in scope: Scope) throws(Failure) -> Output
    /// Enters the to-many relationship at `path`: the scope its quantifier's operand is read in.
    mutating func enter(_ path: RelationshipPath, in scope: Scope) throws(Failure) -> (scope: Scope, frame: Frame)
    /// Leaves a quantifier entered with `frame`, its operand read as `operand`.
    mutating func quantified(
        _ quantifier: Quantifier, _ operand: Output, frame: Frame, in scope: Scope
    ) throws(Failure) -> Output
}

// MARK: - Derived operators

extension ConditionVisitor {
    /// Reads `NOT (column IN (values))`, which is what the operator means; SQL's own `NOT IN`
    /// would be NULL, not true, for a missing value.
    mutating func notInList(_ path: ColumnPath, _ values: [SQLValue], in scope: Scope) throws(Failure) -> Output {
        try Condition.not(.inList(path, values)).accept(&self, in: scope)
    }
}

/// A reader that treats every leaf alike (the reads of a request, the shape of its SQL): each leaf
/// requirement of ``ConditionVisitor`` forwards to ``leaf(_:in:)``. A derived operator reaches it
/// as the leaves it stands for.
protocol UniformLeafVisitor: ConditionVisitor {
    /// Any leaf: a constant, a test on a column, a relationship count.
    mutating func leaf(_ leaf: Condition, in scope: Scope) throws(Failure) -> Output
}

extension UniformLeafVisitor {
    mutating func constant(_ value: Bool, in scope: Scope) throws(Failure) -> Output {
        try leaf(.constant(value), in: scope)
    }

    mutating func comparison(
        _ path: ColumnPath, _ comparison: ComparisonOperator, _ value: SQLValue, in scope: Scope
    ) throws(Failure) -> Output {
        try leaf(.comparison(path, comparison, value), in: scope)
    }

    mutating func inList(_ path: ColumnPath, _ values: [SQLValue], in scope: Scope) throws(Failure) -> Output {
        try leaf(.inList(path, values), in: scope)
    }

    mutating func between(
        _ path: ColumnPath, _ lower: SQLValue, _ upper: SQLValue, in scope: Scope
    ) throws(Failure) -> Output {
        try leaf(.between(path, lower, upper), in: scope)
    }

    mutating func string(
        _ path: ColumnPath, _ operation: StringOperation, _ needle: String, _ options: StringComparisonOptions,
        in scope: Scope
    ) throws(Failure) -> Output {
        try leaf(.string(path, operation, needle, options), in: scope)
    }

    mutating func search(_ path: ColumnPath, _ query: SearchQuery, in scope: Scope) throws(Failure) -> Output {
        try leaf(.search(path, query), in: scope)
    }

    mutating func count(
        _ path: RelationshipPath, _ comparison: ComparisonOperator, _ number: Int, in scope: Scope
    ) throws(Failure) -> Output {
        try leaf(.count(path, comparison, number), in: scope)
    }
}

extension Condition {
    /// Reads the condition with `visitor`, in `scope`: the one walk of the tree.
    func accept<Visitor: ConditionVisitor>(
        _ visitor: inout Visitor, in scope: Visitor.Scope
    ) throws(Visitor.Failure) -> Visitor.Output {
        switch self {
        case .constant(let value):
            return try visitor.constant(value, in: scope)
        case .comparison(let path, let comparison, let value):
            return try visitor.comparison(path, comparison, value, in: scope)
        case .inList(let path, let values):
            return try visitor.inList(path, values, in: scope)
        case .notInList(let path, let values):
            return try visitor.notInList(path, values, in: scope)
        case .between(let path, let lower, let upper):
            return try visitor.between(path, lower, upper, in: scope)
        case .string(let path, let operation, let needle, let options):
            return try visitor.string(path, operation, needle, options, in: scope)
        case .search(let path, let query):
            return try visitor.search(path, query, in: scope)
        case .count(let path, let comparison, let number):
            return try visitor.count(path, comparison, number, in: scope)
        case .not(let operand):
            let inner = try operand.accept(&visitor, in: scope)
            return try visitor.not(inner, in: scope)
        case .and(let operands):
            return try visitor.and(Self.accept(operands, &visitor, in: scope), in: scope)
        case .or(let operands):
            return try visitor.or(Self.accept(operands, &visitor, in: scope), in: scope)
        case .quantified(let path, let quantifier, let operand):
            let entered = try visitor.enter(path, in: scope)
            let inner = try operand.accept(&visitor, in: entered.scope)
            return try visitor.quantified(quantifier, inner, frame: entered.frame, in: scope)
        }
    }

    private static func accept<Visitor: ConditionVisitor>(
        _ operands: [Condition], _ visitor: inout Visitor, in scope: Visitor.Scope
    ) throws(Visitor.Failure) -> [Visitor.Output] {
        var outputs: [Visitor.Output] = []
        outputs.reserveCapacity(operands.count)
        for operand in operands { outputs.append(try operand.accept(&visitor, in: scope)) }
        return outputs
    }

    /// What a leaf tests, apart from its operator: a column, a to-many relationship, or nothing
    /// (a constant). Readers that follow paths (the reads of a request) need no more.
    var testedPath: TestedPath? {
        switch self {
        case .comparison(let path, _, _), .inList(let path, _), .notInList(let path, _), .between(let path, _, _),
            .string(let path, _, _, _), .search(let path, _):
            .column(path)
        case .count(let path, _, _): .relationship(path)
        case .constant, .not, .and, .or, .quantified: nil
        }
    }

    /// The leaf with every value it compares with replaced by `transform`'s: a string test's text
    /// and a count's number are passed as `.text` and `.integer` and read back from the same case
    /// (another case gives the empty string and 0). Composite nodes are returned unchanged.
    func replacingValues(_ transform: (SQLValue) -> SQLValue) -> Condition {
        switch self {
        case .constant, .not, .and, .or, .quantified: self
        // A search's query is bound as one text parameter: it becomes the query that matches nothing.
        case .search(let path, _): .search(path, SearchQuery(words: ""))
        case .comparison(let path, let comparison, let value): .comparison(path, comparison, transform(value))
        case .inList(let path, let values): .inList(path, values.map(transform))
        case .notInList(let path, let values): .notInList(path, values.map(transform))
        case .between(let path, let lower, let upper): .between(path, transform(lower), transform(upper))
        case .string(let path, let operation, let needle, let options):
            if case .text(let text) = transform(.text(needle)) {
                .string(path, operation, text, options)
            } else {
                .string(path, operation, "", options)
            }
        case .count(let path, let comparison, let number):
            if case .integer(let value) = transform(.integer(Int64(number))), let count = Int(exactly: value) {
                .count(path, comparison, count)
            } else {
                .count(path, comparison, 0)
            }
        }
    }
}

/// What a leaf condition tests: a column, or a to-many relationship (its count).
enum TestedPath: Hashable {
    /// A column reached through to-one hops.
    case column(ColumnPath)
    /// A to-many relationship reached through to-one hops.
    case relationship(RelationshipPath)
}
