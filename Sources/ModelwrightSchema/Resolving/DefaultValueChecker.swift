import Foundation
import Modelwright

/// Types a default value against its attribute, explaining a mismatch in the schema's terms.
enum DefaultValueChecker {
    /// The typed default, or the reason the literal does not fit.
    /// `role` names the literal in messages: a request's constant is not a default value.
    /// `isCase` answers whether an enum (by name) has a case, from an index; `nil` (or its `nil`)
    /// scans the cases.
    static func check(
        _ literal: AST.Literal, for type: AttributeType, isOptional: Bool, role: String = "default value",
        isCase: (_ enumeration: String, _ name: String) -> Bool? = { _, _ in nil }
    ) -> Result<DefaultValue?, DefaultValueProblem> {
        if case .null = literal.kind {
            return isOptional
                ? .success(nil)
                : .failure(
                    .init("'nil' is not a value of a non-optional attribute", hint: "make the type optional with '?'"))
        }
        if let scalar = type.scalar {
            return check(literal, for: scalar, role: role)
        }
        switch (type, literal.kind) {
        case (.enumeration(let enumeration), .bareWord(let word)):
            guard isCase(enumeration.name, word) ?? enumeration.cases.contains(where: { $0.name == word }) else {
                return check(
                    AST.Literal(kind: .enumCase(word), range: literal.range), for: type, isOptional: isOptional,
                    role: role, isCase: isCase)
            }
            return .failure(
                .init(
                    "expected a value, found `\(word)`", hint: "an enum case is written with a leading dot: '.\(word)'")
            )
        case (.composite, .bareWord(let word)), (.codable, .bareWord(let word)):
            let kind = if case .composite = type { "a composite" } else { "a Codable type" }
            return .failure(
                .init(
                    "expected a value, found `\(word)`",
                    hint: "'\(typeName(type))' is \(kind), which takes no default value: remove '= \(word)'"))
        case (.enumeration(let enumeration), .enumCase(let name)):
            guard isCase(enumeration.name, name) ?? enumeration.cases.contains(where: { $0.name == name }) else {
                // Searched and listed only if the error is reported: an enum of thousands of
                // cases and thousands of wrong defaults would cost their product.
                let cases = enumeration.cases
                let listed = 20
                return .failure(
                    .init(
                        "enum '\(enumeration.name)' has no case '\(name)'",
                        suggesting: { offset in
                            Suggestion(
                                for: name, at: offset, prefix: ".",
                                otherwise: {
                                    "its cases are \(cases.prefix(listed).map { "." + $0.name }.joined(separator: ", "))"
                                        + (cases.count > listed ? " and \(cases.count - listed) more" : "")
                                }, among: { cases.map(\.name) })
                        }
                    )
                )
            }
            return .success(.enumCase(name))
        case (.composite, _), (.codable, _):
            return .failure(.init("\(typeName(type)) attributes cannot have a \(role)"))
        default:
            return .failure(
                .init("\(role) \(describe(literal.kind)) does not match the attribute's type \(typeName(type))")
            )
        }
    }

    /// A literal typed by the built-in type's rule (``ScalarType/literal``).
    private static func check(_ literal: AST.Literal, for scalar: ScalarType, role: String) -> Result<
        DefaultValue?, DefaultValueProblem
    > {
        let type = AttributeType(scalar)
        switch (scalar.literal, literal.kind) {
        case (.bool, .bool(let value)):
            return .success(.bool(value))
        case (.integer, .integer(let text)):
            return integer(text, in: scalar.integerRange ?? Int64.min...Int64.max, name: scalar.schemaSpelling)
        case (.floatingPoint(let isFloat), .integer(let text)), (.floatingPoint(let isFloat), .float(let text)):
            return floatingPoint(text, isFloat: isFloat)
        case (.decimal, .integer(let text)), (.decimal, .float(let text)):
            return decimal(text)
        case (.text(let rule), .string(let text)):
            guard let value = rule.parse(text) else {
                let problem = rule.problem(text)
                return .failure(.init(problem.message, hint: problem.hint))
            }
            return .success(.string(value))
        case (.instant, .now):
            return .success(.now)
        case (.instant, .string(let text)):
            guard let seconds = ISO8601Timestamp.secondsSince1970(text) else {
                return .failure(
                    .init(
                        "\"\(text)\" is not an ISO 8601 date",
                        hint: "write \"2024-05-01T09:30:00Z\", or 'now' for the insertion time")
                )
            }
            return .success(.date(secondsSince1970: seconds))
        case (.none, _):
            return .failure(.init("\(typeName(type)) attributes cannot have a \(role)"))
        default:
            return .failure(
                .init("\(role) \(describe(literal.kind)) does not match the attribute's type \(typeName(type))")
            )
        }
    }

    private static func integer(_ text: String, in range: ClosedRange<Int64>, name: String) -> Result<
        DefaultValue?, DefaultValueProblem
    > {
        guard let value = Int64(text), range.contains(value) else {
            return .failure(.init("\(text) does not fit in \(name) (\(range.lowerBound)...\(range.upperBound))"))
        }
        return .success(.integer(value))
    }

    /// A `Double` or `Float` value that the generated Swift and the store's SQL both hold as
    /// written. Swift refuses a literal that overflows, underflows (a nonzero value that becomes
    /// zero or subnormal) or, written as an integer, is not exactly representable; such a value is
    /// refused here, where the schema can say so. A fraction that rounds (`0.1`) is the type's
    /// nearest value, as in Swift.
    private static func floatingPoint(_ text: String, isFloat: Bool) -> Result<DefaultValue?, DefaultValueProblem> {
        let name = isFloat ? "Float" : "Double"
        // In range when the type's own rounding of the text is finite (`3.4028235e38`, Float's
        // greatest value as Swift prints it, lies just above it).
        guard let value = Double(text), value.isFinite, !isFloat || (Float(text)?.isFinite ?? false) else {
            return .failure(.init("\(text) does not fit in \(name)"))
        }
        // The value the generated code holds: a `Float` literal is rounded once, from the text.
        let held = isFloat ? Double(Float(text) ?? Float(value)) : value
        let leastNormal = isFloat ? Double(Float.leastNormalMagnitude) : Double.leastNormalMagnitude
        let significand = text.prefix { $0 != "e" && $0 != "E" }
        if held == 0 ? significand.contains(where: { ("1"..."9").contains($0) }) : abs(held) < leastNormal {
            return .failure(
                .init(
                    "\(text) is too close to zero for \(name), whose smallest normal magnitude is \(isFloat ? "\(Float.leastNormalMagnitude)" : "\(Double.leastNormalMagnitude)")",
                    hint: "write 0, or a value of at least that magnitude"))
        }
        // An integer literal must be exact (Swift refuses it otherwise), and so must an integer
        // written with a point (`16777217.0`): both say an exact value. A fraction or an exponent
        // takes the type's nearest value, as in Swift.
        let digits = text.filter { $0 != "-" && $0 != "+" }.drop { $0 == "0" }
        let isIntegerText = !text.contains { ".eE".contains($0) }
        let isWrittenAsInteger = value == value.rounded() && !text.contains { "eE".contains($0) }
        if isIntegerText ? String(digits) != exactDigits(of: held) : isWrittenAsInteger && held != value {
            return .failure(
                .init(
                    "\(text) is not exactly representable as \(name): it would become \(exactDigits(of: held).isEmpty ? "0" : (held < 0 ? "-" : "") + exactDigits(of: held))",
                    hint: isFloat
                        ? "write the value it becomes, or make the attribute a Double" : "write the value it becomes"))
        }
        return .success(.floatingPoint(value))
    }

    /// The decimal digits of an integral `Double`'s magnitude, exactly (`""` for zero): its
    /// significand doubled once per power of two, in base 10.
    private static func exactDigits(of value: Double) -> String {
        guard value != 0, value.isFinite else { return "" }
        var digits: [UInt8] = []  // least significant first
        var significand = abs(value).significandBitPattern | (1 << UInt64(Double.significandBitCount))
        var exponent = Int(abs(value).exponent) - Double.significandBitCount
        while exponent < 0, significand & 1 == 0 {
            significand >>= 1
            exponent += 1
        }
        while significand > 0 {
            digits.append(UInt8(significand % 10))
            significand /= 10
        }
        for _ in 0..<max(exponent, 0) {
            var carry: UInt8 = 0
            for index in digits.indices {
                let doubled = digits[index] * 2 + carry
                digits[index] = doubled % 10
                carry = doubled / 10
            }
            if carry > 0 { digits.append(carry) }
        }
        return String(digits.reversed().map { Character(String($0)) })
    }

    /// A `Decimal` value exactly as written: in `Decimal`'s range, and with at most the
    /// significant digits its 128-bit significand keeps, which it would otherwise drop silently.
    private static func decimal(_ text: String) -> Result<DefaultValue?, DefaultValueProblem> {
        guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            return .failure(.init("'\(text)' is not a valid Decimal", hint: "Decimal exponents range from -128 to 127"))
        }
        let significand = text.prefix { $0 != "e" && $0 != "E" }.filter(\.isNumber)
        let written = significand.drop { $0 == "0" }.reversed().drop { $0 == "0" }
        let kept = "\(value.significand)".filter(\.isNumber).reversed().drop { $0 == "0" }
        guard value == 0 || String(written) == String(kept) else {
            return .failure(
                .init(
                    "\(text) has more significant digits than Decimal keeps: it would become \(value)",
                    hint: "write at most 38 significant digits"))
        }
        return .success(.decimal(text))
    }

    private static func describe(_ kind: AST.Literal.Kind) -> String {
        switch kind {
        case .integer(let text), .float(let text): text
        case .string(let text): "\"\(text)\""
        case .bool(let value): "\(value)"
        case .enumCase(let name): ".\(name)"
        case .null: "nil"
        case .now: "now"
        case .bareWord(let word): word
        }
    }

    /// How a type is spelled in the schema language.
    static func typeName(_ type: AttributeType) -> String { type.schemaSpelling }
}

/// Why a default value does not fit its attribute, with a hint where one helps.
package struct DefaultValueProblem: Error {
    package let message: String
    package let hint: String?
    /// A "did you mean" hint pointing at the literal's offset, searched only if the error is reported.
    package let suggestion: (@Sendable (Int) -> Suggestion)?

    package init(_ message: String, hint: String? = nil, suggesting suggestion: (@Sendable (Int) -> Suggestion)? = nil)
    {
        self.message = message
        self.hint = hint
        self.suggestion = suggestion
    }
}
