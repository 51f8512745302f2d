/// The typed fields of a composite type, reached through an attribute that holds one.
///
/// Generated code declares one per composite, shared by every entity that uses it. A record's
/// ``RecordFields`` reach it by the attribute's name, so requests filter and sort by a
/// composite's fields as by any other:
///
/// ```swift
/// extension Address {
///     struct Fields: CompositeFieldsWithPresence {
///         static let requiredFields = ["street", "city"]
///         let path: CompositePath
///         init(path: CompositePath) { self.path = path }
///         var street: Field<String> { path.field("street") }
///         var city: Field<String> { path.field("city") }
///         var zip: Field<String?> { path.field("zip") }
///     }
/// }
/// extension User.Fields {
///     var home: OptionalComposite<Address.Fields> { path.composite("home") }   // home: Address?
/// }
///
/// let inOslo = User.request().filter { $0.home.city == "Oslo" && $0.home.zip.isNotNil }
/// ```
///
/// A required composite attribute (`home: Address`) is the composite's fields themselves, so
/// `$0.home.city` is a `Field<String>`. An optional one is an ``OptionalComposite``, through
/// which every field is optional (`Field<String?>`), because each of its columns is NULL when
/// the composite is absent.
public protocol CompositeFields: Sendable {
    /// Creates the fields of the composite attribute at `path`.
    @_spi(Generated) init(path: CompositePath)
}

/// The fields of a composite with at least one required field. Such a composite is absent
/// exactly when one of its required columns is NULL (this is how a record decodes it), so the
/// store can test an optional one for `nil`: ``OptionalComposite/isNil``.
///
/// A composite whose fields are all optional has no such test: its absence and a value whose
/// fields are all `nil` are stored alike, as NULL in every column, and a query cannot tell them
/// apart. Test its fields instead.
public protocol CompositeFieldsWithPresence: CompositeFields {
    /// The names of the composite's required fields, as the schema writes them.
    @_spi(Generated) static var requiredFields: [String] { get }
}

/// Where a composite attribute is: the to-one relationships followed from the request's entity,
/// then the attribute, whose fields are columns of the entity reached.
@_spi(Generated) public struct CompositePath: Sendable, Hashable {
    /// The to-one relationships followed, in order, from the request's entity.
    public let hops: [String]
    /// The composite attribute's name.
    public let attribute: String

    /// The composite's field `name`.
    public func field<Value>(_ name: String) -> Field<Value> {
        Field(path: column(name))
    }

    fileprivate func column(_ field: String) -> ColumnPath {
        ColumnPath(hops: hops, column: SchemaLayout.compositeColumn(attribute: attribute, field: field))
    }
}

extension FieldPath {
    /// The required composite attribute `name` at this point: its fields.
    @_spi(Generated) public func composite<Fields: CompositeFields>(_ name: String) -> Fields {
        Fields(path: CompositePath(hops: hops, attribute: name))
    }

    /// The optional composite attribute `name` at this point, whose fields are reached through it.
    @_spi(Generated) public func composite<Fields: CompositeFields>(_ name: String) -> OptionalComposite<Fields> {
        OptionalComposite(path: CompositePath(hops: hops, attribute: name))
    }
}

/// An optional composite attribute: its fields are reached by name, each as an optional field,
/// so `$0.home.city == "Oslo"` compiles for `home: Address?` and `$0.home.city.isNil` tests the column.
///
/// When the composite has a required field, ``isNil`` and ``isNotNil`` test the composite itself.
@dynamicMemberLookup
public struct OptionalComposite<Fields: CompositeFields>: Sendable, Hashable {
    /// Where the attribute is.
    @_spi(Generated) public let path: CompositePath

    /// A required field of the composite, as an optional one: it is missing when the composite is.
    public subscript<Value>(dynamicMember keyPath: KeyPath<Fields, Field<Value>>) -> Field<Value?> {
        Field(path: Fields(path: path)[keyPath: keyPath].path)
    }

    /// An optional field of the composite. (Preferred over the subscript above, which would make it doubly optional.)
    public subscript<Value>(dynamicMember keyPath: KeyPath<Fields, Field<Value?>>) -> Field<Value?> {
        Fields(path: path)[keyPath: keyPath]
    }
}

extension OptionalComposite where Fields: CompositeFieldsWithPresence {
    /// The record has no value: one of the composite's required columns is NULL.
    public var isNil: Condition {
        let tests = Fields.requiredFields.map { Condition.comparison(path.column($0), .equal, .null) }
        return tests.count == 1 ? tests[0] : tests.isEmpty ? .constant(false) : .or(tests)
    }

    /// The record has a value: every required column of the composite holds one.
    public var isNotNil: Condition {
        let tests = Fields.requiredFields.map { Condition.comparison(path.column($0), .notEqual, .null) }
        return tests.count == 1 ? tests[0] : tests.isEmpty ? .constant(true) : .and(tests)
    }
}
