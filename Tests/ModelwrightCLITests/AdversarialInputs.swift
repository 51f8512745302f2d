import Foundation
import ModelwrightTestSupport

/// Small inputs built to cost much: each shape draws a model folder or a Core Data bundle of at
/// most ``AdversarialInputs/sizeLimit`` bytes that stresses one dimension where a quadratic pass,
/// a copy per pair or an unbounded hint would show (wide, deep, many subentities, near-miss
/// names, inverses, long names, nested predicates, versions, requests, literals, Core Data XML).
enum AdversarialInputs {
    /// Every input stays under this many bytes in all.
    static let sizeLimit = 100_000

    /// What a shape makes: schema files for a model folder, or versions of a Core Data bundle.
    enum Input {
        /// Files `M.v<N>.model` (name, text).
        case schema([(name: String, text: String)])
        /// `.xcdatamodel` versions (name, `contents` XML); the last is current.
        case coreData([(name: String, contents: String)])

        /// Bytes in all.
        var size: Int {
            switch self {
            case .schema(let files): files.reduce(0) { $0 + $1.text.utf8.count }
            case .coreData(let versions): versions.reduce(0) { $0 + $1.contents.utf8.count }
            }
        }
    }

    /// A shape: its name and how it draws an input of about `budget` bytes.
    struct Shape: Sendable {
        let name: String
        /// An open problem this shape shows, which CI skips and the large run records as known.
        var knownIssue: String?
        let make: @Sendable (inout SplitMix64, _ budget: Int) -> Input

        init(name: String, knownIssue: String? = nil, make: @escaping @Sendable (inout SplitMix64, Int) -> Input) {
            self.name = name
            self.knownIssue = knownIssue
            self.make = make
        }
    }

    /// Lines while they fit in `budget` bytes.
    private static func lines(_ budget: Int, _ line: (Int) -> String) -> String {
        var text = ""
        var index = 0
        while true {
            let next = line(index)
            guard text.utf8.count + next.utf8.count <= budget else { return text }
            text += next
            index += 1
        }
    }

    private static let header = "model M version 1\n"
    private static let attributeTypes = [
        "Int", "Int16 = 7", "Int64?", "String", "String? = \"x\"", "Double = 1.5", "Float?", "Bool = false",
        "Date?", "Data?", "UUID?", "URL?", "Decimal?", "Codable<[String]>?",
    ]

    static let shapes: [Shape] = [
        Shape(name: "wide entity") { random, budget in
            let body = lines(budget - 40) { index in
                let type = random.pick(attributeTypes)
                return "    /// Attribute \(index).\n    a\(index): \(type)"
                    + (random.chance(0.1) && !type.hasPrefix("Codable") ? " @indexed" : "") + "\n"
            }
            return .schema([("M.v1.model", header + "entity E {\n" + body + "}\n")])
        },
        Shape(name: "deep inheritance") { random, budget in
            let depth = random.pick([60, 64, 65, 200, 2_000])
            let perEntity = max(1, budget / depth / 30)
            var text = header
            for level in 0..<depth {
                text += "entity E\(level)" + (level == 0 ? "" : ": E\(level - 1)") + " {\n"
                text += (0..<perEntity).map { "    p\(level)x\($0): Int?\n" }.joined()
                if level > 0 { text += "    @index(p0x0, p\(level)x0)\n" }
                text += "}\n"
                if text.utf8.count > budget { break }
            }
            return .schema([("M.v1.model", text)])
        },
        Shape(name: "many subentities") { random, budget in
            let properties = random.pick([20, 100, 300, 1_000])
            var text = header + "abstract entity P {\n" + (0..<properties).map { "    p\($0): Int?\n" }.joined() + "}\n"
            text += lines(budget - text.utf8.count) { "entity S\($0): P {}\n" }
            return .schema([("M.v1.model", text)])
        },
        Shape(name: "near-miss names") { random, budget in
            // Entities, then misspellings of them in every position that asks for a hint,
            // spread over many entities (resolved in parallel) and within one.
            var text = header
            text += lines(budget / 3) { "entity Entity\(String(format: "%05d", $0)) { a: Int }\n" }
            let count = text.utf8.count / 32
            text += lines(budget - text.utf8.count - 100) { index in
                let near = "Entityy\(String(format: "%05d", random.index(below: count)))"
                switch random.index(below: 6) {
                case 0: return "entity X\(index) { r: \(near)? }\n"
                case 1: return "entity Y\(index): \(near) {}\n"
                case 2: return "entity Z\(index) { r: Set<\(near)> }\n"
                case 3: return "entity W\(index) { a: Int\n    @unique(aa\(index))\n}\n"
                case 4: return "request q\(index): \(near)\n"
                default: return "entity V\(index) { a: Int @indexd }\n"
                }
            }
            return .schema([("M.v1.model", text)])
        },
        Shape(name: "long near-miss names") { random, budget in
            // Near-identical names of 60 scalars: every hint's edit distance runs its full band.
            let stem = "E" + String(repeating: random.pick(["a", "é"]), count: 58)
            var text = header + lines(budget * 9 / 10) { "entity \(stem)\(String(format: "%04d", $0)) {}\n" }
            text += "entity X {\n"
            text += lines(budget - text.utf8.count - 10) {
                "    r\($0): \(stem.dropLast())b\(String(format: "%04d", $0))?\n"
            }
            return .schema([("M.v1.model", text + "}\n")])
        },
        Shape(name: "many inverses") { random, budget in
            let count = budget / 60
            var a = "entity A {\n"
            var b = "entity B {\n"
            let style = random.index(below: 5)
            for index in 0..<count {
                switch style {
                case 0:  // valid explicit pairs
                    a += "    b\(index): B? @inverse(a\(index))\n"
                    b += "    a\(index): A? @inverse(b\(index))\n"
                case 1:  // ambiguous
                    a += "    b\(index): B?\n"
                    b += "    a\(index): Set<A>\n"
                case 2:  // explicit, misspelt
                    a += "    b\(index): B? @inverse(aa\(index))\n"
                    b += "    a\(index): A? @inverse(bb\(index))\n"
                case 3:  // all claim one name
                    a += "    b\(index): B? @inverse(a0)\n"
                    b += "    a\(index): A?\n"
                default:  // self-referential, half paired
                    a += "    s\(index): A? @inverse(t\(index))\n    t\(index): A?\n"
                }
            }
            return .schema([("M.v1.model", header + a + "}\n" + b + "}\n")])
        },
        Shape(name: "long names") { random, budget in
            let unit = random.pick(["Q", "é", "名"])
            let long = String(repeating: unit, count: budget / 8 / unit.utf8.count)
            let text =
                header + "entity \(long) {\n    \(long.lowercased()): Int\n    r: \(long)x?\n}\n"
                + "enum E\(long): String { \(long.lowercased()) }\nrequest r\(long): \(long)\n"
            return .schema([("M.v1.model", text)])
        },
        Shape(name: "nested predicates") { random, budget in
            var text = header + "entity E {\n    a: Int\n    b: String\n    next: E? @inverse(previous)\n"
            text += "    previous: E?\n}\n"
            let depth = random.pick([60, 64, 65, 5_000])
            let nested = String(repeating: "(", count: depth) + "a == 1" + String(repeating: ")", count: depth)
            text += "request nested: E where \"\(nested)\"\n"
            let nots = String(repeating: "NOT ", count: min(depth, budget / 10))
            text += "request nots: E where \"\(nots)a == 1\"\n"
            let hops = (0..<(budget / 20)).map { $0 % 2 == 0 ? "next" : "previous" }.joined(separator: ".")
            text += "request hops: E where \"\(hops).a == $x\"\n"
            text += "request flat: E where \""
            text += lines(budget - text.utf8.count - 10) { "a == $p\($0) \(random.pick(["AND", "OR"])) " }
            text += "b == 'x'\"\n"
            return .schema([("M.v1.model", text)])
        },
        Shape(name: "many versions") { random, budget in
            // Each version adds an attribute (with a default) or renames one: every step is
            // lightweight, so plan and generate run to the end.
            var files: [(name: String, text: String)] = []
            var used = 0
            var names = ["a1"]
            var renamedFrom: [String: String] = [:]
            for version in 1... {
                let attributes = names.map { name in
                    "    \(name): Int = 0" + (renamedFrom[name].map { " @renamed(from: \($0))" } ?? "") + "\n"
                }
                let text = "model M version \(version)\nentity E {\n" + attributes.joined() + "}\n"
                guard used + text.utf8.count <= budget else { break }
                files.append(("M.v\(version).model", text))
                used += text.utf8.count
                renamedFrom = [:]
                if names.count >= 30 || random.chance(0.4) {
                    let index = random.index(below: names.count)
                    renamedFrom["r\(version + 1)"] = names[index]
                    names[index] = "r\(version + 1)"
                } else {
                    names.append("a\(version + 1)")
                }
            }
            return .schema(files)
        },
        Shape(name: "many entities, one-way relationships") { random, budget in
            // Thousands of entities, each pointing at the next without an inverse: one warning
            // (and note) per relationship, and a record, a table and a plan entry per entity.
            let body = lines(budget - 40) { index in
                "entity E\(index) {\n    a: Int\n    next: E\(index + 1)?\n}\n"
            }
            let count = body.components(separatedBy: "entity ").count - 1
            return .schema([("M.v1.model", header + body.replacingOccurrences(of: "E\(count)?", with: "E0?"))])
        },
        Shape(name: "wide entity, many requests") { random, budget in
            let width = random.pick([500, 2_000])
            var text = header + "entity E {\n" + (0..<width).map { "    a\($0): Int\n" }.joined() + "}\n"
            text += lines(budget - text.utf8.count) { index in
                "request r\(index): E where \"a\(random.index(below: width)) == $p AND a\(random.index(below: width)) > 1\"\n"
            }
            return .schema([("M.v1.model", text)])
        },
        Shape(
            name: "renamed relationships",
            knownIssue:
                "the planner's shadow migration renames each column with its own ALTER TABLE, and SQLite "
                + "re-reads the whole schema for each: 480 renamed relationships take 30 s"
        ) { random, budget in
            // Every relationship and attribute renamed in the next version.
            let count = budget / 2 / 90
            func version(_ number: Int) -> String {
                let prefix = number == 1 ? "a" : "b"
                let renamed = { (old: String) in number == 1 ? "" : " @renamed(from: \(old))" }
                var text = "model M version \(number)\nentity A {\n"
                text += (0..<count).map { "    \(prefix)r\($0): B? @inverse(\(prefix)s\($0))\(renamed("ar\($0)"))\n" }
                    .joined()
                text += "}\nentity B {\n"
                text += (0..<count).map { "    \(prefix)s\($0): A?\(renamed("as\($0)"))\n" }.joined()
                text += (0..<count / 2).map { "    \(prefix)v\($0): Int = 0\(renamed("av\($0)"))\n" }.joined()
                return text + "}\n"
            }
            return .schema([("M.v1.model", version(1)), ("M.v2.model", version(2))])
        },
        Shape(name: "many requests") { random, budget in
            var text = header + "entity E {\n    a: Int\n    b: String?\n    c: Date?\n}\n"
            text += lines(budget - text.utf8.count) { index in
                let predicate = random.pick([
                    "a >= $min AND b BEGINSWITH[cd] $p", "b IN {'x', 'y'}", "c == nil OR a BETWEEN {1, $high}",
                    "NOT (a == \(index))",
                ])
                return "/// Request \(index).\nrequest r\(index): E where \"\(predicate)\"\n"
            }
            return .schema([("M.v1.model", text)])
        },
        Shape(name: "huge literals") { random, budget in
            let size = budget / 7
            let digits = String(repeating: "9", count: size)
            let text =
                header + "/// " + String(repeating: "doc ", count: size / 4) + "\nentity E {\n"
                + "    s: String = \"\(String(repeating: "\\u{1F600}", count: size / 10))\"\n"
                + "    i: Int = \(digits)\n    d: Decimal = 0.\(digits)\n    f: Double = 1e\(digits)\n}\n"
                + "request r: E where \"i == \(digits) OR s == '\(String(repeating: "x", count: size / 2))'\"\n"
            return .schema([("M.v1.model", text)])
        },
        Shape(name: "large enums") { random, budget in
            var text = header + "enum Mood: String {\n"
            text += lines(budget / 2) { "    case\(String(format: "%05d", $0))\n" }
            let cases = (text.utf8.count - 40) / 14
            text += "}\nentity E {\n"
            text += lines(budget - text.utf8.count - 10) { index in
                "    m\(index): Mood = .casee\(String(format: "%05d", random.index(below: max(cases, 1))))\n"
            }
            return .schema([("M.v1.model", text + "}\n")])
        },
        Shape(name: "large enum, many uses") { random, budget in
            // One enum of thousands of cases named by thousands of valid attributes, spread over
            // entities under SQLite's column limit: the output is linear, and so must be the work
            // (describing the enum once per use cost uses × cases).
            enumUsedEverywhere(budget: budget, defaults: false, versions: 1)
        },
        Shape(name: "large enum, many uses with defaults") { random, budget in
            // Each default names the last case. What remains per use is a search of the cases
            // for the default's raw value (`DefaultValue.sqlLiteral(for:)`, for the checksum and
            // the layout): 1.2 s of CPU at 98 KB, within the bound but not linear.
            enumUsedEverywhere(budget: budget, defaults: true, versions: 1)
        },
        Shape(name: "large enum, many uses, in an earlier version") { random, budget in
            // An earlier version is archived: its text must be linear too (the archive described
            // the enum again after every attribute: 20 KB of schema wrote 13.6 MB of Swift).
            enumUsedEverywhere(budget: budget, defaults: random.chance(0.5), versions: 2)
        },
        Shape(name: "large enum, many constants in requests") { random, budget in
            // Requests compare an enum attribute with raw values: each constant resolves to its
            // case by an index, not a search of the cases.
            var text = header + "enum K: String { "
            text += lines(budget / 2) { "c\(String(format: "%05d", $0)), " }.dropLast(2) + " }\n"
            let cases = (text.utf8.count - 40) / 8
            text += "entity E {\n    k: K\n    o: K?\n}\n"
            // Among the last cases, where a search of the cases would go furthest.
            let constant = { (random: inout SplitMix64) in
                "'c\(String(format: "%05d", max(0, cases - 1 - random.index(below: 20))))'"
            }
            // The densest form, one `IN` list, and a few requests of one constant each.
            text += lines(2_000) { index in "request r\(index): E where \"o == \(constant(&random))\"\n" }
            text += "request all: E where \"k IN {"
            text += lines(budget - text.utf8.count - 20) { _ in constant(&random) + ", " } + "'c00000'}\"\n"
            return .schema([("M.v1.model", text)])
        },
        Shape(name: "wide composites") { random, budget in
            let fields = random.pick([50, 500, 2_000])
            var text = header + "composite C {\n" + (0..<fields).map { "    f\($0): Int?\n" }.joined() + "}\n"
            text += "entity E {\n" + lines(budget - text.utf8.count - 10) { "    c\($0): C?\n" } + "}\n"
            return .schema([("M.v1.model", text)])
        },
        Shape(name: "many stages") { random, budget in
            let count = budget / 80
            let one = "model M version 1\nentity E {\n" + (0..<count).map { "    a\($0): Int\n" }.joined() + "}\n"
            var two = "model M version 2\nentity E {\n    b: Int = 0\n}\nmigration from 1 {\n"
            two += (0..<count).map { "    lossy E.a\($0) \"dropped \($0)\"\n    custom stage\($0) \"s\"\n" }.joined()
            return .schema([("M.v1.model", one), ("M.v2.model", two + "}\n")])
        },
        Shape(name: "garbage") { random, budget in
            let pieces = ["{", "}", "entity", "@", "(", "\"", "///", ":", "?", "<", ">", "\n", "x", "9", "$", "\\"]
            var text = header
            while text.utf8.count < budget - 10 { text += random.pick(pieces) + (random.chance(0.3) ? " " : "") }
            return .schema([("M.v1.model", text)])
        },
        Shape(name: "Core Data: wide and inverses") { random, budget in
            let count = budget / 400
            var entities = "<entity name=\"A\" representedClassName=\"A\" syncable=\"YES\">\n"
            entities += (0..<count).map {
                "<attribute name=\"x\($0)\" optional=\"YES\" attributeType=\"Integer 64\" defaultValueString=\"0\"/>\n"
                    + "<relationship name=\"b\($0)\" optional=\"YES\" maxCount=\"1\" deletionRule=\"Nullify\" destinationEntity=\"B\" inverseName=\"a\($0)\" inverseEntity=\"B\"/>\n"
            }.joined()
            entities += "</entity>\n<entity name=\"B\" representedClassName=\"B\" syncable=\"YES\">\n"
            entities += (0..<count).map {
                "<relationship name=\"a\($0)\" optional=\"YES\" maxCount=\"1\" deletionRule=\"Nullify\" destinationEntity=\"A\" inverseName=\"b\($0)\" inverseEntity=\"A\"/>\n"
            }.joined()
            return .coreData([("M.xcdatamodel", coreDataModel(entities + "</entity>\n"))])
        },
        Shape(name: "Core Data: many subentities") { random, budget in
            let properties = random.pick([50, 300])
            var entities = "<entity name=\"P\" isAbstract=\"YES\" syncable=\"YES\">\n"
            entities += (0..<properties).map {
                "<attribute name=\"p\($0)\" optional=\"YES\" attributeType=\"String\"/>\n"
            }
            .joined()
            entities += "</entity>\n"
            entities += lines(budget - entities.utf8.count - 400) {
                "<entity name=\"S\($0)\" parentEntity=\"P\" syncable=\"YES\"/>\n"
            }
            return .coreData([("M.xcdatamodel", coreDataModel(entities))])
        },
        Shape(name: "Core Data: deep and wide XML") { random, budget in
            let depth = random.pick([63, 64, 65, 5_000])
            let deep =
                "<entity name=\"D\"><userInfo>" + String(repeating: "<x>", count: min(depth, budget / 10))
                + String(repeating: "</x>", count: min(depth, budget / 10)) + "</userInfo></entity>\n"
            let attributes = lines(budget / 3) { " a\($0)=\"\($0)\"" }
            let wide = "<entity name=\"W\"\(attributes)><attribute name=\"v\" attributeType=\"String\"/></entity>\n"
            let value = String(repeating: "&amp;", count: budget / 30)
            let long =
                "<entity name=\"L\"><attribute name=\"v\" attributeType=\"String\" defaultValueString=\"\(value)\"/>"
            let entries = lines(budget / 6) { "<entry key=\"k\($0)\" value=\"v\"/>" }
            return .coreData([
                (
                    "M.xcdatamodel",
                    coreDataModel(deep + wide + long + "<userInfo>\(entries)</userInfo></entity>\n")
                )
            ])
        },
        Shape(name: "Core Data: many versions") { random, budget in
            // Each version adds an attribute up to a width: every step is lightweight.
            var versions: [(name: String, contents: String)] = []
            var used = 0
            let width = random.pick([3, 30])
            for version in 1... {
                let attributes = (0..<min(version, width)).map {
                    "<attribute name=\"a\($0)\" optional=\"YES\" attributeType=\"Integer 32\"/>"
                }.joined()
                let contents = coreDataModel(
                    "<entity name=\"E\" representedClassName=\"E\">\(attributes)</entity>\n")
                guard used + contents.utf8.count <= budget else { break }
                used += contents.utf8.count
                versions.append(("M \(version).xcdatamodel", contents))
            }
            return .coreData(versions)
        },
    ]

    /// A model of `versions` equal versions, each one enum of many cases (about half the budget)
    /// and entities of at most 1,900 attributes of that enum, each with a default (the last case)
    /// when `defaults`.
    private static func enumUsedEverywhere(budget: Int, defaults: Bool, versions: Int) -> Input {
        let perVersion = budget / versions - 40
        let caseList = lines(perVersion / 2) { "c\(String(format: "%05d", $0)), " }
        let last = String(format: "c%05d", caseList.utf8.count / 8 - 1)
        let line = { (index: Int) in "    p\(index): K" + (defaults ? " = .\(last)" : "") + "\n" }
        var body = "enum K: String { " + caseList.dropLast(2) + " }\n"
        var entity = 0
        while body.utf8.count + 1_000 < perVersion {
            var text = "entity T\(entity) {\n"
            var index = 0
            while index < 1_900, body.utf8.count + text.utf8.count + line(index).utf8.count + 2 <= perVersion {
                text += line(index)
                index += 1
            }
            body += text + "}\n"
            entity += 1
        }
        return .schema((1...versions).map { ("M.v\($0).model", "model M version \($0)\n" + body) })
    }

    /// A Core Data model file around `entities`.
    static func coreDataModel(_ entities: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" minimumToolsVersion="Automatic">
        \(entities)</model>

        """
    }

    /// Writes `input` into `folder`: a model folder `M`, or a bundle `M.xcdatamodeld`. Returns its path.
    static func write(_ input: Input, into folder: URL) throws -> URL {
        switch input {
        case .schema(let files):
            let model = folder.appendingPathComponent("M")
            try FileManager.default.createDirectory(at: model, withIntermediateDirectories: true)
            for file in files {
                try Data(file.text.utf8).write(to: model.appendingPathComponent(file.name))
            }
            return model
        case .coreData(let versions):
            let bundle = folder.appendingPathComponent("M.xcdatamodeld")
            for version in versions {
                let versionFolder = bundle.appendingPathComponent(version.name)
                try FileManager.default.createDirectory(at: versionFolder, withIntermediateDirectories: true)
                try Data(version.contents.utf8).write(to: versionFolder.appendingPathComponent("contents"))
            }
            if let current = versions.last {
                let plist = """
                    <?xml version="1.0" encoding="UTF-8"?>
                    <plist version="1.0"><dict><key>_XCCurrentVersionName</key><string>\(current.name)</string></dict></plist>

                    """
                try Data(plist.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
            }
            return bundle
        }
    }
}
