import Modelwright
import ModelwrightSchema
import Mustache

/// The context of one named request: a static function of the record type whose parameters are the
/// predicate's `$variables` and whose body builds the condition from the typed fields, so the
/// compiler checks the schema's predicate once more against the generated code.
///
/// ```swift
/// static func tripsOf(username: String, from: Date) -> FetchRequest<Trip> {
///     request().filter { $0.owner.username.equals(username, caseInsensitive: true) && $0.startsOn >= from }
/// }
/// ```
enum RequestContext {
    /// Lines longer than this are broken, as `swift format` would.
    private static let width = 120

    static func make(_ request: EntityGraph.Request, names: TypeNames) -> MustacheValue {
        let entity = names[request.entity]
        let name = SwiftSyntax.identifier(request.name)
        let parameters = request.parameters.map {
            "\(SwiftSyntax.identifier($0.name)): \(type(of: $0.kind, names: names))"
        }
        let result = "-> FetchRequest<\(entity)>"
        // The longest prefix a template gives the line: four spaces, `public static func `.
        var signature = "\(name)(\(parameters.joined(separator: ", "))) \(result)"
        if 4 + "public static func ".count + signature.count + 2 > width {
            signature = "\(name)(\n        \(parameters.joined(separator: ", "))\n    ) \(result)"
        }
        var doc = request.doc
        if let text = request.predicateText {
            if !doc.isEmpty { doc.append("") }
            doc.append("Predicate: `\(text)`")
        }
        return [
            "name": .string(name),
            "doc": docLines(doc),
            "signature": .string(signature),
            "body": .string(body(request.predicate, names: names)),
        ]
    }

    /// `request()`, or `request().filter { … }` on one line when it fits, else with each operand of
    /// the outermost `&&` or `||` on its own line.
    private static func body(_ predicate: EntityGraph.RequestPredicate?, names: TypeNames) -> String {
        guard let predicate else { return "request()" }
        let expression = render(predicate, names: names)
        let usesRecord = expression.contains("$0")
        let single = "request().filter { \(usesRecord ? "" : "_ in ")\(expression) }"
        guard 8 + single.count > width else { return single }
        let (operands, joiner): ([EntityGraph.RequestPredicate], String) =
            switch predicate {
            case .and(let operands): (operands, "&&")
            case .or(let operands): (operands, "||")
            default: ([predicate], "")
            }
        let lines = operands.enumerated().map { index, operand in
            let text = render(operand, inside: joiner == "&&" ? .and : .top, names: names)
            return index == 0 ? "            " + text : "                \(joiner) " + text
        }
        return "request().filter {\(usesRecord ? "" : " _ in")\n" + lines.joined(separator: "\n") + "\n        }"
    }

    private enum Context {
        case top, and, not
    }

    /// The Swift expression of a condition on `$0`.
    private static func render(
        _ predicate: EntityGraph.RequestPredicate, inside context: Context = .top, names: TypeNames
    ) -> String {
        switch predicate {
        case .constant(let value):
            return "Condition.constant(\(value))"
        case .not(let operand):
            // `!!` would lex as one operator.
            let inner = render(operand, inside: .not, names: names)
            return inner.hasPrefix("!") ? "!(\(inner))" : "!" + inner
        case .and(let operands):
            let text = operands.map { render($0, inside: .and, names: names) }.joined(separator: " && ")
            return context == .not ? "(\(text))" : text
        case .or(let operands):
            let text = operands.map { render($0, names: names) }.joined(separator: " || ")
            return context == .top ? text : "(\(text))"
        case .comparison(let comparison):
            let (text, isInfix) = render(comparison, names: names)
            return context == .not && isInfix ? "(\(text))" : text
        case .quantified(let path, let quantifier, let condition):
            let method =
                switch quantifier {
                case .any: "any"
                case .all: "all"
                case .none: "none"
                }
            return "\(keyPath(path)).\(method) { \(render(condition, names: names)) }"
        }
    }

    /// The comparison's expression, and whether it is an infix one (which `!` must parenthesise).
    private static func render(_ comparison: EntityGraph.RequestComparison, names: TypeNames) -> (
        String, isInfix: Bool
    ) {
        var path = comparison.path
        if case .toOne = comparison.target {
            // Generated fields name a to-one relationship's column `<name>ID`.
            path[path.count - 1] += "ID"
        }
        let key = comparison.target == .count ? keyPath(path) + ".count" : keyPath(path)
        let type: AttributeType? =
            switch comparison.target {
            case .attribute(let type, _): type
            default: nil
            }
        let values = comparison.values.map { value(of: $0, type: type) }
        var options = ""
        if comparison.caseInsensitive { options += ", caseInsensitive: true" }
        if comparison.diacriticInsensitive { options += ", diacriticInsensitive: true" }
        switch comparison.operation {
        case .equal, .notEqual:
            let negation = comparison.operation == .notEqual ? "!" : ""
            if comparison.values == [.constant(nil)] {
                return (key + (negation.isEmpty ? ".isNil" : ".isNotNil"), false)
            }
            if !options.isEmpty {
                return ("\(negation)\(key).equals(\(values[0])\(options))", false)
            }
            return ("\(key) \(comparison.operation.rawValue) \(values[0])", true)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            return ("\(key) \(comparison.operation.rawValue) \(values[0])", true)
        case .beginsWith:
            return ("\(key).hasPrefix(\(values[0])\(options))", false)
        case .endsWith:
            return ("\(key).hasSuffix(\(values[0])\(options))", false)
        case .contains:
            return ("\(key).contains(\(values[0])\(options))", false)
        case .like:
            return ("\(key).like(\(values[0])\(options))", false)
        case .in:
            if case .parameter = comparison.values.first, comparison.values.count == 1 {
                return ("\(key).in(\(values[0]))", false)
            }
            // Typed, so a list of literals reads as the attribute's type and not its optional.
            let element = type.map { names.type(of: $0) } ?? "Int"
            return ("\(key).in([\(values.joined(separator: ", "))] as [\(element)])", false)
        case .between:
            return ("\(key).between(\(values[0]), \(values[1]))", false)
        }
    }

    private static func keyPath(_ path: [String]) -> String {
        "$0." + path.map(SwiftSyntax.identifier).joined(separator: ".")
    }

    private static func value(of value: EntityGraph.RequestValue, type: AttributeType?) -> String {
        switch value {
        case .parameter(let name):
            return SwiftSyntax.identifier(name)
        case .constant(nil):
            return "nil"
        case .constant(.some(let constant)):
            return SwiftSyntax.expression(for: constant, type: type ?? .int)
        }
    }

    private static func type(of kind: EntityGraph.RequestParameter.Kind, names: TypeNames) -> String {
        switch kind {
        case .value(let type): names.type(of: type)
        case .list(let type): "[\(names.type(of: type))]"
        case .id(let entity): names[entity] + ".ID"
        case .count: "Int"
        }
    }
}
