/// How the generated Swift types are named: the `naming` object of `modelwright-config.json`.
///
/// ```json
/// { "naming": { "typeSuffix": "Record", "types": { "Group": "StopGroup", "Color": "TintColor" } } }
/// ```
///
/// It changes Swift names only, so an app can keep clear of its own types and of SwiftUI's
/// (`Group`, `Item`, `Color`); tables, columns, entity names, checksums and every
/// `SchemaDescription` keep the schema's names, so a store written before still opens.
///
/// - `typePrefix` and `typeSuffix` frame the record type of every entity (`Group` becomes
///   `GroupRecord`). Enums and composites keep their names: a suffix such as `Record` or `Entity`
///   describes a stored record, and would misname `Role` or `Address`.
/// - `types` gives any entity, enum or composite its Swift name outright (`"Group": "StopGroup"`);
///   the prefix and suffix are not added to it.
package struct Naming: Sendable, Equatable {
    /// Put before the name of each entity's record type.
    package var typePrefix: String
    /// Put after the name of each entity's record type.
    package var typeSuffix: String
    /// Swift names by schema type name (entity, enum or composite), taking precedence over the
    /// prefix and suffix.
    package var types: [String: String]

    /// The keys the `naming` object may have.
    static let keys = ["typePrefix", "typeSuffix", "types"]

    /// Creates a naming; the defaults keep the schema's names.
    package init(typePrefix: String = "", typeSuffix: String = "", types: [String: String] = [:]) {
        self.typePrefix = typePrefix
        self.typeSuffix = typeSuffix
        self.types = types
    }

    /// Whether it changes no name.
    var isIdentity: Bool { typePrefix.isEmpty && typeSuffix.isEmpty && types.isEmpty }

    /// The Swift name of an entity's record type, before it is checked against the other names.
    func recordName(forEntity name: String) -> String {
        types[name] ?? typePrefix + name + typeSuffix
    }

    /// The Swift name of an enum or composite.
    func valueTypeName(for name: String) -> String {
        types[name] ?? name
    }

    /// Reads the `naming` object of a config file, naming the key of any problem. Whether each
    /// name in `types` is a type of the model is checked when generating (``TypeNames``).
    static func parse(_ json: Any, configPath path: String) throws -> Naming {
        let error = { (message: String) in GeneratorError.invalidConfig(path: path, message: message) }
        guard let object = json as? [String: Any] else {
            throw error("'naming' must be an object with the keys \(keys.joined(separator: ", "))")
        }
        if let unknown = object.keys.sorted().first(where: { !keys.contains($0) }) {
            throw error("unknown key 'naming.\(unknown)'; the keys of 'naming' are \(keys.joined(separator: ", "))")
        }
        var naming = Naming()
        if let value = object["typePrefix"] {
            // A prefix is the start of a name, so `_` or `Class` is a fine prefix though neither is a
            // Swift identifier alone: check it with a letter after it.
            guard let prefix = value as? String, prefix.isEmpty || SwiftSpelling.isIdentifier(prefix + "A") else {
                throw error(
                    "'naming.typePrefix' must be a string of ASCII letters, digits and underscores that starts with a letter or an underscore"
                )
            }
            naming.typePrefix = prefix
        }
        if let value = object["typeSuffix"] {
            guard let suffix = value as? String, suffix.isEmpty || SwiftSpelling.isIdentifier("A" + suffix) else {
                throw error("'naming.typeSuffix' must be a string of ASCII letters, digits and underscores")
            }
            naming.typeSuffix = suffix
        }
        if let value = object["types"] {
            guard let types = value as? [String: String] else {
                throw error(
                    "'naming.types' must map schema type names to Swift names, such as { \"Group\": \"StopGroup\" }")
            }
            for (schemaName, swiftName) in types.sorted(by: { $0.key < $1.key })
            where !SwiftSpelling.isIdentifier(swiftName) {
                throw error(
                    "'naming.types.\(schemaName)' is '\(swiftName)', which is not a Swift identifier (ASCII letters, digits and underscores, not a keyword)"
                )
            }
            naming.types = types
        }
        return naming
    }
}
