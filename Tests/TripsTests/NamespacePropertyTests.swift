import Foundation
import Modelwright
import ModelwrightGenerator
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

/// The promise over the generated namespace and the store: every model the pipeline accepts
/// (`validate` and, with its config, `generate`) generates code that compiles with
/// `-warnings-as-errors`, and its store can be created (with history, whose tables share the
/// store's namespace).
///
/// Random models draw every name from every pool (Swift's keywords, SQL's, the members generated
/// records and the runtime have, Foundation's and the standard library's type names, SQLite's and
/// the runtime's table names, names differing only in case, canonically equal Unicode spellings) for
/// every position: model, entity, enum, case, composite and its fields, property, relationship,
/// request, `$parameter`, custom stage (in several versions), and the config's `naming`; defaults
/// and request constants of every type at their extremes. Accepted models are type-checked in
/// batches (one compiler run for many models, whose module-level names are kept apart), and a
/// failing batch is checked model by model to name the culprit.
///
/// `MODELWRIGHT_NAMESPACE_MODELS=<n>` checks `n` accepted models instead of the CI's 24
/// (`MODELWRIGHT_NAMESPACE_SEED` starts elsewhere); the test prints the counts.
@Suite(.heavy)
struct NamespacePropertyTests {
    static let memberPool: [String] =
        ReservedNameTests.memberNames + [
            "none", "some", "request", "schema", "version1", "version2", "rawValue", "allCases", "description",
            "debugDescription", "hashValue", "sqlite_stat1", "sqlite_sequence", "_mw_history_changes",
            "_modelwright_metadata", "_entity", "_position", "position", "source", "destination", "caf\u{E9}",
            "cafe\u{301}", "value", "vAlue", "vALUE", "fill", "fillDidMigrate", "fillWillMigrate", "clearing", "with",
            "openStore", "migrationPlan", "checksums", "versions", "current", "stages", "url", "progress", "_",
            "__", "a", "b", "x", "history_changes", "self_", "init_", "f0",
        ]
    static let typePool: [String] =
        ReservedNameTests.typeNames + [
            "Date", "Data", "Locale", "Calendar", "TimeZone", "URL", "UUID", "Decimal", "CodingKeys", "RawValue",
            "AllCases", "OptionalProperty", "Result", "Task", "Sqlite_stat1", "SQLITE_MASTER", "Mw", "Caf\u{E9}",
            "Cafe\u{301}", "Names", "NamesMigrations", "Element", "Index", "Key", "Value", "Wrapped", "Version1",
            "Schema", "Int", "Float", "MigrationContext", "MigrationStage", "SchemaArchive", "Notification",
            "Bundle", "OptionalComposite", "ToOne", "FetchRequest", "Item", "Group", "Color", "Trip", "Stop", "Kind",
            "Pair", "VALUE", "Value_", "X", "Foundation", "Modelwright", "Swift", "Trips",
        ]

    /// Each scalar type with literals at its extremes; some are not representable and must be refused.
    static let scalarDefaults: [(type: String, values: [String])] = [
        ("Bool", ["true", "false"]),
        ("Int16", ["-32768", "32767", "32768", "0"]),
        ("Int32", ["-2147483648", "2147483647", "2147483648"]),
        ("Int64", ["-9223372036854775808", "9223372036854775807", "9223372036854775808"]),
        ("Int", ["-9223372036854775808", "9223372036854775807", "-0"]),
        (
            "Double",
            [
                "1.7976931348623157e308", "-2.2250738585072014e-308", "4.9e-324", "1e-400", "-0.0", "-0",
                "9007199254740993", "9007199254740992", "0.1", "1e309", "-1.5e300", "123456789.125",
            ]
        ),
        (
            "Float",
            [
                "3.4028235e38", "1.17549435e-38", "1e-45", "16777217", "16777216", "-0.0", "0.1", "1e30", "3.5e38",
                "-16777217.0", "1e-300",
            ]
        ),
        (
            "Decimal",
            [
                "12345678901234567890123456789012345678", "1e127", "1e-128", "-0.0000001", "-0",
                "123456789012345678901234567890123456789012345", "1e200",
            ]
        ),
        ("String", ["\"\"", "\"\\\"\\\\ \\u{301}e\\u{0}\"", "\"caf\\u{e9}\""]),
        ("Date", ["\"2024-05-01T09:30:00Z\"", "now", "\"0001-01-01T00:00:00Z\"", "\"9999-12-31T23:59:59.999Z\""]),
        ("UUID", ["\"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\""]),
        ("URL", ["\"https://example.com/a?b=c\"", "\"x:\""]),
        ("Data", []),
    ]

    /// One random model: its version files and, maybe, a config.
    struct Model {
        var name: String
        var versions: [String]
        var config: String?
    }

    static func randomModel(seed: UInt64) -> Model {
        var random = SplitMix64(seed: seed)
        func pick<T>(_ items: [T]) -> T { items[random.next(below: items.count)] }
        func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }
        // Names from the pools, or plain ones often enough that most models are accepted.
        var plain = 0
        func member() -> String {
            plain += 1
            return chance(55) ? pick(memberPool) : "m\(plain)"
        }
        func type() -> String {
            plain += 1
            return chance(55) ? pick(typePool) : "T\(seed)x\(plain)"
        }
        let modelName = chance(70) ? "M\(seed)" : type()

        var declarations: [String] = []
        // Enums, with cases from the member pool.
        var enums: [(name: String, cases: [String])] = []
        for _ in 0..<random.next(below: 3) {
            let name = type()
            var cases: [String] = []
            for _ in 0..<(1 + random.next(below: 3)) {
                let candidate = member()
                if !cases.contains(candidate) { cases.append(candidate) }
            }
            let isInt = chance(30)
            enums.append((name, cases))
            declarations.append("enum \(name): \(isInt ? "Int" : "String") { \(cases.joined(separator: ", ")) }")
        }
        func scalarAttribute(_ name: String) -> String {
            let choices =
                scalarDefaults.map { ($0.type, $0.values) } + enums.map { ($0.name, $0.cases.map { "." + $0 }) }
            let (typeName, values) = pick(choices)
            let optional = chance(40)
            var line = "\(name): \(typeName)\(optional ? "?" : "")"
            if !values.isEmpty, chance(60) { line += " = " + pick(values) }
            return line
        }
        // Composites, whose fields may be enums (even ones no entity names).
        var composites: [String] = []
        for _ in 0..<random.next(below: 3) {
            let name = type()
            var fields: [String] = []
            var used: Set<String> = []
            for _ in 0..<(1 + random.next(below: 3)) {
                let field = member()
                guard used.insert(field).inserted else { continue }
                fields.append(scalarAttribute(field))
            }
            composites.append(name)
            declarations.append("composite \(name) { \(fields.joined(separator: "; ")) }")
        }
        // Entities in inheritance chains, with attributes, composites and relationships.
        var entities: [String] = []
        while entities.count < 1 + random.next(below: 4) {
            let name = type()
            if !entities.contains(name) { entities.append(name) }
        }
        var bodies = Array(repeating: [String](), count: entities.count)
        var headers = entities.map { "entity \($0)" }
        var attributes = Array(repeating: [(name: String, line: String)](), count: entities.count)
        for index in entities.indices {
            if index > 0, chance(30) {
                let parent = random.next(below: index)
                headers[index] += ": \(entities[parent])"
                if !headers[parent].hasPrefix("abstract"), chance(40) {
                    headers[parent] = "abstract " + headers[parent]
                }
            }
            for _ in 0..<(1 + random.next(below: 4)) {
                let name = member()
                let line =
                    !composites.isEmpty && chance(20)
                    ? "\(name): \(pick(composites))\(chance(50) ? "?" : "")" : scalarAttribute(name)
                attributes[index].append((name, line))
                bodies[index].append("    " + line + (chance(15) ? pick([" @unique", " @indexed"]) : ""))
            }
            // Entity-level indexes and sorts, whose index names the store derives.
            if attributes[index].count > 1, chance(30) {
                let names = attributes[index].prefix(2).map(\.name).joined(separator: ", ")
                bodies[index].append("    " + pick(["@unique(\(names))", "@index(\(names))", "@sort(\(names))"]))
            }
        }
        for _ in 0..<random.next(below: 3) {
            let from = random.next(below: entities.count)
            let to = random.next(below: entities.count)
            let name = member()
            let back = member()
            let kind = pick(["\(entities[to])?", "Set<\(entities[to])>", "[\(entities[to])]"])
            if chance(25) {
                bodies[from].append("    \(name): \(kind) @noInverse")
            } else {
                let inverse =
                    kind.hasSuffix("?")
                    ? pick(["Set<\(entities[from])>", "\(entities[from])?"])
                    : pick(
                        ["\(entities[from])?", "Set<\(entities[from])>"])
                bodies[from].append("    \(name): \(kind) @inverse(\(back))")
                bodies[to].append("    \(back): \(inverse) @inverse(\(name))")
            }
        }
        for index in entities.indices {
            declarations.append(headers[index] + " {\n" + bodies[index].joined(separator: "\n") + "\n}")
        }
        // Requests with parameters and constants drawn from the pools.
        for _ in 0..<random.next(below: 3) {
            let index = random.next(below: entities.count)
            guard let attribute = attributes[index].randomElement(using: &random) else { continue }
            let type = attribute.line.split(separator: ":")[1].split(separator: "=")[0]
                .trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "?"))
            let constants =
                scalarDefaults.first { $0.type == type }?.values.filter { $0 != "now" && !$0.hasPrefix("\"") }
                ?? enums.first { $0.name == type }.map { $0.cases.map { "'\($0)'" } } ?? []
            let right = constants.isEmpty || chance(50) ? "$" + member() : pick(constants)
            // Every operator; those that do not fit the attribute's type are refused.
            let comparison = pick([
                "\(attribute.name) \(pick(["==", "!=", "<", "<=", ">", ">="])) \(right)",
                "\(attribute.name) \(pick(["BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE"]))\(pick(["", "[c]", "[cd]"])) $\(member())",
                "\(attribute.name) IN $\(member())", "\(attribute.name) IN {\(right), \(right)}",
                "\(attribute.name) BETWEEN {$\(member()), \(right)}", "\(attribute.name) == nil",
                "NOT (\(attribute.name) != \(right))",
            ])
            let second = chance(30) ? " \(pick(["OR", "AND"])) \(attribute.name) == $\(member())" : ""
            declarations.append(
                "request \(member()): \(entities[index]) where \"\(comparison)\(second)\"")
        }
        // Versions: the earlier ones hold one entity; each later one declares custom stages whose
        // names come from the pool, so two versions may declare the same one.
        let versionCount = 1 + random.next(below: 3)
        var versions: [String] = []
        let origin = "entity Origin\(seed) {\n    origin: Int?\n}"
        for number in 1...versionCount {
            var text = "model \(modelName) version \(number)\n" + origin + "\n"
            if number == versionCount { text += declarations.joined(separator: "\n") + "\n" }
            if number > 1 {
                let stages = (0..<(1 + random.next(below: 2))).map { _ in member() }
                text +=
                    "migration from \(number - 1) {\n"
                    + Set(stages).sorted().map { "    custom \($0) \"Stage \($0)\"" }.joined(separator: "\n") + "\n}\n"
            }
            versions.append(text)
        }
        // A config: an access level, and `naming` from the type pool.
        var config: String?
        if chance(40) {
            var naming: [String] = []
            if chance(30) { naming.append("\"typePrefix\": \"\(pick(["", "Record", "MW", "Date", "_"]))\"") }
            if chance(30) { naming.append("\"typeSuffix\": \"\(pick(["", "Record", "ID", "Migrations", "s"]))\"") }
            let schemaTypes = entities + enums.map(\.name) + composites
            if chance(60) {
                let mapped = (0..<(1 + random.next(below: 2))).map { _ in pick(schemaTypes) }
                let entries = Set(mapped).sorted().map { "\"\($0)\": \"\(type())\"" }
                naming.append("\"types\": { \(entries.joined(separator: ", ")) }")
            }
            config =
                "{ \"accessLevel\": \"\(pick(["public", "internal"]))\", \"naming\": { \(naming.joined(separator: ", ")) } }"
        }
        return Model(name: modelName, versions: versions, config: config)
    }

    /// What running the pipeline on a model gave.
    enum Outcome {
        case rejected
        case accepted(files: [RenderedFile], schema: SchemaDescription, moduleNames: Set<String>)
        case failed(String)
    }

    static func run(_ model: Model, in folder: URL) -> Outcome {
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            for (index, text) in model.versions.enumerated() {
                try Data(text.utf8).write(to: folder.appendingPathComponent("\(model.name).v\(index + 1).model"))
            }
            if let config = model.config {
                try Data(config.utf8).write(to: folder.appendingPathComponent(GeneratorConfig.fileName))
            }
        } catch {
            return .rejected  // a name the file system refuses is not a model
        }
        let result: PipelineResult
        do {
            result = try Pipeline.run(Pipeline.Request(modelPath: folder.path, goal: .render))
        } catch let error as GeneratorError {
            // A config may be refused with its located error; a model without one may not.
            if case .invalidConfig = error, model.config != nil { return .rejected }
            return .failed("the pipeline threw \(error)")
        } catch {
            return .failed("the pipeline threw \(error)")
        }
        guard !result.hasErrors, let current = result.model?.current else { return .rejected }
        guard !result.files.isEmpty else { return .failed("no files rendered for an accepted model") }
        // The store, with history: its tables share the store's namespace.
        do {
            _ = try Store.inMemory(schema: current.schema, history: .enabled(author: "test"))
        } catch {
            return .failed("the store could not be created: \(error)")
        }
        // Every module-level name the files declare, so a batch keeps them apart.
        var names: Set<String> = []
        for file in result.files {
            for line in file.contents.split(separator: "\n") {
                let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
                for (index, word) in words.enumerated().dropLast()
                where ["enum", "struct", "protocol", "extension"].contains(word) && !line.hasPrefix(" ") {
                    names.insert(words[index + 1].trimmingCharacters(in: CharacterSet(charactersIn: ":{`")))
                }
            }
        }
        return .accepted(files: result.files, schema: current.schema, moduleNames: names)
    }

    /// Type-checks the generated files of several models as one module; the compiler's errors, or nil.
    static func typecheck(_ models: [[RenderedFile]]) throws -> String? {
        guard let modules = GeneratedCodeTypeChecker.modules else { throw GeneratedCodeTypeChecker.ModulesNotFound() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("namespace-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var paths: [String] = []
        for (index, files) in models.enumerated() {
            let subfolder = folder.appendingPathComponent("\(index)")
            try FileManager.default.createDirectory(at: subfolder, withIntermediateDirectories: true)
            for file in files {
                let url = subfolder.appendingPathComponent(file.name)
                try Data(file.contents.utf8).write(to: url)
                paths.append(url.path)
            }
        }
        let result = try GeneratedCodeTypeChecker.launch(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "swiftc", "-emit-sil", "-wmo", "-o", "/dev/null", "-swift-version", "6", "-warnings-as-errors",
                "-module-name", "NamespaceApp", "-I", modules.path, "-I",
                GeneratedCodeTypeChecker.root.appendingPathComponent("Sources/CSQLite").path,
            ] + paths)
        return result.status == 0 ? nil : result.errors + result.output
    }

    @Test(
        .enabled(
            if: GeneratedCodeTypeChecker.modules != nil, "the built Modelwright module was not found beside the tests"))
    func everyAcceptedModelCompilesAndGetsItsStore() throws {
        let environment = ProcessInfo.processInfo.environment
        let target = environment["MODELWRIGHT_NAMESPACE_MODELS"].flatMap { Int($0) } ?? 24
        let start = environment["MODELWRIGHT_NAMESPACE_SEED"].flatMap { UInt64($0) } ?? 1
        var seed = start
        let batchSize = 40
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("namespace-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var accepted = 0
        var rejected = 0
        var failures: [String] = []
        var batch: [(seed: UInt64, model: Model, files: [RenderedFile])] = []
        var batchNames: Set<String> = []
        func flush() throws {
            defer {
                batch = []
                batchNames = []
            }
            guard !batch.isEmpty, try Self.typecheck(batch.map(\.files)) != nil else { return }
            var found = false
            for member in batch {
                if let errors = try Self.typecheck([member.files]) {
                    found = true
                    failures.append(
                        "seed \(member.seed) does not compile:\n\(member.model.versions.last ?? "")\n\(member.model.config ?? "")\n\(errors.prefix(2_000))"
                    )
                }
            }
            if !found { failures.append("seeds \(batch.map(\.seed)) compile apart but not together") }
        }
        while accepted < target, seed < start + UInt64(target * 40 + 1_000) {
            defer { seed += 1 }
            let model = Self.randomModel(seed: seed)
            switch Self.run(model, in: root.appendingPathComponent("\(seed)")) {
            case .rejected:
                rejected += 1
            case .failed(let reason):
                accepted += 1
                failures.append("seed \(seed): \(reason)\n\(model.versions.last ?? "")")
            case .accepted(let files, _, let names):
                accepted += 1
                if !batchNames.isDisjoint(with: names) || batch.count == batchSize { try flush() }
                batch.append((seed, model, files))
                batchNames.formUnion(names)
            }
        }
        try flush()
        print("namespace property run: \(accepted) accepted, \(rejected) rejected, \(failures.count) failures")
        #expect(accepted >= target, "only \(accepted) of the random models were accepted")
        #expect(failures.isEmpty, "\(failures.prefix(5).joined(separator: "\n\n"))")
    }

    /// The capitalised names `text` (Swift source) uses unqualified, outside comments and string
    /// literals, and not after a `.`.
    static func unqualifiedTypeNames(in text: String) -> Set<String> {
        var names: Set<String> = []
        var code = ""
        var index = text.startIndex
        // Comments and string literals (single-line and multi-line) are blanked out.
        while index < text.endIndex {
            if text[index...].hasPrefix("//") {
                index = text[index...].firstIndex(of: "\n") ?? text.endIndex
            } else if text[index...].hasPrefix("\"\"\"") {
                let rest = text.index(index, offsetBy: 3)
                index = text[rest...].range(of: "\"\"\"")?.upperBound ?? text.endIndex
                code += " \"\" "
            } else if text[index] == "\"" {
                var cursor = text.index(after: index)
                while cursor < text.endIndex, text[cursor] != "\"" {
                    if text[cursor] == "\\" { cursor = text.index(after: cursor) }
                    if cursor < text.endIndex { cursor = text.index(after: cursor) }
                }
                index = cursor < text.endIndex ? text.index(after: cursor) : cursor
                code += " \"\" "
            } else {
                code.append(text[index])
                index = text.index(after: index)
            }
        }
        var previous: Character = " "
        var word = ""
        // An attribute's argument (`@_spi(Generated)`) names no type.
        for character in code.replacingOccurrences(of: "@_spi(Generated)", with: "") + " " {
            if character.isLetter || character.isNumber || character == "_" {
                if word.isEmpty, previous == "." { word = "." }
                word.append(character)
            } else {
                if let first = word.first, first.isUppercase { names.insert(word) }
                word = ""
            }
            if character != "`" { previous = character }
        }
        return names
    }

    /// Every type name the generated code uses unqualified, in Trips and in random models, is one
    /// the model declared or one ``NameRules/reservedTypeNames`` keeps from the schema, so no
    /// schema type can shadow it.
    @Test func everyTypeNameTheGeneratedCodeUsesIsReserved() throws {
        var rendered: [(files: [RenderedFile], declared: Set<String>)] = []
        let trips = try GeneratedCodeTypeChecker.renderedFiles(
            GeneratedCodeTypeChecker.root.appendingPathComponent("Models/Trips").path, config: GeneratorConfig())
        rendered.append((trips, Self.declaredNames(trips)))
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("namespace-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        var seed: UInt64 = 1
        while rendered.count < 30, seed < 2_000 {
            defer { seed += 1 }
            if case .accepted(let files, _, _) = Self.run(
                Self.randomModel(seed: seed), in: root.appendingPathComponent("\(seed)"))
            {
                rendered.append((files, Self.declaredNames(files)))
            }
        }
        var unreserved: [String: String] = [:]
        for (files, declared) in rendered {
            for file in files {
                for name in Self.unqualifiedTypeNames(in: file.contents)
                where !declared.contains(name) && !NameRules.reservedTypeNames.contains(name) {
                    unreserved[name] = file.name
                }
            }
        }
        #expect(unreserved.isEmpty, "\(unreserved.sorted { $0.key < $1.key })")
    }

    /// The module-level names `files` declare: the model's own types. A type declared inside a
    /// generated type (`Fields`, `ID`, `OptionalProperty`) is not among them: it shadows a schema
    /// type of its name there, so it must be reserved.
    static func declaredNames(_ files: [RenderedFile]) -> Set<String> {
        var names: Set<String> = []
        for file in files {
            for line in file.contents.split(separator: "\n") where !line.hasPrefix(" ") {
                let words = line.split(whereSeparator: { $0 == " " || $0 == "(" }).map(String.init)
                for (index, word) in words.enumerated().dropLast()
                where ["enum", "struct", "protocol", "extension"].contains(word) {
                    names.insert(words[index + 1].trimmingCharacters(in: CharacterSet(charactersIn: ":{`<")))
                }
            }
        }
        return names
    }
}
