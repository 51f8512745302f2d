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
    /// `lower <= column <= upper`.
    case between(ColumnPath, SQLValue, SQLValue)
    /// A string test, with case and diacritic folding options.
    case string(ColumnPath, StringOperation, String, StringComparisonOptions)
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

/// How a column compares with a value.
public enum ComparisonOperator: String, Sendable, Hashable {
    /// Equal (`==`).
    case equal = "=="
    /// Not equal (`!=`).
    case notEqual = "!="
    /// Less than.
    case less = "<"
    /// Less than or equal.
    case lessOrEqual = "<="
    /// Greater than.
    case greater = ">"
    /// Greater than or equal.
    case greaterOrEqual = ">="
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
