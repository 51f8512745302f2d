import Modelwright

/// Resolves named requests against a built graph: each key path must reach an attribute, a to-one
/// relationship or a to-many relationship's `@count` (through `ANY`, `ALL` or `NONE` for a to-many
/// hop), each operator must fit what it compares, each constant must be a value of the attribute's
/// type, and each `$variable` gets one Swift type from where it is used.
struct RequestResolver {
    /// Names a request cannot take: the generated record type's own static members.
    static let reservedNames: Set<String> = ["request", "entityName", "columnCount", "schema", "init"]

    private let graph: EntityGraph
    private var diagnostics: DiagnosticSink
    /// The parameters of the request being resolved, in order of first use.
    private var parameters: [EntityGraph.RequestParameter] = []
    /// Where each parameter's variable was first used.
    private var parameterRanges: [String: SourceRange] = [:]
    /// Each enum's case names by raw value (the first case of each), built at the enum's first
    /// constant: searching the cases per constant cost constants × cases (7,000 constants of a
    /// 4,000-case enum in one `IN` list, 90 KB, took 2 s).
    private var casesByRawValue: [String: [String: String]] = [:]

    private init(graph: EntityGraph, diagnostics: DiagnosticSink) {
        self.graph = graph
        self.diagnostics = diagnostics
    }

    /// The resolved requests of `declarations`; problems are reported and the request left out.
    static func resolve(
        _ declarations: [AST.Request], in graph: EntityGraph, diagnostics: inout DiagnosticSink
    ) -> [EntityGraph.Request] {
        var resolver = RequestResolver(graph: graph, diagnostics: diagnostics)
        var resolved: [EntityGraph.Request] = []
        var first: [String: AST.Name] = [:]
        for declaration in declarations {
            if let earlier = first[declaration.name.text] {
                resolver.diagnostics.error(
                    "duplicate request '\(declaration.name.text)'", at: declaration.name.range.start,
                    notes: [("'\(declaration.name.text)' is first declared here", earlier.range.start)])
                continue
            }
            first[declaration.name.text] = declaration.name
            if let request = resolver.resolve(declaration) { resolved.append(request) }
        }
        diagnostics = resolver.diagnostics
        return resolved
    }

    private mutating func resolve(_ declaration: AST.Request) -> EntityGraph.Request? {
        let name = declaration.name
        if let problem = NameRules.problem(withMemberName: name.text, kind: "request") {
            diagnostics.error(problem, at: name.range.start)
            return nil
        }
        if Self.reservedNames.contains(name.text) {
            diagnostics.error(
                "'\(name.text)' is a member every generated record has; choose another request name",
                at: name.range.start)
            return nil
        }
        guard let entity = graph.entity(named: declaration.entity.text) else {
            diagnostics.error(
                "request '\(name.text)' fetches unknown entity '\(declaration.entity.text)'",
                at: declaration.entity.range.start,
                suggesting: Suggestion(
                    for: declaration.entity.text, among: graph.entities.map(\.name), at: declaration.entity.range.start)
            )
            return nil
        }
        parameters = []
        parameterRanges = [:]
        var predicate: EntityGraph.RequestPredicate?
        if let written = declaration.predicate {
            guard let resolved = resolve(written, on: entity) else { return nil }
            predicate = resolved
        }
        return EntityGraph.Request(
            name: name.text, entity: entity.name, parameters: parameters, predicate: predicate,
            predicateText: declaration.predicateText, doc: declaration.doc, range: declaration.range)
    }

    // MARK: - Predicates

    private mutating func resolve(_ predicate: AST.Predicate, on entity: EntityGraph.Entity)
        -> EntityGraph.RequestPredicate?
    {
        switch predicate {
        case .constant(let value, _):
            return .constant(value)
        case .not(let operand):
            return resolve(operand, on: entity).map { .not($0) }
        case .and(let operands):
            let resolved = operands.compactMap { resolve($0, on: entity) }
            return resolved.count == operands.count ? .and(resolved) : nil
        case .or(let operands):
            let resolved = operands.compactMap { resolve($0, on: entity) }
            return resolved.count == operands.count ? .or(resolved) : nil
        case .comparison(let comparison):
            return resolve(comparison, on: entity)
        }
    }

    private mutating func resolve(_ comparison: AST.Comparison, on entity: EntityGraph.Entity)
        -> EntityGraph.RequestPredicate?
    {
        guard case .keyPath(let names) = comparison.left else {
            fail("the left side of \(comparison.operation.rawValue) must be a key path", at: comparison.left.range)
            return nil
        }
        // Walk to-one hops up to the first to-many relationship or the end.
        var current = entity
        var hops: [String] = []
        for (index, segment) in names.enumerated() {
            let isLast = index == names.count - 1
            if segment.text == "@count" {
                fail("@count follows a to-many relationship", at: segment.range)
                return nil
            }
            if let attribute = graph.allAttributes(of: current).first(where: { $0.name == segment.text }) {
                guard isLast else {
                    fail(
                        "'\(segment.text)' is an attribute of '\(current.name)'; a key path continues only through relationships",
                        at: names[index + 1].range)
                    return nil
                }
                if let quantifier = comparison.quantifier {
                    fail(
                        "\(quantifier.kind.rawValue) needs a to-many relationship in the key path", at: quantifier.range
                    )
                    return nil
                }
                return comparing(
                    hops + [segment.text], .attribute(attribute.type, isOptional: attribute.isOptional), comparison,
                    at: SourceRange(start: names[0].range.start, end: segment.range.end))
            }
            guard let relationship = graph.allRelationships(of: current).first(where: { $0.name == segment.text }),
                let destination = graph.entity(named: relationship.destination)
            else {
                diagnostics.error(
                    "'\(current.name)' has no attribute or relationship '\(segment.text)'", at: segment.range.start,
                    suggesting: Suggestion(
                        for: segment.text,
                        among: graph.allAttributes(of: current).map(\.name)
                            + graph.allRelationships(of: current).map(\.name),
                        at: segment.range.start))
                return nil
            }
            if relationship.cardinality == .toOne {
                if isLast {
                    if let quantifier = comparison.quantifier {
                        fail(
                            "\(quantifier.kind.rawValue) needs a to-many relationship in the key path",
                            at: quantifier.range)
                        return nil
                    }
                    return comparing(
                        hops + [segment.text],
                        .toOne(
                            entity: destination.name, isOptional: relationship.isOptional,
                            idProperty: relationship.idProperty),
                        comparison,
                        at: SourceRange(start: names[0].range.start, end: segment.range.end))
                }
                hops.append(segment.text)
                current = destination
                continue
            }
            // A to-many relationship: `@count`, or a quantifier over the rest of the path.
            let rest = Array(names[(index + 1)...])
            if rest.count == 1, rest[0].text == "@count" {
                if let quantifier = comparison.quantifier {
                    fail("\(quantifier.kind.rawValue) does not apply to @count", at: quantifier.range)
                    return nil
                }
                return comparing(
                    hops + [segment.text], .count, comparison,
                    at: SourceRange(start: names[0].range.start, end: rest[0].range.end))
            }
            guard let quantifier = comparison.quantifier else {
                fail(
                    "'\(segment.text)' is a to-many relationship: write ANY, ALL or NONE before the key path, or compare '\(segment.text).@count'",
                    at: segment.range)
                return nil
            }
            guard !rest.isEmpty else {
                fail(
                    "\(quantifier.kind.rawValue) compares a property of the destinations: continue the key path after '\(segment.text)'",
                    at: segment.range)
                return nil
            }
            var inner = comparison
            inner.quantifier = nil
            inner.left = .keyPath(rest)
            guard let condition = resolve(inner, on: destination) else { return nil }
            if containsToMany(condition) {
                fail("a key path may pass through one to-many relationship", at: rest[0].range)
                return nil
            }
            return .quantified(path: hops + [segment.text], quantifier: quantifier.kind, condition: condition)
        }
        return nil
    }

    private func containsToMany(_ predicate: EntityGraph.RequestPredicate) -> Bool {
        if case .quantified = predicate { return true }
        return false
    }

    /// The comparison of the key path `path`, which ends at `target`, with the right side.
    private mutating func comparing(
        _ path: [String], _ target: EntityGraph.RequestComparison.Target, _ comparison: AST.Comparison,
        at range: SourceRange
    ) -> EntityGraph.RequestPredicate? {
        let operation = comparison.operation
        let described = describe(target, path: path)
        let hasOptions = comparison.caseInsensitive || comparison.diacriticInsensitive
        var values: [EntityGraph.RequestValue] = []
        switch operation {
        case .beginsWith, .endsWith, .contains, .like:
            guard case .attribute(.string, _) = target else {
                fail("\(operation.rawValue) compares strings, and \(described)", at: comparison.operatorRange)
                return nil
            }
            guard let value = value(comparison.right, for: target, kind: .value(.string), allowsNil: false) else {
                return nil
            }
            values = [value]
        case .in:
            guard let list = listValues(comparison.right, for: target) else { return nil }
            values = list
        case .between:
            guard isOrdered(target) else {
                fail("BETWEEN needs values with an order, and \(described)", at: comparison.operatorRange)
                return nil
            }
            guard case .list(let bounds, let listRange) = comparison.right, bounds.count == 2 else {
                fail("BETWEEN takes two bounds in braces: {$low, $high}", at: comparison.right.range)
                return nil
            }
            _ = listRange
            let kind = parameterKind(for: target)
            guard let low = value(bounds[0], for: target, kind: kind, allowsNil: false),
                let high = value(bounds[1], for: target, kind: kind, allowsNil: false)
            else { return nil }
            values = [low, high]
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard !hasOptions else {
                fail(
                    "[c] and [d] apply to ==, !=, BEGINSWITH, ENDSWITH, CONTAINS and LIKE", at: comparison.operatorRange
                )
                return nil
            }
            guard isOrdered(target) else {
                fail("\(operation.rawValue) needs values with an order, and \(described)", at: comparison.operatorRange)
                return nil
            }
            guard let value = value(comparison.right, for: target, kind: parameterKind(for: target), allowsNil: false)
            else { return nil }
            values = [value]
        case .equal, .notEqual:
            if hasOptions,
                !(target == .attribute(.string, isOptional: false) || target == .attribute(.string, isOptional: true))
            {
                fail("[c] and [d] apply to strings, and \(described)", at: comparison.operatorRange)
                return nil
            }
            if case .attribute(let type, _) = target, !isEquatable(type) {
                fail("\(described); it cannot be compared", at: range)
                return nil
            }
            let allowsNil: Bool
            switch target {
            case .attribute(_, let isOptional): allowsNil = isOptional && !hasOptions
            case .toOne(_, let isOptional, _): allowsNil = isOptional
            case .count: allowsNil = false
            }
            guard
                let value = value(comparison.right, for: target, kind: parameterKind(for: target), allowsNil: allowsNil)
            else { return nil }
            values = [value]
        }
        return .comparison(
            EntityGraph.RequestComparison(
                path: path, target: target, operation: operation, caseInsensitive: comparison.caseInsensitive,
                diacriticInsensitive: comparison.diacriticInsensitive, values: values))
    }

    private mutating func listValues(_ operand: AST.Operand, for target: EntityGraph.RequestComparison.Target)
        -> [EntityGraph.RequestValue]?
    {
        guard case .attribute(let type, _) = target, isEquatable(type) else {
            fail("IN compares an attribute with a list of values", at: operand.range)
            return nil
        }
        switch operand {
        case .variable:
            return value(operand, for: target, kind: .list(type), allowsNil: false).map { [$0] }
        case .list(let elements, _):
            var values: [EntityGraph.RequestValue] = []
            for element in elements {
                guard case .literal = element else {
                    fail("a list after IN holds constants; pass a whole list as one $variable", at: element.range)
                    return nil
                }
                guard let value = value(element, for: target, kind: .value(type), allowsNil: false) else { return nil }
                values.append(value)
            }
            return values
        default:
            fail("IN takes a list in braces, {'a', 'b'}, or a $variable holding one", at: operand.range)
            return nil
        }
    }

    /// The right side as a value compared with `target`: a parameter of `kind`, or a typed constant.
    private mutating func value(
        _ operand: AST.Operand, for target: EntityGraph.RequestComparison.Target,
        kind: EntityGraph.RequestParameter.Kind, allowsNil: Bool
    ) -> EntityGraph.RequestValue? {
        switch operand {
        case .variable(let variable):
            return parameter(variable, kind: kind).map { .parameter($0) }
        case .literal(let literal):
            if case .null = literal.kind {
                guard allowsNil else {
                    fail("NIL never matches here: the value is never missing", at: literal.range)
                    return nil
                }
                return .constant(nil)
            }
            switch target {
            case .toOne:
                fail(
                    "a to-one relationship compares with a $variable holding a record's ID, or with NIL",
                    at: literal.range)
                return nil
            case .count:
                guard case .integer(let text) = literal.kind, let count = Int64(text), count >= 0 else {
                    fail("@count compares with a whole number", at: literal.range)
                    return nil
                }
                return .constant(.integer(count))
            case .attribute(let type, _):
                return constant(literal, of: type)
            }
        case .keyPath, .list:
            fail("expected a $variable or a constant", at: operand.range)
            return nil
        }
    }

    private mutating func constant(_ literal: AST.Literal, of type: AttributeType) -> EntityGraph.RequestValue? {
        var typed = literal
        if case .enumeration(let enumeration) = type {
            // NSPredicate compares an enum's stored raw value: 'administrator' is `.admin`.
            let raw: String? =
                switch literal.kind {
                case .string(let text), .integer(let text): text
                default: nil
                }
            if casesByRawValue[enumeration.name] == nil {
                casesByRawValue[enumeration.name] = Dictionary(
                    enumeration.cases.map { ($0.rawValue, $0.name) }, uniquingKeysWith: { first, _ in first })
            }
            guard let raw, let match = casesByRawValue[enumeration.name]?[raw] else {
                fail(
                    "no case of enum '\(enumeration.name)' has the raw value \(Self.spelling(literal))",
                    at: literal.range)
                return nil
            }
            typed.kind = .enumCase(match)
        }
        // A case found above is one of the enum's cases: the checker need not search for it again.
        switch DefaultValueChecker.check(
            typed, for: type, isOptional: false, role: "constant", isCase: { _, _ in true })
        {
        case .success(let value):
            return .constant(value)
        case .failure(let problem):
            diagnostics.error(
                problem.message, at: literal.range.start,
                notes: problem.hint.map { [($0, literal.range.start)] } ?? [],
                suggesting: problem.suggestion?(literal.range.start))
            return nil
        }
    }

    /// The Swift parameter for `variable`, declared on first use; a second use must agree on the type.
    private mutating func parameter(_ variable: AST.Name, kind: EntityGraph.RequestParameter.Kind) -> String? {
        let name = Self.parameterName(variable.text)
        // Point at the `$`, as written.
        let written = SourceRange(start: variable.range.start - 1, end: variable.range.end)
        if let problem = NameRules.problem(withMemberName: name, kind: "parameter") {
            fail(problem, at: written)
            return nil
        }
        if let existing = parameters.first(where: { $0.name == name }) {
            guard existing.variable == variable.text else {
                fail(
                    "$\(variable.text) and $\(existing.variable) both become the parameter '\(name)'; rename one",
                    at: written)
                return nil
            }
            guard existing.kind == kind else {
                diagnostics.error(
                    "$\(variable.text) is used as \(Self.describe(kind)) here and as \(Self.describe(existing.kind)) before",
                    at: written.start,
                    notes: [("first used here", parameterRanges[name]?.start ?? written.start)])
                return nil
            }
            return name
        }
        parameters.append(EntityGraph.RequestParameter(name: name, variable: variable.text, kind: kind))
        parameterRanges[name] = written
        return name
    }

    /// `$SITE_ID` → `siteID`, `$humanName` → `humanName`, `$Status` → `status`.
    static func parameterName(_ variable: String) -> String {
        let words = variable.split(separator: "_").map(String.init)
        guard words.count > 1 || variable == variable.uppercased() else {
            return NameRules.recased(variable, uppercase: false)
        }
        let acronyms: Set<String> = ["ID", "URL", "UUID"]
        return words.enumerated().map { index, word in
            if index == 0 { return word.lowercased() }
            return acronyms.contains(word.uppercased())
                ? word.uppercased() : word.prefix(1).uppercased() + word.dropFirst().lowercased()
        }.joined()
    }

    // MARK: - Types

    private func parameterKind(for target: EntityGraph.RequestComparison.Target) -> EntityGraph.RequestParameter.Kind {
        switch target {
        case .attribute(let type, _): .value(type)
        case .toOne(let entity, _, _): .id(entity: entity)
        case .count: .count
        }
    }

    private func isOrdered(_ target: EntityGraph.RequestComparison.Target) -> Bool {
        switch target {
        case .attribute(let type, _): type.scalar?.isOrdered ?? false
        case .toOne: false
        case .count: true
        }
    }

    private func isEquatable(_ type: AttributeType) -> Bool {
        switch type {
        case .composite, .codable: false
        default: true
        }
    }

    private func describe(_ target: EntityGraph.RequestComparison.Target, path: [String]) -> String {
        let key = path.joined(separator: ".")
        switch target {
        case .attribute(let type, _): return "'\(key)' is \(Self.typeName(type))"
        case .toOne(let entity, _, _): return "'\(key)' is a to-one relationship to '\(entity)'"
        case .count: return "'\(key).@count' is a number"
        }
    }

    private static func describe(_ kind: EntityGraph.RequestParameter.Kind) -> String {
        switch kind {
        case .value(let type): typeName(type)
        case .list(let type): "a list of \(typeName(type))"
        case .id(let entity): "the ID of a '\(entity)'"
        case .count: "a count"
        }
    }

    private static func typeName(_ type: AttributeType) -> String {
        switch type.kind {
        case .scalar(let scalar): scalar.phrase
        case .enumeration(let description): "the enum '\(description.name)'"
        case .composite(let description): "the composite '\(description.name)'"
        case .codable(let name): "Codable<\(name)>"
        }
    }

    private static func spelling(_ literal: AST.Literal) -> String {
        switch literal.kind {
        case .string(let text): "'\(text)'"
        case .integer(let text), .float(let text): text
        case .bool(let flag): flag ? "TRUE" : "FALSE"
        case .enumCase(let name): "." + name
        case .bareWord(let word): word
        case .null: "NIL"
        case .now: "now"
        }
    }

    private mutating func fail(_ message: String, at range: SourceRange) {
        diagnostics.error(message, at: range.start)
    }
}
