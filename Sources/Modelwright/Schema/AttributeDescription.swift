/// A stored value of an entity: a column (or, for a composite, a group of columns).
///
/// ```swift
/// let rating = AttributeDescription(name: "rating", type: .int16, defaultValue: .integer(0))
/// let prefix = AttributeDescription(name: "namePrefix", type: .string, isOptional: true)
/// ```
///
/// ## Topics
///
/// ### Value
/// - ``type``
/// - ``isOptional``
/// - ``defaultValue``
public struct AttributeDescription: Sendable, Equatable, Codable {
    /// The attribute's name, such as `familyName`.
    public var name: String
    /// What the attribute stores.
    public var type: AttributeType
    /// Whether the attribute may hold no value (`nil`, SQL `NULL`).
    public var isOptional: Bool
    /// The value a new record gets when the app gives none.
    public var defaultValue: DefaultValue?
    /// The attribute's name in the previous version, when it was renamed.
    public var renamedFrom: String?
    /// Core Data's version hash modifier: a value that changes the checksum, to mark a change
    /// the structure does not show (a new transformer, say) as a new store version.
    public var versionHashModifier: String?

    /// Creates an attribute description.
    public init(
        name: String,
        type: AttributeType,
        isOptional: Bool = false,
        defaultValue: DefaultValue? = nil,
        renamedFrom: String? = nil,
        versionHashModifier: String? = nil
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
        self.renamedFrom = renamedFrom
        self.versionHashModifier = versionHashModifier
    }
}

/// What an attribute stores.
public indirect enum AttributeType: Sendable, Equatable, Codable {
    /// `Bool`.
    case bool
    /// `Int16`.
    case int16
    /// `Int32`.
    case int32
    /// `Int64`.
    case int64
    /// `Int` (64 bits in the store on every platform).
    case int
    /// `Double`.
    case double
    /// `Float`.
    case float
    /// `Decimal`, stored exactly.
    case decimal
    /// `String`.
    case string
    /// `Date`.
    case date
    /// `Data`.
    case data
    /// `UUID`.
    case uuid
    /// `URL`.
    case url
    /// ``Day``: a calendar day without a time.
    case day
    /// An enum backed by strings or integers, stored as its raw value.
    case enumeration(EnumDescription)
    /// A composite value: a struct whose fields are stored as columns of the entity.
    case composite(CompositeDescription)
    /// An app-defined `Codable` type stored as JSON (Core Data's Transformable), named by its Swift type.
    case codable(typeName: String)
}

extension AttributeType {
    /// How the schema language spells the type (`Int16`, an enum's or composite's name,
    /// `Codable<T>`): the one spelling errors use, in the runtime and the toolchain alike.
    package var schemaSpelling: String {
        switch kind {
        case .scalar(let scalar): scalar.schemaSpelling
        case .enumeration(let description): description.name
        case .composite(let description): description.name
        case .codable(let typeName): "Codable<\(typeName)>"
        }
    }
}

/// An enum attribute type: its name, raw value type and cases.
public struct EnumDescription: Sendable, Equatable, Codable {
    /// How an enum's cases are stored.
    public enum RawType: String, Sendable, Equatable, Codable {
        /// Cases are stored as text.
        case string
        /// Cases are stored as integers.
        case int
    }

    /// One case of an enum with its stored raw value.
    public struct Case: Sendable, Equatable, Codable {
        /// The case's name, such as `member`.
        public var name: String
        /// The stored value: the text of a string-backed case, the decimal digits of an int-backed one.
        public var rawValue: String

        /// Creates an enum case.
        public init(name: String, rawValue: String) {
            self.name = name
            self.rawValue = rawValue
        }
    }

    /// The enum's name, such as `Role`.
    public var name: String
    /// What its raw values are.
    public var rawType: RawType
    /// Its cases, in declaration order.
    public var cases: [Case]

    /// Creates an enum description.
    public init(name: String, rawType: RawType, cases: [Case]) {
        self.name = name
        self.rawType = rawType
        self.cases = cases
    }
}

extension EnumDescription {
    /// The stored values to rewrite when the enum becomes `new`, so that every row keeps its case
    /// by name: each case that keeps its name but not its raw value (a reordered implicit `Int`
    /// enum, swapped explicit raw values), old raw value → new one. Empty when no kept case moves;
    /// `nil` when some cases move while others' names are gone, since the rows of a gone case
    /// would then read as whichever case now has their raw value (only a custom stage knows).
    package func rawValueChanges(to new: EnumDescription) -> [(from: String, to: String)]? {
        let newRawValues = Dictionary(new.cases.map { ($0.name, $0.rawValue) }, uniquingKeysWith: { first, _ in first })
        let moved = cases.compactMap { old in
            newRawValues[old.name].flatMap { $0 == old.rawValue ? nil : (from: old.rawValue, to: $0) }
        }
        if !moved.isEmpty, cases.contains(where: { newRawValues[$0.name] == nil }) { return nil }
        return moved
    }
}

/// A composite attribute type: a named group of fields stored as columns of the owning entity.
public struct CompositeDescription: Sendable, Equatable, Codable {
    /// The composite's name, such as `Address`.
    public var name: String
    /// Its fields, in declaration order.
    public var fields: [AttributeDescription]

    /// Creates a composite description.
    public init(name: String, fields: [AttributeDescription]) {
        self.name = name
        self.fields = fields
    }
}

/// A default value, typed against its attribute.
public enum DefaultValue: Sendable, Equatable, Codable {
    /// `true` or `false`.
    case bool(Bool)
    /// An integer, for integer attributes.
    case integer(Int64)
    /// A floating-point number, for `Double` and `Float` attributes.
    case floatingPoint(Double)
    /// A decimal number kept as its exact text, such as `"19.99"`.
    case decimal(String)
    /// Text, for `String`, `UUID` and `URL` attributes (already checked to parse as the attribute's type).
    case string(String)
    /// A fixed instant, in seconds since 1970-01-01T00:00:00Z.
    case date(secondsSince1970: Double)
    /// The moment the record is created.
    case now
    /// An enum case, by name.
    case enumCase(String)
}
