/// What a name in a schema may be: names become Swift identifiers, SQL identifiers and Core Data
/// names, so they are ASCII and follow Core Data's case rules. Keywords (`Order`, `default`,
/// `index`) are allowed: every emitter escapes them.
package enum NameRules {
    /// Names a property cannot take: the members every generated record, its `Fields` and the
    /// runtime's `Record` protocol already have (`id`, `Fields.path`, the decoder parameter `row`,
    /// `Hashable`'s `hashValue`), and the words Swift gives a meaning after a `.` (`x.self`,
    /// `x.init`, `x.Type`), which no backticks make a plain member name.
    ///
    /// The generated Swift namespace, one list with ``reservedTypeNames``: the templates must not
    /// give a record any other member of a fixed name. `ReservedNameTests` checks a model of every
    /// name against the compiler.
    package static let reservedPropertyNames: Set<String> = [
        "id", "ID", "Fields", "Target", "entityName", "path", "row", "with", "encode", "hashValue",
        "self", "Self", "init", "deinit", "Type", "Protocol", "super", "_", "requiredFields", "columnCount",
        "clearing", "OptionalProperty",
    ]

    /// Names an entity, enum or composite cannot take: the types the generated code names
    /// unqualified (the runtime's, the standard library's and Foundation's, and the generated
    /// namespaces), which a declaration of the same name in the app's module would shadow, and the
    /// types declared or synthesized inside generated types (`CodingKeys`, `RawValue`, `AllCases`,
    /// `OptionalProperty`), which would shadow a type of the schema inside them.
    ///
    /// Reserved rather than written qualified (`Foundation.Date`): a qualified name still loses to
    /// a nested one (`CodingKeys` inside every record), the module names themselves would need
    /// reserving, and generated code should read like hand-written code. `NamespacePropertyTests`
    /// checks that every capitalised name the rendered templates use is in this list.
    package static let reservedTypeNames: Set<String> = [
        "Record", "RecordID", "RecordFields", "Field", "Fields", "FieldPath", "ID", "Target", "ToOne", "ToMany",
        "FetchRequest", "CompositePath", "CompositeFields", "CompositeFieldsWithPresence", "CompositeValue",
        "OptionalComposite", "ColumnValue", "RowEncoder", "RowDecoder", "RowCursor", "RowInserter", "Store",
        "MigrationPlan",
        "MigrationStage",
        "MigrationContext", "MigrationProgress", "SchemaDescription", "EntityDescription", "AttributeDescription",
        "RelationshipDescription", "EnumDescription", "CompositeDescription", "SortDescription", "SchemaChecksum",
        "SchemaVersion", "Condition", "SortKey", "DefaultValue", "AttributeType", "Hashable", "Codable", "Sendable",
        "CaseIterable",
        "Equatable", "Encodable", "Decodable", "Error", "Never", "Void", "Any", "AnyObject", "Optional", "Array",
        "Set", "Dictionary", "String", "Substring", "Character", "Bool", "Int", "Int8", "Int16", "Int32",
        "Int64",
        "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Double", "Float", "Decimal", "Date", "Data", "UUID", "URL",
        "Foundation", "Modelwright", "Swift", "Self", "Type", "Protocol", "CodingKeys", "RawValue", "AllCases",
        "OptionalProperty", "Locale", "MigrationRow", "HistoryTracking",
    ]

    /// The problem with a type name (entity, enum, composite), if any.
    package static func problem(withTypeName name: String) -> String? {
        if let problem = asciiProblem(name) { return problem }
        guard let first = name.unicodeScalars.first, ("A"..."Z").contains(first) else {
            return "type name '\(name)' must start with an uppercase letter (Core Data requires it)"
        }
        return nil
    }

    /// The problem with a property, enum case, custom stage, request or parameter name, if any.
    package static func problem(withMemberName name: String, kind: String) -> String? {
        if let problem = asciiProblem(name) { return problem }
        // Swift's wildcard: no declaration can be named `_`, backticks or not.
        if name == "_" { return "'_' cannot name a \(kind): Swift reads it as a wildcard" }
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) || first == "_" else {
            return "\(kind) name '\(name)' must start with a lowercase letter (Core Data requires it)"
        }
        return nil
    }

    /// The same name with its first letter changed to `uppercase` or lowercase, for a fix-it.
    package static func recased(_ name: String, uppercase: Bool) -> String {
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
