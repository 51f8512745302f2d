/// A schema version's identity: a SHA-256 digest of its structure, printed as 64 hexadecimal digits.
///
/// Like Core Data's entity version hashes, the checksum covers only what shapes the store,
/// so two schemas with the same checksum can open the same store:
///
/// - entity names, parents and abstractness;
/// - attribute names, types (enums by raw type, composites by their fields), optionality and
///   default values (the store's DDL declares them, so a migration can fill new columns);
/// - relationship names, destinations, inverses, cardinality, ordering, optionality and delete rules;
/// - uniqueness constraints and indexes;
/// - the attributes of a full-text index (`@searchable`), where an entity has one;
/// - version hash modifiers (Core Data's `versionHashModifier`), where set.
///
/// The model's name and version number, doc comments, default sort orders,
/// renaming hints, the names and case lists of enums, the names of composites, the Swift type
/// of a `Codable` attribute, and the order of declarations do not change it: two versions with
/// the same structure share a checksum, as two Core Data versions with the same entity hashes do.
///
/// The digest is taken over a canonical text: entities, properties and constraints sorted by
/// name, every string written as `<UTF-8 byte count>:<bytes>` so no name can be mistaken for
/// a separator. The algorithm depends on nothing platform-specific, so every platform and
/// run computes the same checksum.
///
/// ```swift
/// let checksum = schema.checksum
/// if checksum != storedChecksum { /* migrate */ }
/// print(checksum)  // "3f1c…"
/// ```
public struct SchemaChecksum: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The digest as 64 lowercase hexadecimal digits.
    public let hexDigits: String

    /// Wraps a checksum read back from somewhere, such as a lock file or a store.
    public init(hexDigits: String) {
        self.hexDigits = hexDigits
    }

    /// Computes the checksum of a schema.
    public init(of schema: SchemaDescription) {
        var text = CanonicalText()
        text.write(schema)
        hexDigits = SHA256.hexDigest(of: text.bytes)
    }

    /// The hexadecimal digits.
    public var description: String { hexDigits }

    /// The canonical text whose digest is the checksum (exposed so tests and tools can show it).
    public static func canonicalText(of schema: SchemaDescription) -> String {
        var text = CanonicalText()
        text.write(schema)
        return String(decoding: text.bytes, as: UTF8.self)
    }
}

/// Builds the canonical, order-independent text of a schema's structure.
private struct CanonicalText {
    private(set) var bytes: [UInt8] = []

    mutating func write(_ schema: SchemaDescription) {
        field("schema")
        for index in Self.positionsByName(schema.entities.map(\.name)) {
            write(schema.entities[index])
        }
    }

    private mutating func write(_ entity: EntityDescription) {
        field("entity")
        field(entity.name)
        field(entity.parent ?? "")
        field(entity.isAbstract ? "abstract" : "concrete")
        hashModifier(entity.versionHashModifier)
        for index in Self.positionsByName(entity.attributes.map(\.name)) {
            write(entity.attributes[index])
        }
        for index in Self.positionsByName(entity.relationships.map(\.name)) {
            let relationship = entity.relationships[index]
            field("relationship")
            field(relationship.name)
            field(relationship.destination)
            field(relationship.inverse ?? "")
            field(relationship.cardinality.rawValue)
            field(relationship.isOrdered ? "ordered" : "unordered")
            field(relationship.isOptional ? "optional" : "required")
            field(relationship.deleteRule.rawValue)
            hashModifier(relationship.versionHashModifier)
        }
        // A uniqueness constraint is a set of names; an index's column order matters to SQLite.
        let uniques = entity.uniquenessConstraints.map { $0.sorted().joined(separator: ",") }
        for unique in Set(uniques).sorted() {
            field("unique")
            field(unique)
        }
        for index in Set(entity.indexes.map { $0.joined(separator: ",") }).sorted() {
            field("index")
            field(index)
        }
        // A full-text index is a set of attributes. Written only when present, so every schema
        // without one keeps the checksum it had before full-text search existed.
        if !entity.searchableAttributes.isEmpty {
            field("search")
            field(Set(entity.searchableAttributes).sorted().joined(separator: ","))
        }
        field("end")
    }

    private mutating func write(_ attribute: AttributeDescription) {
        field("attribute")
        field(attribute.name)
        write(attribute.type)
        field(attribute.isOptional ? "optional" : "required")
        hashModifier(attribute.versionHashModifier)
        // The store declares constant defaults in its DDL, so they shape the store too.
        switch attribute.defaultValue {
        case nil: field("no-default")
        case .now: field("default-now")
        case let value?: field("default=" + (value.sqlLiteral(for: attribute.type) ?? ""))
        }
    }

    private mutating func write(_ type: AttributeType) {
        switch type.kind {
        case .scalar(let scalar): field(scalar.name)
        case .enumeration(let description): field("enum-\(description.rawType.rawValue)")
        case .codable: field("codable")
        case .composite(let description):
            field("composite")
            for field in description.fields.sorted(by: { $0.name < $1.name }) {
                write(field)
            }
            field("end")
        }
    }

    /// The positions of `names` in name order (equal names keep their order). Sorting positions moves
    /// integers, not whole descriptions; and sorting an array in place ran twice as fast in a debug
    /// build as `indices.sorted(by:)`, which copies the range through generic code first.
    private static func positionsByName(_ names: [String]) -> [Int] {
        var positions = Array(names.indices)
        positions.sort { names[$0] < names[$1] }
        return positions
    }

    /// Written only when present, so schemas without modifiers keep their checksums.
    private mutating func hashModifier(_ modifier: String?) {
        guard let modifier else { return }
        field("hash-modifier")
        field(modifier)
    }

    /// Appends `<UTF-8 byte count>:<bytes>\n`. The count is written digit by digit rather than
    /// interpolated: a schema has tens of thousands of fields, and each interpolation allocated.
    /// The bytes are copied as one buffer: appending a `String.UTF8View` went through its generic
    /// iterator and was half the cost of the canonical text.
    private mutating func field(_ string: String) {
        var string = string
        string.withUTF8 { utf8 in
            var divisor = 1
            while divisor <= utf8.count / 10 {
                divisor *= 10
            }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(utf8.count / divisor % 10))
                divisor /= 10
            }
            bytes.append(UInt8(ascii: ":"))
            bytes.append(contentsOf: utf8)
        }
        bytes.append(UInt8(ascii: "\n"))
    }
}
