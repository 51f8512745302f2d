import ModelwrightSchema

/// Turns Core Data names into names the schema language accepts, the same way in every version
/// so that a sanitised name stays stable across a model's history.
///
/// Core Data's own rules (Xcode's) already match ours for almost every name; what differs is
/// `id`, which generated records reserve, the built-in type names, and non-ASCII characters.
/// A changed name keeps its Core Data spelling in `@coreData(name: "…")`, which the exporter uses.
enum CoreDataNames {
    /// Names an entity cannot take: the schema's built-in types.
    static let reservedTypeNames: Set<String> = NameRules.reservedTypeNames.union(GraphBuilder.scalarTypes.keys)

    /// A type name for an entity or model called `name` in Core Data.
    static func typeName(_ name: String) -> String {
        if NameRules.problem(withTypeName: name) == nil, !reservedTypeNames.contains(name) { return name }
        var result = asciiIdentifier(name)
        if let first = result.unicodeScalars.first, ("a"..."z").contains(first) {
            result = NameRules.recased(result, uppercase: true)
        } else if result.unicodeScalars.first.map({ !("A"..."Z").contains($0) }) ?? true {
            result = "E" + result
        }
        if reservedTypeNames.contains(result) { result += "_" }
        return result
    }

    /// A property name for a property called `name` in Core Data.
    static func memberName(_ name: String) -> String {
        if NameRules.problem(withMemberName: name, kind: "property") == nil,
            !NameRules.reservedPropertyNames.contains(name)
        {
            return name
        }
        var result = asciiIdentifier(name)
        if let first = result.unicodeScalars.first, ("A"..."Z").contains(first) {
            result = NameRules.recased(result, uppercase: false)
        } else if result.unicodeScalars.first.map({ !("a"..."z").contains($0) && $0 != "_" }) ?? true {
            result = "p" + result
        }
        while NameRules.reservedPropertyNames.contains(result) { result += "_" }
        return result
    }

    /// A model name from a bundle name such as `Advanced.EvolutionDemo.V1`: its words run together.
    static func modelName(_ bundleName: String) -> String {
        var words: [String] = []
        var word = ""
        for scalar in bundleName.unicodeScalars {
            if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
                word.unicodeScalars.append(scalar)
            } else if !word.isEmpty {
                words.append(word)
                word = ""
            }
        }
        if !word.isEmpty { words.append(word) }
        let joined = words.map { NameRules.recased($0, uppercase: true) }.joined()
        return typeName(joined.isEmpty ? "Model" : joined)
    }

    /// `name` with every character outside ASCII letters, digits and `_` replaced by `_`.
    private static func asciiIdentifier(_ name: String) -> String {
        var result = ""
        for scalar in name.unicodeScalars {
            let isAllowed =
                ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar)
                || scalar == "_"
            result.unicodeScalars.append(isAllowed ? scalar : "_")
        }
        return result
    }
}
