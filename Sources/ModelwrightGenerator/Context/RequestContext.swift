import Modelwright
import ModelwrightSchema
import Mustache

/// The context of one named request: a static function of the record type whose parameters are the
/// predicate's `$variables` and whose body builds the condition from the typed fields, so the
/// compiler checks the schema's predicate once more against the generated code.
///
/// ```swift
/// static func tripsOf(
///     username: String,
///     from: Date
/// ) -> FetchRequest<Trip> {
///     request().filter {
///         $0.owner.username.equals(username, caseInsensitive: true)
///             && $0.startsOn >= from
///     }
/// }
/// ```
///
/// The context holds the parts (parameters, the operands of the outermost `&&` or `||`), and
/// `Queries.mustache` lays them out: one parameter per line and one operand per line, whatever
/// their length.
enum RequestContext {
    static func make(_ request: EntityGraph.Request, names: TypeNames) -> MustacheValue {
        let parameters = request.parameters.enumerated().map { index, parameter -> MustacheValue in
            [
                "name": .string(SwiftSpelling.identifier(parameter.name)),
                "type": .string(type(of: parameter.kind, names: names)),
                "separator": .string(index == request.parameters.count - 1 ? "" : ","),
            ]
        }
        var doc = request.doc
        if let text = request.predicateText {
            if !doc.isEmpty { doc.append("") }
            doc.append("Predicate: `\(text)`")
        }
        let operands = request.predicate.map { Self.operands(of: $0, names: names) } ?? []
        return [
            "name": .string(SwiftSpelling.identifier(request.name)),
            "record": .string(names[request.entity]),
            "doc": docLines(doc),
            "hasParameters": .bool(!parameters.isEmpty),
            "parameters": .list(parameters),
            "hasPredicate": .bool(!operands.isEmpty),
            "usesRecord": .bool(operands.contains { $0.text.contains("$0") }),
            "operands": .list(
                operands.map { operand -> MustacheValue in
                    ["text": .string(operand.text), "joiner": operand.joiner.map { .string($0) } ?? .null]
                }),
        ]
    }

    /// The operands of the outermost `&&` or `||`, each with the operator before it (none before
    /// the first), or the whole condition as one operand.
    private static func operands(of predicate: EntityGraph.RequestPredicate, names: TypeNames) -> [(
        text: String, joiner: String?
    )] {
        let (operands, joiner, context): ([EntityGraph.RequestPredicate], String?, Context) =
            switch predicate {
            case .and(let operands): (operands, "&&", .and)
            case .or(let operands): (operands, "||", .top)
            default: ([predicate], nil, .top)
            }
        return operands.enumerated().map { index, operand in
            (render(operand, inside: context, names: names), index == 0 ? nil : joiner)
        }
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
        if case .toOne(_, _, let idProperty) = comparison.target {
            // A to-one relationship is compared through its generated ID field, named by the namespace model.
            path[path.count - 1] = idProperty
        }
        let key = comparison.target == .count ? keyPath(path) + ".count" : keyPath(path)
        let type: AttributeType? =
            switch comparison.target {
            case .attribute(let type, _): type
            default: nil
            }
        let values = comparison.values.map { value(of: $0, type: type, names: names) }
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
        "$0." + path.map(SwiftSpelling.identifier).joined(separator: ".")
    }

    private static func value(of value: EntityGraph.RequestValue, type: AttributeType?, names: TypeNames) -> String {
        switch value {
        case .parameter(let name):
            return SwiftSpelling.identifier(name)
        case .constant(nil):
            return "nil"
        case .constant(.some(let constant)):
            return SwiftSpelling.expression(for: constant, type: type ?? .int, typeName: type.map(names.type(of:)))
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
