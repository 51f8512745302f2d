import Foundation
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

/// The rule `validate` promises: a model it accepts generates code that compiles with
/// `-warnings-as-errors`. Checked on models whose names are drawn from Swift's keywords, the
/// members of generated records and of the runtime, SQL's keywords and their case variants, in
/// every place a name goes, and on seeded random models of every attribute type, relationship
/// kind and inheritance shape.
///
/// `MODELWRIGHT_NAMES_MODELS=<n>` type-checks `n` random models instead of the CI's 6.
@Suite(.heavy)
struct ReservedNameTests {
    static let swiftKeywords = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout",
        "internal", "let", "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows",
        "static", "struct", "subscript", "typealias", "var", "break", "case", "catch", "continue", "default", "defer",
        "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "throw", "switch", "where",
        "while", "as", "await", "false", "is", "nil", "self", "super", "throws", "true", "try", "some", "any",
        "async", "actor", "nonisolated", "isolated", "consuming", "borrowing", "mutating", "nonmutating",
        "convenience", "dynamic", "final", "lazy", "optional", "required", "override", "unowned", "weak",
        "indirect", "prefix", "postfix", "infix", "get", "set", "willSet", "didSet", "package", "macro", "each",
        "sending", "_",
    ]
    static let generatedMembers = [
        "id", "path", "row", "with", "encode", "decode", "hashValue", "hash", "entityName", "request", "requiredFields",
        "columnCount", "description", "ascending", "descending", "isNil", "isNotNil", "count", "all", "none", "field",
        "toOne", "toMany", "composite", "root", "hops", "keyPath", "column", "relationship", "schema", "version1",
        "migrationPlan", "openStore", "fields", "target",
    ]
    static let sqlKeywords = [
        "select", "from", "order", "group", "index", "table", "values", "insert", "update", "delete", "create", "drop",
        "alter", "primary", "key", "unique", "check", "references", "join", "on", "limit", "offset", "transaction",
        "begin", "commit", "rollback", "rowid", "oid", "_rowid_", "_entity", "_position", "null", "not", "and", "or",
    ]

    /// Every name, lowercase-first for members and capitalised for types.
    static var memberNames: [String] {
        (swiftKeywords + generatedMembers + sqlKeywords).filter {
            $0.first.map { $0.isLowercase || $0 == "_" } ?? false
        }
    }
    static var typeNames: [String] {
        let capitalised = (swiftKeywords + generatedMembers + sqlKeywords).map {
            $0.prefix(1).uppercased() + $0.dropFirst()
        }
        return Array(
            Set(
                capitalised + [
                    "Record", "Field", "Fields", "ID", "Hashable", "Codable", "Sendable", "Self", "Type", "Protocol",
                    "Any",
                    "Store", "Names", "NamesMigrations", "Optional", "Result", "Never", "Error", "Task", "Equatable",
                ])
        ).sorted()
    }

    /// Whether `validate` accepts a model made of the header and `declarations`.
    static func accepts(_ declarations: [String]) -> Bool {
        let text = "model Names version 1\n" + declarations.joined(separator: "\n") + "\n"
        let diagnostics = ResolvedFile.compile(SourceFile(path: "Names.v1.model", bytes: Array(text.utf8))).diagnostics
        return !diagnostics.contains { $0.severity == .error }
    }

    /// Type-checks the code of a one-version model of `declarations` with `-warnings-as-errors`.
    static func typecheck(_ declarations: [String]) throws -> GeneratedCodeTypeChecker.TypeCheck {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("names-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let text = "model Names version 1\n" + declarations.joined(separator: "\n") + "\n"
        try Data(text.utf8).write(to: folder.appendingPathComponent("Names.v1.model"))
        return try GeneratedCodeTypeChecker.typecheck(app: "import Modelwright\n", model: folder.path)
    }

    /// The groups of declarations that `validate` accepts each on its own, joined; `validate`
    /// must accept them together too.
    static func accepted(_ groups: [[String]]) -> [String] {
        let each = groups.filter { accepts($0) }.flatMap { $0 }
        #expect(accepts(each), "the declarations accepted one by one are refused together")
        return each
    }

    @Test(
        .enabled(
            if: GeneratedCodeTypeChecker.modules != nil, "the built Modelwright module was not found beside the tests"))
    func everyMemberNameValidateAcceptsCompiles() throws {
        let groups = Self.memberNames.enumerated().map { index, name in
            [
                "entity A\(index) {\n    \(name): String = \"x\"\n    other\(index): Int?\n    \(name)Link: B\(index)? @inverse(\(name)Back)\n}",
                "entity B\(index) {\n    \(name)Back: Set<A\(index)> @inverse(\(name)Link)\n    \(name): [A\(index)]\n}",
                "enum E\(index): String { \(name), other }",
                "composite C\(index) { \(name): String; other: Int? }",
                "entity D\(index) { value: C\(index)?; kind: E\(index) = .other }",
            ]
        }
        let accepted = Self.accepted(groups)
        // Refused: only the names generated records or Swift reserve (`self`, `path`, `init` …).
        #expect(accepted.count >= 5 * (Self.memberNames.count - 25))
        let result = try Self.typecheck(accepted)
        #expect(result.status == 0, "\(result.errors.prefix(4_000))")
    }

    @Test(
        .enabled(
            if: GeneratedCodeTypeChecker.modules != nil, "the built Modelwright module was not found beside the tests"))
    func everyTypeNameValidateAcceptsCompiles() throws {
        let entities = Self.accepted(Self.typeNames.map { ["entity \($0) {\n    value: Int = 0\n}"] })
        let enums = Self.accepted(Self.typeNames.map { ["enum \($0): Int { a, b }"] })
        let composites = Self.accepted(
            Self.typeNames.map { ["composite \($0) { value: Int }", "entity U\($0) { v: \($0)? }"] })
        for declarations in [entities, enums, composites] {
            let result = try Self.typecheck(declarations)
            #expect(result.status == 0, "\(result.errors.prefix(4_000))")
        }
    }

    /// A random model: entities in inheritance chains (abstract roots among them), attributes of
    /// every type with names from the pools, optional or not, with defaults, and relationships of
    /// every kind with inverses.
    static func randomModel(seed: UInt64) -> [String] {
        var random = SplitMix64(seed: seed)
        func pick<T>(_ items: [T]) -> T { items[random.next(below: items.count)] }
        func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
        let members = memberNames.filter { accepts(["entity Probe {\n    \($0): Int\n}"]) }
        let types = typeNames.filter { accepts(["entity \($0) {\n    value: Int\n}"]) }
        var entityNames: [String] = []
        while entityNames.count < 3 + Int(random.next() % 5) {
            let name = pick(types)
            if !entityNames.contains(name) { entityNames.append(name) }
        }
        let scalars = [
            ("Bool", "true"), ("Int16", "-7"), ("Int32", "8"), ("Int64", "9223372036854775807"), ("Int", "-1"),
            ("Double", "1.5"), ("Float", "2.5"), ("Decimal", "12345678901234567890123.45"), ("String", "\"s\""),
            ("Date", nil), ("Data", nil), ("UUID", nil), ("URL", nil), ("Kind", ".b"), ("Pair", nil),
            ("Codable<[String]>", nil),
        ]
        var declarations = [
            "enum Kind: String { a, b = \"bee\" }", "composite Pair { first: Int; second: String? }",
        ]
        var bodies = Array(repeating: [String](), count: entityNames.count)
        var headers = entityNames.map { "entity \($0)" }
        var used = Array(repeating: Set<String>(), count: entityNames.count)
        for index in entityNames.indices {
            // A parent declared earlier, so chains form; only a parent may be abstract.
            if index > 0, chance(35) {
                let parent = Int(random.next() % UInt64(index))
                headers[index] += ": \(entityNames[parent])"
                used[index] = used[parent]
                if !headers[parent].hasPrefix("abstract"), chance(50) {
                    headers[parent] = "abstract " + headers[parent]
                }
            }
            for _ in 0..<(1 + random.next() % 4) {
                let name = pick(members)
                guard used[index].insert(name).inserted else { continue }
                let (type, value) = pick(scalars)
                let optional = chance(40)
                var line = "    \(name): \(type)\(optional ? "?" : "")"
                if let value, chance(50) { line += " = \(value)" }
                bodies[index].append(line)
            }
        }
        for number in 0..<(random.next() % 4) {
            let from = Int(random.next() % UInt64(entityNames.count))
            let to = Int(random.next() % UInt64(entityNames.count))
            let name = "link\(number)"
            let back = "back\(number)"
            let kind = pick(["\(entityNames[to])?", "Set<\(entityNames[to])>", "[\(entityNames[to])]"])
            let inverse = kind.hasSuffix("?") ? "Set<\(entityNames[from])>" : "\(entityNames[from])?"
            bodies[from].append("    \(name): \(kind) @inverse(\(back))")
            bodies[to].append("    \(back): \(inverse) @inverse(\(name))")
        }
        for index in entityNames.indices {
            declarations.append(headers[index] + " {\n" + bodies[index].joined(separator: "\n") + "\n}")
        }
        return declarations
    }

    @Test(
        .enabled(
            if: GeneratedCodeTypeChecker.modules != nil, "the built Modelwright module was not found beside the tests"))
    func randomModelsThatValidateAcceptsCompile() throws {
        let count = ProcessInfo.processInfo.environment["MODELWRIGHT_NAMES_MODELS"].flatMap { Int($0) } ?? 6
        var checked = 0
        var seed: UInt64 = 1
        while checked < count, seed < UInt64(count * 20) {
            defer { seed += 1 }
            let model = Self.randomModel(seed: seed)
            guard Self.accepts(model) else { continue }
            let result = try Self.typecheck(model)
            #expect(
                result.status == 0, "seed \(seed):\n\(model.joined(separator: "\n"))\n\(result.errors.prefix(3_000))")
            checked += 1
        }
        #expect(checked == count, "only \(checked) of the random models were valid")
    }
}
