import ModelwrightSchema

/// What a Core Data Transformable attribute imports as, so that an imported model compiles as
/// imported, on every platform, with no type the app must supply.
///
/// A class that is, or maps exactly to, a standard Swift Codable type becomes `Codable<T>`:
/// `NSString` → `String`, `[Int64]`, `[String: Date]`, `Set<UUID>`. Everything else (`CLLocation`,
/// `UIColor`, `NSDictionary`, an app's class, no class at all) becomes `Data` holding the bytes the
/// value transformer archived. The mapping depends on nothing but its arguments, so every version
/// of a model maps a class alike and the planner sees no change where Core Data had none.
enum CoreDataTransformable {
    /// The schema type a Transformable attribute takes.
    enum Mapping: Equatable {
        /// `Codable<T>`, with `T` spelt canonically (`[String: Int]`, `Set<Date>`).
        case codable(String)
        /// `Data`: the value stays the transformer's archive, for the app to decode.
        case archivedData
    }

    /// Swift types that are Codable, Hashable and Sendable in the standard library or Foundation on
    /// every platform, and need no import beyond Foundation.
    static let standardTypes: Set<String> = [
        "Bool", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64",
        "Double", "Float", "String", "Date", "Data", "URL", "UUID", "Decimal",
    ]

    /// Foundation classes whose value is exactly one standard Swift type. `NSNumber` is not here:
    /// it may hold a Boolean, an integer or a floating-point number, so it has no single type.
    static let foundationClasses: [String: String] = [
        "NSString": "String", "NSDate": "Date", "NSURL": "URL", "NSUUID": "UUID", "NSData": "Data",
        "NSDecimalNumber": "Decimal",
    ]

    /// The schema type for a Transformable attribute of class `className` (`nil` or empty when the
    /// model names none) written through the value transformer `transformer`.
    ///
    /// The transformer does not change the type: it decides how Core Data stores the value, which
    /// a Modelwright store does not share. It is a parameter so that any later rule that needs it
    /// stays a function of the same two names.
    static func mapping(className: String?, transformer: String?) -> Mapping {
        guard let className, !className.isEmpty else { return .archivedData }
        if let swiftType = foundationClasses[className] { return .codable(swiftType) }
        guard let canonical = canonicalStandardType(className) else { return .archivedData }
        return .codable(canonical)
    }

    /// The doc comment (without `///`) that tells the app what a `Data` attribute holds.
    static func documentation(className: String?, transformer: String?) -> String {
        "Core Data Transformable: \(transformerDescription(transformer)) of "
            + "\(className.flatMap { $0.isEmpty ? nil : $0 } ?? "an unnamed class"); stored as its archived bytes."
    }

    /// The transformer as the messages name it.
    static func transformerDescription(_ transformer: String?) -> String {
        guard let transformer, !transformer.isEmpty else { return "Core Data's default value transformer" }
        return transformer
    }

    /// `text` spelt canonically when it is a standard type, or an array, set, dictionary or
    /// optional built only from standard types; otherwise `nil`.
    static func canonicalStandardType(_ text: String) -> String? {
        var parser = TypeTextParser(text)
        guard let type = parser.type(depth: 0), parser.isAtEnd else { return nil }
        return type
    }
}

/// Reads the small part of Swift's type grammar that standard Codable collections use:
/// `Name`, `[T]`, `[K: V]`, `Array<T>`, `Set<T>`, `Dictionary<K, V>` and `T?` inside them.
private struct TypeTextParser {
    /// Deeper nesting than this is refused, so hostile text cannot exhaust the stack.
    static let maximumDepth = 32

    private let scalars: [Unicode.Scalar]
    private var index = 0

    init(_ text: String) {
        scalars = Array(text.unicodeScalars)
    }

    /// Whether only spaces remain.
    var isAtEnd: Bool {
        var copy = self
        copy.skipSpaces()
        return copy.index == copy.scalars.count
    }

    /// A type, canonically spelt; optional (`T?`) only below the top level.
    mutating func type(depth: Int) -> String? {
        guard depth < Self.maximumDepth, var result = base(depth: depth) else { return nil }
        skipSpaces()
        if depth > 0, peek == "?" {
            index += 1
            result += "?"
        }
        return result
    }

    private mutating func base(depth: Int) -> String? {
        skipSpaces()
        if peek == "[" {
            index += 1
            guard let element = type(depth: depth + 1) else { return nil }
            if take(":") {
                guard let value = type(depth: depth + 1), take("]") else { return nil }
                return "[\(element): \(value)]"
            }
            return take("]") ? "[\(element)]" : nil
        }
        let name = identifier()
        switch name {
        case "Array", "Set":
            guard take("<"), let element = type(depth: depth + 1), take(">") else { return nil }
            return name == "Array" ? "[\(element)]" : "Set<\(element)>"
        case "Dictionary":
            guard take("<"), let key = type(depth: depth + 1), take(","), let value = type(depth: depth + 1),
                take(">")
            else { return nil }
            return "[\(key): \(value)]"
        default:
            return CoreDataTransformable.standardTypes.contains(name) ? name : nil
        }
    }

    private var peek: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

    private mutating func identifier() -> String {
        var name = ""
        while let scalar = peek, scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
            name.unicodeScalars.append(scalar)
            index += 1
        }
        return name
    }

    /// Consumes `scalar` after any spaces, if it is next.
    private mutating func take(_ scalar: Unicode.Scalar) -> Bool {
        skipSpaces()
        guard peek == scalar else { return false }
        index += 1
        return true
    }

    private mutating func skipSpaces() {
        while peek == " " { index += 1 }
    }
}
