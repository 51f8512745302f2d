/// The data a Mustache template renders.
///
/// Templates stay logic-less: the generator works out everything a template shows (names, flags,
/// lists of attributes) and hands it over as these values. Literals build them directly:
///
/// ```swift
/// let context: MustacheValue = [
///     "entity": "User",
///     "isAbstract": false,
///     "attributes": [
///         ["name": "username", "type": "String"],
///         ["name": "rating", "type": "Int16"],
///     ],
/// ]
/// ```
///
/// In a section (`{{#name}}…{{/name}}`) `null`, `false` and an empty list are falsey; every other
/// value is truthy, the empty string and zero included, as the Mustache specification says.
/// An interpolation (`{{name}}`) shows strings as they are, whole numbers without a fraction
/// (`3.0` renders `3`), other numbers in their shortest exact form (`1.21`), booleans as `true` or
/// `false`, and `null` as nothing. Lists and objects have no text form: interpolating one is an error.
///
/// ## Topics
///
/// ### Scalars
/// - ``null``
/// - ``bool(_:)``
/// - ``int(_:)``
/// - ``double(_:)``
/// - ``string(_:)``
///
/// ### Collections
/// - ``list(_:)``
/// - ``object(_:)``
/// - ``MustacheObject``
package enum MustacheValue: Sendable, Equatable {
    /// No value: falsey in sections, empty in interpolations.
    case null
    /// A flag, usually tested by a section.
    case bool(Bool)
    /// A whole number.
    case int(Int)
    /// A number with a fraction.
    case double(Double)
    /// Text.
    case string(String)
    /// A list that a section repeats its content for, once per element.
    case list([MustacheValue])
    /// Named values that tags look up by key.
    case object(MustacheObject)
}

/// The named values of an object, which tags look up by key.
///
/// The entries are kept as given, in one array, and a lookup scans them: an object of a render
/// context holds a few dozen keys, most of them small strings that compare in a few instructions,
/// while a dictionary hashed every key when the object was built and the key again at every
/// lookup (a fifth of a release run's instructions at 1,000 entities; see `BENCHMARKS.md`).
package struct MustacheObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    private struct Entry: Sendable {
        let key: String
        let value: MustacheValue
    }

    /// In the order given; a key's first entry is the one a lookup finds.
    private let entries: [Entry]

    private init(entries: [Entry]) {
        self.entries = entries
    }

    /// Creates an object from a literal; when a key repeats, the first value wins.
    package init(dictionaryLiteral elements: (String, MustacheValue)...) {
        self.init(elements)
    }

    /// Creates an object holding a dictionary's entries.
    package init(_ fields: [String: MustacheValue]) {
        entries = fields.map { Entry(key: $0.key, value: $0.value) }
    }

    /// Creates an object from entries; when a key repeats, the first value wins.
    package init(_ entries: [(String, MustacheValue)]) {
        self.entries = entries.map { Entry(key: $0.0, value: $0.1) }
    }

    /// The value for `key`, or `nil` when the object has no such key.
    package subscript(key: String) -> MustacheValue? {
        for entry in entries where entry.key == key { return entry.value }
        return nil
    }

    /// This object's entries, and `other`'s for the keys this one does not have.
    package func adding(_ other: MustacheObject) -> MustacheObject {
        MustacheObject(entries: entries + other.entries)
    }

    /// Equal when they give the same value for every key (the first entry of a repeated key).
    package static func == (lhs: MustacheObject, rhs: MustacheObject) -> Bool {
        lhs.fields == rhs.fields
    }

    /// The entries as a dictionary, the first of a repeated key kept.
    private var fields: [String: MustacheValue] {
        Dictionary(entries.map { ($0.key, $0.value) }) { first, _ in first }
    }
}

extension MustacheValue {
    /// Whether a section shows its content for this value.
    var isTruthy: Bool {
        switch self {
        case .null: false
        case .bool(let value): value
        case .list(let values): !values.isEmpty
        case .int, .double, .string, .object: true
        }
    }

    /// The text an interpolation tag shows, or `nil` for lists and objects, which have none.
    var interpolationText: String? {
        switch self {
        case .null: ""
        case .bool(let value): value ? "true" : "false"
        case .int(let value): String(value)
        case .double(let value): Self.text(for: value)
        case .string(let value): value
        case .list, .object: nil
        }
    }

    /// A short name for the kind of value, for error messages.
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int, .double: "number"
        case .string: "string"
        case .list: "list"
        case .object: "object"
        }
    }

    /// Whole numbers print without `.0` (data decoded from JSON often holds them as doubles);
    /// anything else uses Swift's shortest round-tripping form, so `1.21` stays `1.21`.
    private static func text(for value: Double) -> String {
        if value.isFinite, value.rounded() == value, abs(value) < 1e15 {
            return String(Int64(value))
        }
        return String(value)
    }
}

// MARK: - ExpressibleByStringLiteral

extension MustacheValue: ExpressibleByStringLiteral {
    /// Creates a string value from a literal.
    package init(stringLiteral value: String) {
        self = .string(value)
    }
}

// MARK: - ExpressibleByIntegerLiteral

extension MustacheValue: ExpressibleByIntegerLiteral {
    /// Creates a whole-number value from a literal.
    package init(integerLiteral value: Int) {
        self = .int(value)
    }
}

// MARK: - ExpressibleByFloatLiteral

extension MustacheValue: ExpressibleByFloatLiteral {
    /// Creates a number value from a literal.
    package init(floatLiteral value: Double) {
        self = .double(value)
    }
}

// MARK: - ExpressibleByBooleanLiteral

extension MustacheValue: ExpressibleByBooleanLiteral {
    /// Creates a flag from a literal.
    package init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

// MARK: - ExpressibleByArrayLiteral

extension MustacheValue: ExpressibleByArrayLiteral {
    /// Creates a list from a literal.
    package init(arrayLiteral elements: MustacheValue...) {
        self = .list(elements)
    }
}

// MARK: - ExpressibleByDictionaryLiteral

extension MustacheValue: ExpressibleByDictionaryLiteral {
    /// Creates an object from a literal; when a key repeats, the first value wins.
    package init(dictionaryLiteral elements: (String, MustacheValue)...) {
        self = .object(MustacheObject(elements))
    }
}
