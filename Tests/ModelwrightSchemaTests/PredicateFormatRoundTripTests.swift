import Modelwright
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

/// The `NSPredicate` format the runtime renders a condition as reads back as the same condition:
/// random trees of every operator `NSPredicate` can spell without a subquery are rendered by
/// `PredicateFormatRenderer`, their arguments written into the text as literals, parsed by the
/// front end's `PredicateParser` (the reader of Core Data's fetch request templates) and turned
/// back into a `Condition`. A derived operator (`notInList`) comes back as the condition it
/// stands for.
struct PredicateFormatRoundTripTests {
    @Test func renderedFormatParsesBackToTheSameCondition() throws {
        var derived = 0
        for index in 0..<2000 {
            var random = SplitMix64(seed: 0xF0_12, index: index)
            let condition = RoundTripTrees.condition(&random, depth: 3)
            if condition.mentionsNotIn { derived += 1 }
            let rendered = PredicateFormatRenderer.render(condition)
            let text = try #require(RoundTripTrees.substitute(rendered), "\(condition): \(rendered)")
            let parsed = try PredicateParser.parse(text).get()
            #expect(
                RoundTripTrees.condition(of: parsed) == RoundTripTrees.expected(condition),
                "\(condition)\nformat: \(text)")
        }
        #expect(derived > 200, "enough trees hold the derived operator")
    }
}

/// Draws trees over two columns and a to-one hop, and reads a parsed predicate back.
private enum RoundTripTrees {
    static let paths = [
        ColumnPath(column: "rating"), ColumnPath(column: "title"), ColumnPath(hops: ["owner"], column: "name"),
    ]
    static let texts = ["", "a", "Ab", "é", "it's", "say \"hi\"", "back\\slash", "a*b?"]

    static func condition(_ random: inout SplitMix64, depth: Int) -> Condition {
        switch random.next(below: depth == 0 ? 7 : 10) {
        case 0: return .constant(random.next(below: 2) == 0)
        case 1:
            let path = paths[random.next(below: paths.count)]
            return .comparison(path, comparison(&random), value(for: path, &random))
        case 2:
            let (path, values) = pathAndList(&random)
            return .inList(path, values)
        case 3:
            let (path, values) = pathAndList(&random)
            return .notInList(path, values)
        case 4:
            let path = paths[random.next(below: paths.count)]
            return .between(path, value(for: path, &random, missing: false), value(for: path, &random, missing: false))
        case 5:
            let operation = [StringOperation.hasPrefix, .hasSuffix, .contains, .like, .equals][random.next(below: 5)]
            let options = StringComparisonOptions(rawValue: random.next(below: 4))
            return .string(paths[1 + random.next(below: 2)], operation, texts[random.next(below: texts.count)], options)
        case 6:
            let path = RelationshipPath(hops: random.next(below: 2) == 0 ? [] : ["owner"], relationship: "trips")
            return .count(path, comparison(&random), random.next(below: 4))
        case 7: return .not(condition(&random, depth: depth - 1))
        case 8: return .and((0..<random.next(below: 4)).map { _ in condition(&random, depth: depth - 1) })
        default: return .or((0..<random.next(below: 4)).map { _ in condition(&random, depth: depth - 1) })
        }
    }

    private static func comparison(_ random: inout SplitMix64) -> ComparisonOperator {
        [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual][random.next(below: 6)]
    }

    private static func value(for path: ColumnPath, _ random: inout SplitMix64, missing: Bool = true) -> SQLValue {
        if missing, random.next(below: 6) == 0 { return .null }
        return path.column == "rating"
            ? .integer(Int64(random.next(below: 7)) - 3) : .text(texts[random.next(below: texts.count)])
    }

    private static func pathAndList(_ random: inout SplitMix64) -> (path: ColumnPath, values: [SQLValue]) {
        let path = paths[random.next(below: paths.count)]
        return (path, (0..<(1 + random.next(below: 3))).map { _ in value(for: path, &random) })
    }

    // MARK: - Rendered text

    /// The format with each `%K` replaced by its key path and each `%@` by a literal.
    static func substitute(_ rendered: PredicateFormat) -> String? {
        var arguments = rendered.arguments[...]
        var text = ""
        var scalars = rendered.format.unicodeScalars[...]
        while let first = scalars.popFirst() {
            guard first == "%", let marker = scalars.popFirst() else {
                text.unicodeScalars.append(first)
                continue
            }
            guard let argument = arguments.popFirst() else { return nil }
            switch (marker, argument) {
            case ("K", .keyPath(let path)): text += path
            case ("@", .value(let value)): text += literal(value)
            case ("@", .list(let values)): text += "{" + values.map(literal).joined(separator: ", ") + "}"
            default: return nil
            }
        }
        return arguments.isEmpty ? text : nil
    }

    private static func literal(_ value: SQLValue) -> String {
        switch value {
        case .null: "NIL"
        case .integer(let number): String(number)
        case .text(let text):
            "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        case .real(let number): "\(number)"
        case .blob: "?"
        }
    }

    // MARK: - Reading back

    /// The condition a parsed predicate says, as `Condition` spells it.
    static func condition(of predicate: AST.Predicate) -> Condition? {
        switch predicate {
        case .constant(let value, _): return .constant(value)
        case .not(let operand): return condition(of: operand).map(Condition.not)
        case .and(let operands):
            let read = operands.compactMap(condition(of:))
            return read.count == operands.count ? .and(read) : nil
        case .or(let operands):
            let read = operands.compactMap(condition(of:))
            return read.count == operands.count ? .or(read) : nil
        case .comparison(let comparison): return condition(of: comparison)
        }
    }

    private static func condition(of comparison: AST.Comparison) -> Condition? {
        guard comparison.quantifier == nil, case .keyPath(let names) = comparison.left else { return nil }
        let keys = names.map(\.text)
        var options: StringComparisonOptions = []
        if comparison.caseInsensitive { options.insert(.caseInsensitive) }
        if comparison.diacriticInsensitive { options.insert(.diacriticInsensitive) }
        let path = ColumnPath(hops: Array(keys.dropLast()), column: keys[keys.count - 1])
        let operators: [AST.PredicateOperator: ComparisonOperator] = [
            .equal: .equal, .notEqual: .notEqual, .less: .less, .lessOrEqual: .lessOrEqual, .greater: .greater,
            .greaterOrEqual: .greaterOrEqual,
        ]
        let strings: [AST.PredicateOperator: StringOperation] = [
            .beginsWith: .hasPrefix, .endsWith: .hasSuffix, .contains: .contains, .like: .like,
        ]
        switch (comparison.operation, comparison.right) {
        case (let operation, .literal(let literal)) where keys.last == "@count":
            guard let op = operators[operation], case .integer(let text) = literal.kind, let number = Int(text) else {
                return nil
            }
            let owner = Array(keys.dropLast())
            return .count(
                RelationshipPath(hops: Array(owner.dropLast()), relationship: owner[owner.count - 1]), op, number)
        case (.equal, .literal(let literal)) where !options.isEmpty:
            guard case .string(let text) = literal.kind else { return nil }
            return .string(path, .equals, text, options)
        case (let operation, .literal(let literal)):
            if let op = operators[operation] { return value(literal).map { .comparison(path, op, $0) } }
            guard let string = strings[operation], case .string(let text) = literal.kind else { return nil }
            return .string(path, string, text, options)
        case (.in, .list(let elements, _)):
            let values = elements.compactMap(value)
            return values.count == elements.count ? .inList(path, values) : nil
        case (.between, .list(let elements, _)):
            let values = elements.compactMap(value)
            return values.count == 2 ? .between(path, values[0], values[1]) : nil
        default:
            return nil
        }
    }

    private static func value(_ operand: AST.Operand) -> SQLValue? {
        guard case .literal(let literal) = operand else { return nil }
        return value(literal)
    }

    private static func value(_ literal: AST.Literal) -> SQLValue? {
        switch literal.kind {
        case .integer(let text): Int64(text).map(SQLValue.integer)
        case .string(let text): .text(text)
        case .null: .null
        default: nil
        }
    }

    // MARK: - What comes back

    /// `condition` as its format says it: a derived operator as what it stands for, a string
    /// `equals` without folding as `==`, an ordering comparison with nil as `FALSEPREDICATE`, and
    /// `AND` and `OR` of one operand as that operand, of none as the constant.
    static func expected(_ condition: Condition) -> Condition {
        switch condition {
        case .notInList(let path, let values): .not(.inList(path, values))
        case .string(let path, .equals, let text, let options) where options.isEmpty:
            .comparison(path, .equal, .text(text))
        case .comparison(_, let op, .null) where op != .equal && op != .notEqual: .constant(false)
        case .not(let operand): .not(expected(operand))
        case .and(let operands):
            operands.count == 1
                ? expected(operands[0]) : operands.isEmpty ? .constant(true) : .and(operands.map(expected))
        case .or(let operands):
            operands.count == 1
                ? expected(operands[0]) : operands.isEmpty ? .constant(false) : .or(operands.map(expected))
        default: condition
        }
    }
}

extension Condition {
    /// Whether the tree holds a `notInList` anywhere.
    fileprivate var mentionsNotIn: Bool {
        switch self {
        case .notInList: true
        case .not(let operand): operand.mentionsNotIn
        case .and(let operands), .or(let operands): operands.contains { $0.mentionsNotIn }
        case .quantified(_, _, let operand): operand.mentionsNotIn
        default: false
        }
    }
}
