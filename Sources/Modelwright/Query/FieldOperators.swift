// The comparison operators and tests that turn typed fields into conditions. Each takes a value
// of the field's own type, so comparing `rating` (Int16) with a String does not compile.

extension Field where Value: ColumnValue {
    /// The field holds `value`.
    public static func == (field: Field, value: Value) -> Condition {
        condition(field, .equal, value)
    }

    /// The field does not hold `value` (true when it is missing).
    public static func != (field: Field, value: Value) -> Condition {
        condition(field, .notEqual, value)
    }

    /// The field's value is one of `values`; an empty list matches nothing.
    public func `in`(_ values: some Sequence<Value>) -> Condition {
        membership(path, values)
    }

    /// The field's value is none of `values`; an empty list matches every value.
    ///
    /// ```swift
    /// let others = User.request().filter { $0.rating.notIn([4, 5]) }
    /// ```
    public func notIn(_ values: some Sequence<Value>) -> Condition {
        exclusion(path, values)
    }

    private static func condition(_ field: Field, _ comparison: ComparisonOperator, _ value: Value) -> Condition {
        compare(field.path, comparison, value)
    }
}

extension Field where Value: ColumnValue & Comparable {
    /// The field is less than `value`.
    public static func < (field: Field, value: Value) -> Condition {
        compare(field.path, .less, value)
    }

    /// The field is at most `value`.
    public static func <= (field: Field, value: Value) -> Condition {
        compare(field.path, .lessOrEqual, value)
    }

    /// The field is greater than `value`.
    public static func > (field: Field, value: Value) -> Condition {
        compare(field.path, .greater, value)
    }

    /// The field is at least `value`.
    public static func >= (field: Field, value: Value) -> Condition {
        compare(field.path, .greaterOrEqual, value)
    }
}

/// Optional fields compare with values of their wrapped type, and with `nil`.
public protocol OptionalField {
    /// The type inside the optional.
    associatedtype Wrapped
}

extension Optional: OptionalField {}

extension Field where Value: OptionalField, Value.Wrapped: ColumnValue {
    /// The field holds `value`.
    public static func == (field: Field, value: Value.Wrapped) -> Condition {
        compare(field.path, .equal, value)
    }

    /// The field does not hold `value` (true when it is missing).
    public static func != (field: Field, value: Value.Wrapped) -> Condition {
        compare(field.path, .notEqual, value)
    }

    /// The field's value is one of `values`; an empty list matches nothing, and a missing value none.
    public func `in`(_ values: some Sequence<Value.Wrapped>) -> Condition {
        membership(path, values)
    }

    /// The field's value is none of `values`: true when it is missing, as `!=` is; an empty list
    /// matches every row.
    public func notIn(_ values: some Sequence<Value.Wrapped>) -> Condition {
        exclusion(path, values)
    }

    /// The field holds no value.
    public var isNil: Condition { .comparison(path, .equal, .null) }
    /// The field holds a value.
    public var isNotNil: Condition { .comparison(path, .notEqual, .null) }
}

extension Field where Value: OptionalField, Value.Wrapped: ColumnValue & Comparable {
    /// The field is less than `value` (false when it is missing).
    public static func < (field: Field, value: Value.Wrapped) -> Condition {
        compare(field.path, .less, value)
    }

    /// The field is at most `value` (false when it is missing).
    public static func <= (field: Field, value: Value.Wrapped) -> Condition {
        compare(field.path, .lessOrEqual, value)
    }

    /// The field is greater than `value` (false when it is missing).
    public static func > (field: Field, value: Value.Wrapped) -> Condition {
        compare(field.path, .greater, value)
    }

    /// The field is at least `value` (false when it is missing).
    public static func >= (field: Field, value: Value.Wrapped) -> Condition {
        compare(field.path, .greaterOrEqual, value)
    }
}

/// String tests, for `String` and `String?` fields.
public protocol StringField {}

extension String: StringField {}
extension Optional: StringField where Wrapped == String {}

extension Field where Value: StringField {
    /// The value starts with `prefix`.
    public func hasPrefix(_ prefix: String, caseInsensitive: Bool = false, diacriticInsensitive: Bool = false)
        -> Condition
    {
        .string(path, .hasPrefix, prefix, Self.options(caseInsensitive, diacriticInsensitive))
    }

    /// The value ends with `suffix`.
    public func hasSuffix(_ suffix: String, caseInsensitive: Bool = false, diacriticInsensitive: Bool = false)
        -> Condition
    {
        .string(path, .hasSuffix, suffix, Self.options(caseInsensitive, diacriticInsensitive))
    }

    /// The value contains `text`.
    public func contains(_ text: String, caseInsensitive: Bool = false, diacriticInsensitive: Bool = false) -> Condition
    {
        .string(path, .contains, text, Self.options(caseInsensitive, diacriticInsensitive))
    }

    /// The value matches `pattern`, where `*` is any run of characters and `?` one character.
    public func like(_ pattern: String, caseInsensitive: Bool = false, diacriticInsensitive: Bool = false) -> Condition
    {
        .string(path, .like, pattern, Self.options(caseInsensitive, diacriticInsensitive))
    }

    /// The whole value matches the regular expression `pattern`, in ICU's syntax as `NSPredicate`'s
    /// `MATCHES` reads it; a pattern that does not compile matches nothing.
    ///
    /// ```swift
    /// let coded = Trip.request().filter { $0.title.matches("[A-Z]{3}-[0-9]+") }
    /// ```
    public func matches(_ pattern: String, caseInsensitive: Bool = false, diacriticInsensitive: Bool = false)
        -> Condition
    {
        .string(path, .matches, pattern, Self.options(caseInsensitive, diacriticInsensitive))
    }

    /// The value equals `text` after folding case and/or diacritics.
    public func equals(_ text: String, caseInsensitive: Bool = false, diacriticInsensitive: Bool = false) -> Condition {
        .string(path, .equals, text, Self.options(caseInsensitive, diacriticInsensitive))
    }

    /// The field's full-text index finds `query`: its words, prefixes and phrases, combined as the
    /// query says. The field must be `@searchable` in the schema; a missing value matches nothing.
    ///
    /// ```swift
    /// let query = try SearchQuery("swift conc*")
    /// let trips = try context.fetch(Trip.request().filter { $0.title.matches(query) })
    /// ```
    ///
    /// To order matches by relevance and show where they matched, use
    /// ``ReadContext/search(_:for:in:snippetWords:)``.
    public func matches(_ query: SearchQuery) -> Condition {
        .search(path, query)
    }

    private static func options(_ caseInsensitive: Bool, _ diacriticInsensitive: Bool) -> StringComparisonOptions {
        var options: StringComparisonOptions = []
        if caseInsensitive { options.insert(.caseInsensitive) }
        if diacriticInsensitive { options.insert(.diacriticInsensitive) }
        return options
    }
}

/// A comparison with a value; one that cannot be stored (NaN) compares unequal to everything.
private func compare(_ path: ColumnPath, _ comparison: ComparisonOperator, _ value: some ColumnValue) -> Condition {
    guard let stored = try? value.sqlValue else { return .constant(comparison == .notEqual) }
    return .comparison(path, comparison, stored)
}

/// A test for membership in a list; a value that cannot be stored (NaN) equals nothing stored, so it
/// drops out of the list.
private func membership<Value: ColumnValue>(_ path: ColumnPath, _ values: some Sequence<Value>) -> Condition {
    let list = values.compactMap { try? $0.sqlValue }
    return list.isEmpty ? .constant(false) : .inList(path, list)
}

/// A test that a value is none of a list: a value that cannot be stored (NaN) equals nothing
/// stored, so it drops out of the list, and an empty list excludes nothing.
private func exclusion<Value: ColumnValue>(_ path: ColumnPath, _ values: some Sequence<Value>) -> Condition {
    let list = values.compactMap { try? $0.sqlValue }
    return list.isEmpty ? .constant(true) : .notInList(path, list)
}

/// A Boolean field is a condition of its own: `filter { $0.isVerified }`, `!$0.isVerified`,
/// `$0.isVerified && $0.rating >= 3`. An optional Boolean field is not: whether a missing value
/// passes `!` is a choice, so it is written out (`$0.flag == false`, `$0.flag != true`).
extension Field: ConditionConvertible where Value == Bool {
    /// The condition that the field is true, which a Boolean field used as a condition means.
    public var condition: Condition { self == true }

    /// The condition that the field is false.
    public static prefix func ! (field: Field) -> Condition { field == false }

    /// The field is true and the condition holds.
    public static func && (lhs: Field, rhs: Condition) -> Condition { lhs.condition && rhs }

    /// The condition holds and the field is true.
    public static func && (lhs: Condition, rhs: Field) -> Condition { lhs && rhs.condition }

    /// Both fields are true.
    public static func && (lhs: Field, rhs: Field) -> Condition { lhs.condition && rhs.condition }

    /// The field is true or the condition holds.
    public static func || (lhs: Field, rhs: Condition) -> Condition { lhs.condition || rhs }

    /// The condition holds or the field is true.
    public static func || (lhs: Condition, rhs: Field) -> Condition { lhs || rhs.condition }

    /// Either field is true.
    public static func || (lhs: Field, rhs: Field) -> Condition { lhs.condition || rhs.condition }
}
