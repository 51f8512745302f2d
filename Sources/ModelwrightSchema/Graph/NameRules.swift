/// What a name in a schema may be: names become Swift identifiers, SQL identifiers and Core Data
/// names, so they are ASCII and follow Core Data's case rules. Keywords (`Order`, `default`,
/// `index`) are allowed: every emitter escapes them.
enum NameRules {
    /// Names a property cannot take because generated records already use them.
    static let reservedPropertyNames: Set<String> = ["id"]

    /// The problem with a type name (entity, enum, composite), if any.
    static func problem(withTypeName name: String) -> String? {
        if let problem = asciiProblem(name) { return problem }
        guard let first = name.unicodeScalars.first, ("A"..."Z").contains(first) else {
            return "type name '\(name)' must start with an uppercase letter (Core Data requires it)"
        }
        return nil
    }

    /// The problem with a property, enum case or custom stage name, if any.
    static func problem(withMemberName name: String, kind: String) -> String? {
        if let problem = asciiProblem(name) { return problem }
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) || first == "_" else {
            return "\(kind) name '\(name)' must start with a lowercase letter (Core Data requires it)"
        }
        return nil
    }

    /// The same name with its first letter changed to `uppercase` or lowercase, for a fix-it.
    static func recased(_ name: String, uppercase: Bool) -> String {
        guard let first = name.first else { return name }
        return (uppercase ? first.uppercased() : first.lowercased()) + name.dropFirst()
    }

    private static func asciiProblem(_ name: String) -> String? {
        let allowed = name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
        }
        return allowed
            ? nil
            : "'\(name)' is not a valid name: use ASCII letters, digits and underscores (names become Swift and SQL identifiers)"
    }
}
