import Foundation
import Modelwright
import ModelwrightSchema

/// How schema names and values are spelled in generated Swift: keywords escaped, literals exact.
enum SwiftSpelling {
    /// Words that need backticks where a declaration names them.
    private static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
        "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows",
        "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue", "default", "defer",
        "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where",
        "while", "Any", "as", "await", "false", "is", "nil", "self", "Self", "super", "throws", "true", "try",
        "Type", "Protocol", "some", "any",
    ]

    /// The name as a Swift identifier, in backticks when it is a keyword.
    static func identifier(_ name: String) -> String {
        keywords.contains(name) ? "`\(name)`" : name
    }

    /// The name as a parameter's label in a declaration: a keyword needs no backticks there
    /// (Swift warns about them), except `inout`, `var` and `let`.
    static func parameterLabel(_ name: String) -> String {
        ["inout", "var", "let"].contains(name) ? "`\(name)`" : name
    }

    /// The name as an argument's label in a call: only `inout` needs backticks there.
    static func argumentLabel(_ name: String) -> String {
        name == "inout" ? "`inout`" : name
    }

    /// Whether `name` can name a type without backticks: ASCII letters, digits and underscores,
    /// not starting with a digit, not a keyword, and not `_` (Swift's wildcard, which nothing names).
    static func isIdentifier(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, !("0"..."9").contains(first), !keywords.contains(name),
            name != "_"
        else {
            return false
        }
        return name.unicodeScalars.allSatisfy {
            ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || $0 == "_"
        }
    }

    /// A Swift string literal with its text escaped: it reads back as exactly `text`.
    ///
    /// Swift's single-line string literals take the schema language's escapes (`\"`, `\\`, `\n`,
    /// `\r`, `\t`, `\0`, `\u{…}`), so the schema's literal escaper serves: decided per Unicode
    /// scalar, never per `Character`, with every invisible or line-ending scalar spelled `\u{…}`.
    static func string(_ text: String) -> String {
        // Names, nearly every string here, need no escapes: quote them without looking at scalars.
        guard isPlain(text, allowing: false) else { return SchemaText.stringLiteral(text) }
        var result = "\""
        result.reserveCapacity(text.utf8.count + 2)
        result += text
        result += "\""
        return result
    }

    /// Text from the model made safe inside a Swift `//` or `///` comment: every scalar that ends
    /// a line (LF, CR, U+2028 …) or is invisible (controls, bidi overrides) is written `\u{…}`, so
    /// nothing after it can leave the comment and become code, and the comment shows it. Swift's
    /// comments follow the schema language's rules, so the schema's comment escaper serves.
    static func commentText(_ text: String) -> String {
        isPlain(text, allowing: true) ? text : SchemaText.commentText(text)
    }

    /// Whether the text is printable ASCII only, without `"` or `\` unless `allowing` them.
    /// A counted loop over the bytes, which a debug build (the build plugin's) runs without a call
    /// per byte, as `contains(where:)` makes.
    private static func isPlain(_ text: String, allowing quotes: Bool) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return true }
            var index = 0
            while index < bytes.count {
                let byte = base[index]
                if byte < 0x20 || byte >= 0x7F { return false }
                if !quotes && (byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")) { return false }
                index += 1
            }
            return true
        }
    }

    /// The Swift type of an attribute (without optionality).
    static func type(of attribute: AttributeType) -> String {
        switch attribute.kind {
        case .scalar(let scalar): scalar.swiftType
        case .enumeration(let description): identifier(description.name)
        case .composite(let description): identifier(description.name)
        case .codable(let typeName): typeName
        }
    }

    /// The Swift expression for a default value of an attribute type; `typeName` is the Swift name
    /// of the attribute's type, which qualifies an enum case (`Mood.none`: a bare `.none` would be
    /// `Optional.none` where the attribute is optional).
    static func expression(for value: DefaultValue, type: AttributeType, typeName: String? = nil) -> String {
        switch value {
        case .bool(let flag): return flag ? "true" : "false"
        case .integer(let integer): return String(integer)
        case .floatingPoint(let number):
            guard number.isFinite else { return nonFinite(number) }
            // A `Float` is written as the `Float` it is: the `Double`'s digits can lie just under
            // `Float`'s least normal value, which Swift refuses as an underflow.
            let isFloat: Bool
            if case .floatingPoint(isFloat: true)? = type.scalar?.literal { isFloat = true } else { isFloat = false }
            let text = isFloat ? "\(Float(number))" : "\(number)"
            // `-0` is the integer zero, which Swift converts to +0.0: a negative value keeps its point.
            return text.hasSuffix(".0") && number.sign == .plus ? String(text.dropLast(2)) : text
        case .decimal(let text): return decimal(text)
        case .string(let text):
            guard case .text(let rule)? = type.scalar?.literal else { return string(text) }
            return rule.swiftExpression(string(text))
        case .date(let seconds):
            return "Date(timeIntervalSince1970: \(seconds.isFinite ? "\(seconds)" : nonFinite(seconds)))"
        case .now: return "Date()"
        case .enumCase(let name): return (typeName ?? "") + "." + identifier(name)
        }
    }

    /// A non-finite `Double` as Swift spells it: `"\(number)"` would print `inf` or `nan`, which
    /// are not literals. Validation refuses such defaults; this keeps the output Swift regardless.
    private static func nonFinite(_ number: Double) -> String {
        number.isNaN ? "Double.nan" : number < 0 ? "-Double.infinity" : "Double.infinity"
    }

    /// An exact `Decimal` expression for decimal text such as `-19.99` or `1e3`.
    private static func decimal(_ text: String) -> String {
        guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { return "0" }
        let sign = value.sign == .minus ? ".minus" : ".plus"
        let significand = (value.sign == .minus ? -value : value).significand
        // The significand is an integer literal, which `Decimal` takes only up to `Int.max`
        // (a larger one fails to compile); past that, the exact text is parsed, which cannot fail.
        guard significand <= Decimal(Int64.max) else {
            return "Decimal(string: \(string("\(value)")), locale: Locale(identifier: \"en_US_POSIX\"))!"
        }
        return "Decimal(sign: \(sign), exponent: \(value.exponent), significand: \(significand))"
    }

    /// A Swift expression that rebuilds an attribute type as a runtime value; enums and composites
    /// refer to the declaration `reference` names.
    static func attributeType(_ type: AttributeType, reference: (String) -> String) -> String {
        switch type.kind {
        case .scalar(let scalar): return "." + scalar.name
        case .enumeration(let description):
            return ".enumeration(\(reference(description.name)))"
        case .composite(let description):
            return ".composite(\(reference(description.name)))"
        case .codable(let typeName):
            return ".codable(typeName: \(string(typeName)))"
        }
    }

    /// A Swift expression that rebuilds a default value as the runtime describes it, such as
    /// `.integer(0)` or `.enumCase("member")`.
    static func defaultValue(_ value: DefaultValue) -> String {
        switch value {
        case .bool(let flag): ".bool(\(flag))"
        case .integer(let integer): ".integer(\(integer))"
        case .floatingPoint(let number): ".floatingPoint(\(number.isFinite ? "\(number)" : nonFinite(number)))"
        case .decimal(let text): ".decimal(\(string(text)))"
        case .string(let text): ".string(\(string(text)))"
        case .date(let seconds): ".date(secondsSince1970: \(seconds.isFinite ? "\(seconds)" : nonFinite(seconds)))"
        case .now: ".now"
        case .enumCase(let name): ".enumCase(\(string(name)))"
        }
    }
}
