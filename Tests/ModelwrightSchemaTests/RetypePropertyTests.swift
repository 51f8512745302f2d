import Foundation
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightSchema

/// The promise of `plan` for one class of change, retyping an attribute, on both engines (issue 27):
/// for every ordered pair of attribute types the schema language has (each built-in type, a
/// string- and an int-backed enum, a composite, a `Codable` value), with drawn optionality on
/// either side, a drawn default, a drawn place (an entity of its own, an abstract or concrete
/// parent, moved up or down the hierarchy while retyped, or a composite's field) and a drawn
/// second change elsewhere, version 2 differs from version 1 by that retype.
///
/// The planner (`FrontEnd.run`, what `plan` runs) either refuses the step, with every error at a
/// file, line and column (a step refused as losing data is then planned again with the loss
/// accepted, as its note says), or accepts it. An accepted step migrates a store on SQLite and a
/// store on PostgreSQL holding the same rows, which give the old type every extreme (each
/// integer width's least and greatest, 0, -0.0, NaN, ±infinity, subnormals, huge and tiny
/// decimals, empty, long and non-ASCII strings, strings that read as numbers, dates, days, UUIDs
/// and URLs and ones that do not, date extremes, NULL): on both the migration succeeds, every
/// row of every entity reads back as version 2's records, the values the step keeps are kept, and
/// the retyped attribute holds on PostgreSQL exactly what the same migration gives on SQLite
/// (for each row both engines stored alike before it).
///
/// CI plans every ordered pair of types once (optionality, place, default and second change
/// drawn), with one store per engine for each accepted case; `MODELWRIGHT_LARGE=1` plans every
/// pair in each of the four optionality combinations and each of the five places, and adds
/// drawn ordinary values to the extremes. `MODELWRIGHT_RETYPE=<n>` runs case `n` alone.
@Suite(.heavy, .enabled(if: MigrationEngine.available.contains(.postgres), "PostgreSQL is not installed"))
struct RetypePropertyTests {
    private static let large = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"

    /// Every attribute type of the schema language: the built-in ones (the runtime's table), a
    /// string-backed and an int-backed enum, a composite and a `Codable` value.
    static let types: [String] =
        ScalarType.all.map(\.schemaSpelling) + ["Kind", "Level", "Place", "Codable<[String]>"]

    /// Where the retyped attribute is declared.
    enum Placement: String, CaseIterable {
        /// In an entity of its own.
        case solo
        /// In a parent (abstract or not) whose child has rows.
        case inherited
        /// Declared by the child in version 1, by the parent in version 2.
        case movedUp
        /// Declared by the parent in version 1, by the child in version 2.
        case movedDown
        /// A field of a composite that an entity's attribute holds.
        case field
        /// Declared by the child, which leaves its parent in version 2 (a custom stage covers
        /// that): its rows move to a table of their own, converted as they go.
        case leaves
    }

    /// One drawn step.
    struct Case: CustomStringConvertible {
        var old: String
        var new: String
        var oldOptional: Bool
        var newOptional: Bool
        var newDefault: String?
        var placement: Placement
        var abstractBase: Bool
        /// The unrelated change: 0 a new optional attribute, 1 a rename, 2 a removal, 3 a new
        /// entity, 4 a new index, 5 none.
        var extra: Int
        var lossy: [String] = []

        var description: String {
            let from = old + (oldOptional ? "?" : "")
            let to = new + (newOptional ? "?" : "") + (newDefault.map { " = \($0)" } ?? "")
            return "\(from) → \(to) (\(placement.rawValue)\(abstractBase ? ", abstract parent" : ""), change \(extra))"
        }

        /// The entity whose declaration holds the attribute in `version`.
        func owner(version: Int) -> String {
            switch placement {
            case .solo, .field: "Solo"
            case .inherited: "Base"
            case .movedUp: version == 1 ? "Leaf" : "Base"
            case .movedDown: version == 1 ? "Base" : "Leaf"
            case .leaves: "Leaf"
            }
        }

        func text(version: Int) -> String {
            let two = version == 2
            let type = two ? new : old
            let optional = two ? newOptional : oldOptional
            var declaration = ": \(type)\(optional ? "?" : "")"
            if two, let newDefault { declaration += " = \(newDefault)" }
            let attribute = "    a" + declaration
            let zip = placement == .field ? "    zip" + declaration : "    zip: Int32?"
            let base = (abstractBase ? "abstract " : "") + "entity Base {"
            var lines: [String] = ["model Retype version \(version)", "enum Kind: String { a, b, c }"]
            lines += ["enum Level: Int { low, mid, high }", "composite Place {", "    city: String", zip, "}"]
            lines += [base, "    k: Int64"]
            if placement != .field, owner(version: version) == "Base" { lines.append(attribute) }
            let leaves = two && placement == .leaves
            lines += ["}", leaves ? "entity Leaf {" : "entity Leaf: Base {"]
            if leaves { lines.append("    k: Int64") }
            if !(two && extra == 2) { lines.append("    note: String") }
            if placement != .field, owner(version: version) == "Leaf" { lines.append(attribute) }
            lines += ["}", "entity Solo {", "    k: Int64" + (two && extra == 4 ? " @indexed" : "")]
            lines.append(two && extra == 1 ? "    label: String @renamed(from: note)" : "    note: String")
            if two && extra == 0 { lines.append("    extra: String?") }
            if placement == .solo { lines.append(attribute) }
            if placement == .field { lines.append("    f: Place") }
            lines.append("}")
            if two && extra == 3 { lines += ["entity Other {", "    x: Int32 = 3", "}"] }
            var losses: [String] = two ? lossy : []
            if two && extra == 2 { losses.append("Leaf.note") }
            if !losses.isEmpty || leaves {
                lines.append("migration from 1 {")
                if leaves { lines.append("    custom move \"Leaf leaves Base\"") }
                lines += losses.map { "    lossy \($0)" }
                lines.append("}")
            }
            return lines.joined(separator: "\n") + "\n"
        }

        /// What `lossy` names to accept the retype's loss: the attribute by its older declaration.
        var lossTarget: String { placement == .field ? "Solo.f" : "\(owner(version: 1)).a" }
    }

    /// A default value for a required attribute of `type`, when the type takes a literal.
    static func defaultValue(_ type: String) -> String? {
        switch type {
        case "Bool": "true"
        case "Int16", "Int32", "Int64", "Int": "7"
        case "Double", "Float": "1.5"
        case "Decimal": "2.25"
        case "String": "\"d\""
        case "Day": "\"2024-05-01\""
        case "UUID": "\"E621E1F8-C36C-495A-93FC-0C247A3E6E5F\""
        case "URL": "\"https://example.com\""
        case "Kind": ".b"
        case "Level": ".mid"
        default: nil
        }
    }

    /// The extremes of the integer types, least and greatest of each width and their neighbours.
    private static let integers: [String: [Int64]] = [
        "Bool": [0, 1],
        "Int16": [Int64(Int16.min), Int64(Int16.max), 0, -1, 1, 7],
        "Int32": [Int64(Int32.min), Int64(Int32.max), Int64(Int16.min) - 1, Int64(Int16.max) + 1, 0, 1, -7],
        "Int64": [
            .min, .max, Int64(Int32.max) + 1, Int64(Int32.min) - 1, (1 << 53) + 1, -(1 << 53) - 1, (1 << 24) + 1, 0, 1,
            -1, 65_536,
        ],
        "Level": [0, 1, 2],
    ]

    /// The extremes of `Double`: zeros of both signs, NaN, infinities, the largest and smallest
    /// magnitudes, subnormals, values past a `Float`'s range and past a double's exact integers.
    private static let doubles: [Double] = [
        0, -0.0, .nan, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        .leastNonzeroMagnitude, .leastNormalMagnitude / 4, 0.1, -1.5, 3.5e38, 1e300, 9_007_199_254_740_994, 32_767.5,
        9.3e18, -2.5,
    ]

    /// The extremes of `Float`, as the doubles that hold them exactly.
    private static let floats: [Float] = [
        0, -0.0, .nan, .infinity, -.infinity, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
        .leastNonzeroMagnitude, 0.1, -1.5, 16_777_215, 1e10,
    ]

    /// Seconds since 2001 for `Date`: its zero, sub-second, the far past and future PostgreSQL
    /// still holds (4713 BC to 294276 AD), 1970, infinities.
    private static let seconds: [Double] = [
        0, -0.0, 0.5, 1e9, -1e9, -2.0e11, 9.0e12, 2_147_483_648, -978_307_200, .infinity, -.infinity,
    ]

    /// Texts of the types stored as text.
    private static let texts: [String: [String]] = [
        "Decimal": [
            "0", "-3.5", "12345678901234567890123456789012345678", "-0.00000000000000000000000000000000001", "32767",
            "9223372036854775808", "0.1", "1",
        ],
        "String": [
            "", String(repeating: "long ", count: 2_000), "Ünïcødé 😀 漢字", "42", "-0", "3.14", "1e5", "NaN",
            "Infinity", "true", "1", " 7 ", "0x10", "2024-02-29", "2001-01-01T00:00:00Z",
            "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "https://example.com/ü", "not a value", "\u{600}'\"\r\n",
            "[\"a\"]",
        ],
        "URL": ["https://example.com", "file:///tmp/x", "mailto:a@b.c", "https://xn--r8jz45g.jp/%C3%BC"],
        "Day": ["0001-01-01", "9999-12-31", "2024-02-29", "1970-01-01"],
        "Kind": ["a", "b", "c"],
        "Codable<[String]>": ["[]", "[\"a\",\"ü\"]", "[\"42\"]"],
    ]

    /// Byte strings of the types stored as bytes.
    private static let bytes: [String: [Data]] = [
        "Data": [
            Data(), Data([0]), Data(repeating: 0xAB, count: 16), Data(repeating: 7, count: 1_000), Data("42".utf8),
        ],
        "UUID": [Data(repeating: 0, count: 16), Data(repeating: 0xFF, count: 16), Data(Array(0..<16))],
    ]

    /// Stored values of `type` for the rows: every extreme first, then (in large runs) drawn ones.
    static func values(of type: String, random: inout SplitMix64) -> [SQLValue] {
        var values: [SQLValue] = []
        switch type {
        case "Int": values = (integers["Int64"] ?? []).map { .integer($0) }
        case "Double": values = doubles.map { .real($0) }
        case "Float": values = floats.map { .real(Double($0)) }
        case "Date": values = seconds.map { .real($0) }
        default:
            if let list = integers[type] { values = list.map { .integer($0) } }
            if let list = texts[type] { values = list.map { .text($0) } }
            if let list = bytes[type] { values = list.map { .blob($0) } }
        }
        guard large else { return values }
        // Ordinary values besides the extremes: integers in range, doubles, text of numbers.
        for _ in 0..<4 {
            let bits = random.next()
            let shifted = Int64(bitPattern: bits) >> Int(bits % 60)
            switch type {
            case "Int16": values.append(.integer(Int64(Int16(truncatingIfNeeded: bits))))
            case "Int32": values.append(.integer(Int64(Int32(truncatingIfNeeded: bits))))
            case "Int64", "Int": values.append(.integer(shifted))
            case "Double": values.append(.real(Double(shifted) / 1024))
            case "Float": values.append(.real(Double(Float(Int32(truncatingIfNeeded: bits)) / 8)))
            case "Decimal", "String": values.append(.text(String(shifted)))
            case "Date": values.append(.real(Double(Int32(truncatingIfNeeded: bits))))
            default: break
            }
        }
        return values
    }

    /// The rows' values of an attribute of `type` named `column`: a dictionary of columns each,
    /// one per value of the type (a composite's fields), and an empty one when it is optional.
    static func fragments(of type: String, column: String, optional: Bool, random: inout SplitMix64)
        -> [[String: SQLValue]]
    {
        var result: [[String: SQLValue]]
        if type == "Place" {
            result = [
                ["\(column).city": .text("c"), "\(column).zip": .integer(5)],
                ["\(column).city": .text("Zürich"), "\(column).zip": .null],
            ]
            if optional { result.append(["\(column).city": .null, "\(column).zip": .null]) }
        } else {
            // SQLite stores a NaN as NULL (the runtime refuses to store one): a required
            // attribute's column in a hierarchy's table, which is optional, would take it as a row
            // no record can have written.
            result = values(of: type, random: &random).filter { value in
                if case .real(let number) = value, number.isNaN { return optional }
                return true
            }.map { [column: $0] }
            if optional { result.append([column: .null]) }
        }
        return result
    }

    /// A value's meaning as `type` reads it, for comparing engines (which spell a decimal or a
    /// date differently): `nil` when it does not decode.
    static func canonical(_ value: SQLValue, as type: AttributeType) -> String? {
        if value == .null { return "NULL" }
        switch type {
        case .bool: return (try? Bool(sqlValue: value)).map { "\($0)" }
        case .int16, .int32, .int64, .int: return (try? Int64(sqlValue: value)).map { "\($0)" }
        case .double, .float, .date:
            guard let number = try? Double(sqlValue: value) else { return nil }
            return number.isNaN ? "nan" : "\(number.bitPattern)"
        case .decimal: return (try? Decimal(sqlValue: value)).map { "\($0)" }
        case .data, .uuid:
            guard let data = try? Data(sqlValue: value) else { return nil }
            return data.map { String($0, radix: 16) }.joined(separator: " ")
        case .url: return (try? URL(sqlValue: value)).map(\.absoluteString)
        case .day: return (try? Day(sqlValue: value)).map(\.description)
        case .codable:
            guard case .text(let text) = value,
                let parsed = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: [.fragmentsAllowed])
                    as? NSObject
            else { return nil }
            return "\(parsed)"
        case .enumeration(let description):
            if case .integer(let raw) = value { return "\(raw)" }
            guard let raw = try? String(sqlValue: value) else { return nil }
            return description.cases.contains { $0.rawValue == raw } ? raw : nil
        case .string, .composite: return try? String(sqlValue: value)
        }
    }

    /// A column a v2 attribute reads, with the type and optionality it decodes as.
    struct Column {
        let name: String
        let type: AttributeType
        let optional: Bool
    }

    /// The columns `attribute` reads: itself, or a composite's fields.
    static func columns(of attribute: AttributeDescription) -> [Column] {
        guard case .composite(let composite) = attribute.type else {
            return [Column(name: attribute.name, type: attribute.type, optional: attribute.isOptional)]
        }
        return composite.fields.map {
            Column(name: "\(attribute.name).\($0.name)", type: $0.type, optional: attribute.isOptional || $0.isOptional)
        }
    }

    /// The cases of a run: every ordered pair of types (the same type too, for optionality
    /// changes), in CI once each with the rest drawn, in a large run in every optionality
    /// combination and every place.
    static func cases() -> [Case] {
        var random = SplitMix64(seed: 27, index: 8)
        func roll(_ count: Int) -> Int { Int(random.next() % UInt64(count)) }
        var result: [Case] = []
        let fieldTypes = Set(types).subtracting(["Place", "Codable<[String]>"])
        let combinations: [(Bool, Bool)] = [(false, false), (false, true), (true, false), (true, true)]
        for old in types {
            for new in types {
                var optionality = combinations
                if !large {
                    optionality = [old == new ? combinations[1 + roll(2)] : combinations[roll(4)]]
                }
                let places = large ? Placement.allCases : [Placement.allCases[roll(Placement.allCases.count)]]
                for (oldOptional, newOptional) in optionality where old != new || oldOptional != newOptional {
                    for var placement in places {
                        if placement == .field, !fieldTypes.contains(old) || !fieldTypes.contains(new) {
                            if large { continue }
                            placement = .solo
                        }
                        let newDefault = !newOptional && roll(2) == 0 ? defaultValue(new) : nil
                        let drawn = Case(
                            old: old, new: new, oldOptional: oldOptional, newOptional: newOptional,
                            newDefault: newDefault, placement: placement, abstractBase: roll(2) == 0, extra: roll(6))
                        result.append(drawn)
                    }
                }
            }
        }
        return result
    }

    /// Plans `drawn` as `plan` does: the model, or `nil` after checking that every error is located
    /// (`refusedAsLossy` says whether one was a loss the migration block could accept).
    private static func plan(_ drawn: Case, refusedAsLossy: inout Bool) throws -> (PlannedModel, [String: String])? {
        let files = ["Retype.v1.model": drawn.text(version: 1), "Retype.v2.model": drawn.text(version: 2)]
        let folder = try temporaryModelFolder(named: "Retype", files: files)
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let loaded = FrontEnd.run(modelAt: folder.path)
        if let model = loaded.model, model.versions.count == 2 { return (model, files) }
        let errors = loaded.diagnostics.filter { $0.severity == .error }
        #expect(!errors.isEmpty, "refused without an error: \(drawn)")
        for error in errors {
            let located =
                error.path.hasSuffix(".model") && (error.location.map { $0.line > 0 && $0.column > 0 } ?? false)
            #expect(located, "an error without file, line and column: \(error.description)\n\(drawn)")
        }
        refusedAsLossy = errors.contains { $0.message.contains("loses data") }
        return nil
    }

    /// The counts a run prints.
    private struct Tally {
        var accepted = 0
        var refused = 0
        var owed = 0
        var acceptedAsLossy = 0
        var rows = 0
        var compared = 0
        var pairs = Set<String>()
    }

    @Test func everyRetypeThePlanAcceptsMigratesAlikeOnBothEngines() throws {
        let all = Self.cases()
        var tally = Tally()
        var random = SplitMix64(seed: 27, index: 9)
        let only = ProcessInfo.processInfo.environment["MODELWRIGHT_RETYPE"].flatMap(Int.init)
        for (index, original) in all.enumerated() where only == nil || only == index {
            var drawn = original
            var lossy = false
            var planned = try Self.plan(drawn, refusedAsLossy: &lossy)
            if planned == nil, lossy {
                drawn.lossy = [drawn.lossTarget]
                planned = try Self.plan(drawn, refusedAsLossy: &lossy)
            }
            guard let (model, files) = planned else {
                tally.refused += 1
                continue
            }
            // A parent change's custom stage covers the entity's other changes too: a retype only
            // the app's code converts is owed to it, and this test has no such code to run.
            if model.steps[0].obligations.contains(where: { $0.property == "a" || $0.property == "f" }) {
                tally.owed += 1
                continue
            }
            tally.accepted += 1
            if !drawn.lossy.isEmpty { tally.acceptedAsLossy += 1 }
            tally.pairs.insert("\(drawn.old) → \(drawn.new)")
            let failure = "case \(index): \(drawn)\n" + files.sorted { $0.key < $1.key }.map(\.value).joined()
            try Self.migrate(drawn, model, failure: failure, random: &random, tally: &tally)
        }
        let total = only == nil ? all.count : 1
        print(
            "retype cases: \(total) planned, \(tally.accepted) accepted (\(tally.acceptedAsLossy) with the loss "
                + "accepted, \(tally.pairs.count) type pairs) and migrated on SQLite and PostgreSQL with "
                + "\(tally.rows) rows, \(tally.compared) retyped values compared, \(tally.refused) refused at a "
                + "located error, \(tally.owed) owed to a custom stage")
        if only == nil {
            #expect(tally.accepted >= total / 10, "only \(tally.accepted) of \(total) cases were accepted")
        }
    }

    /// Migrates the same rows on both engines by the accepted step of `model` and compares.
    private static func migrate(
        _ drawn: Case, _ model: PlannedModel, failure: String, random: inout SplitMix64, tally: inout Tally
    ) throws {
        let (v1, v2) = (model.versions[0].schema, model.versions[1].schema)
        let plan = MigrationPlan(current: v2, stages: [.lightweight(from: v1, to: v2, lossy: model.steps[0].losses)])
        let engines: [MigrationEngine] = [.sqlite, .postgres]
        let testers = try engines.map { try $0.tester(plan: plan, startingAt: v1) }

        // The same rows on both engines, where both take them.
        var number: Int64 = 0
        var stored: [Int64: [String: SQLValue]] = [:]
        for entity in v1.entities where !entity.isAbstract {
            let lineage = TableMapping.lineage(of: entity, in: v1).flatMap(\.attributes)
            var fragments: [[String: SQLValue]] = [[:]]
            if lineage.contains(where: { $0.name == "f" }) {
                fragments = Self.fragments(of: drawn.old, column: "f.zip", optional: drawn.oldOptional, random: &random)
                for index in fragments.indices { fragments[index]["f.city"] = .text("c") }
            } else if let retyped = lineage.first(where: { $0.name == "a" }) {
                fragments = Self.fragments(
                    of: drawn.old, column: retyped.name, optional: retyped.isOptional, random: &random)
            }
            for fragment in fragments {
                number += 1
                var values = fragment
                values["k"] = .integer(number)
                if lineage.contains(where: { $0.name == "note" }) { values["note"] = .text("n\(number)") }
                let taken = testers.map { tester in (try? tester.insert(entity.name, values)) != nil }
                if taken == [true, true] { stored[number] = values }
            }
        }
        tally.rows += stored.count
        let before = try testers.map { try Self.rowsByKey(of: $0, in: v1) }

        var migrated: [Bool] = []
        for (engine, tester) in zip(engines, testers) {
            let result = Result { try tester.migrate().close() }
            if case .failure(let error) = result {
                Issue.record("the accepted step fails on \(engine): \(error)\n\(failure)")
            }
            migrated.append((try? result.get()) != nil)
        }
        guard migrated == [true, true] else { return }
        let after = try testers.map { try Self.rowsByKey(of: $0, in: v2) }

        for (engine, rowsAfter) in zip(engines, after) {
            // Kept: every row, by its `k`.
            let lost = Set(stored.keys).subtracting(rowsAfter.keys)
            #expect(lost.isEmpty, "rows \(lost.sorted()) are gone on \(engine): \(failure)")
            for (key, row) in rowsAfter {
                for column in row.attributes.flatMap(Self.columns(of:)) {
                    let value = row.values[column.name] ?? .null
                    if value == .null {
                        #expect(
                            column.optional,
                            "\(row.entity).\(column.name) of row \(key) is empty on \(engine): \(failure)")
                        continue
                    }
                    #expect(
                        Self.canonical(value, as: column.type) != nil,
                        "\(row.entity).\(column.name) = \(value) of row \(key) does not read on \(engine): \(failure)")
                }
                // Kept: `note` (or its new name) unless the step removes it.
                if let note = row.values["note"] ?? row.values["label"], let original = stored[key] {
                    #expect(note == original["note"], "note of row \(key) changed on \(engine): \(failure)")
                }
            }
        }
        // The retyped attribute holds the same on both engines, for each row both held alike.
        for (key, sqliteRow) in after[0] {
            guard let postgresRow = after[1][key], let oldSQLite = before[0][key], let oldPostgres = before[1][key]
            else { continue }
            let oldColumns = oldSQLite.attributes.filter { $0.name == "a" || $0.name == "f" }.flatMap(Self.columns(of:))
            let alike = oldColumns.allSatisfy {
                Self.canonical(oldSQLite.values[$0.name] ?? .null, as: $0.type)
                    == Self.canonical(oldPostgres.values[$0.name] ?? .null, as: $0.type)
            }
            guard alike else { continue }
            let newColumns = sqliteRow.attributes.filter { $0.name == "a" || $0.name == "f" }.flatMap(Self.columns(of:))
            for column in newColumns {
                let left = sqliteRow.values[column.name] ?? .null
                let right = postgresRow.values[column.name] ?? .null
                let was = oldSQLite.values[column.name] ?? .null
                tally.compared += 1
                #expect(
                    Self.canonical(left, as: column.type) == Self.canonical(right, as: column.type),
                    "\(sqliteRow.entity).\(column.name) of row \(key) (was \(was)): SQLite \(left), PostgreSQL \(right)\n\(failure)"
                )
            }
        }
    }

    /// A row as a tester reads it: the entity it is, the attributes of its lineage, its values.
    private struct Row {
        let entity: String
        let attributes: [AttributeDescription]
        let values: [String: SQLValue]
    }

    /// Every row of every concrete entity of `schema` in the tester's store, by `k`.
    private static func rowsByKey(of tester: MigrationTester, in schema: SchemaDescription) throws -> [Int64: Row] {
        var result: [Int64: Row] = [:]
        for entity in schema.entities where !entity.isAbstract {
            let lineage = TableMapping.lineage(of: entity, in: schema).flatMap(\.attributes)
            for row in try tester.rows(of: entity.name)
            where row["_entity"] == .null || row["_entity"] == .text(entity.name) {
                guard case .integer(let key) = row["k"] else { continue }
                var values: [String: SQLValue] = [:]
                for attribute in lineage {
                    for column in columns(of: attribute) { values[column.name] = row[column.name] }
                }
                result[key] = Row(entity: entity.name, attributes: lineage, values: values)
            }
        }
        return result
    }
}
