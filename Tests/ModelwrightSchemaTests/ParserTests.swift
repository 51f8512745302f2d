import Modelwright
import Testing

@testable import ModelwrightSchema

/// Every construct of the schema language parses into the AST it means.
struct ParserTests {
    private static func parse(_ text: String) -> (AST.Root, [Diagnostic]) {
        var sink = DiagnosticSink(file: SourceFile(path: "P.v1.model", text: text))
        let file = Parser.parse(SourceFile(path: "P.v1.model", text: text), diagnostics: &sink)
        return (file, sink.diagnostics)
    }

    @Test func everyConstructParses() throws {
        let text = """
            /// The model.
            model Shop version 2

            /// A buyer.
            abstract entity Party: Base {
                /// The name.
                name: String? = "x" @unique @renamed(from: title)
                tags: Codable<[String: [Int]]>?
                orders: Set<Order> @inverse(buyer) @delete(cascade)
                lines: [Line]
                `default`: Bool = true; count: Int = -3
                ratio: Double = 2.5e-1
                kind: Kind = .retail
                seen: Date = now
                gone: Date? = nil

                @sort(name descending, count)
                @unique(name, count)
                @index(count)
            }

            /// Kinds.
            enum Kind: Int {
                /// Shops.
                case retail = 1, wholesale
            }

            composite Address { street: String; zip: String? }

            migration from 1 {
                /// Does it.
                custom fixIt "Fix it"
            }
            """
        let (file, diagnostics) = Self.parse(text)
        #expect(diagnostics.isEmpty)
        let header = try #require(file.header)
        #expect(header.name.text == "Shop")
        #expect(header.version == 2)
        #expect(header.doc == ["The model."])
        #expect(file.declarations.count == 4)

        guard case .entity(let entity) = file.declarations[0] else {
            Issue.record("expected an entity")
            return
        }
        #expect(entity.isAbstract)
        #expect(entity.parent?.text == "Base")
        #expect(entity.doc == ["A buyer."])
        #expect(
            entity.properties.map(\.name.text) == [
                "name", "tags", "orders", "lines", "default", "count", "ratio", "kind", "seen", "gone",
            ])
        let name = entity.properties[0]
        #expect(name.doc == ["The name."])
        #expect(name.type.isOptional)
        #expect(name.defaultValue?.kind == .string("x"))
        #expect(name.annotations.map(\.name.text) == ["unique", "renamed"])
        #expect(name.annotations[1].arguments?.first?.label?.text == "from")
        #expect(name.annotations[1].arguments?.first?.words.map(\.text) == ["title"])
        guard case .codable(let swiftType) = entity.properties[1].type.kind else {
            Issue.record("expected a Codable type")
            return
        }
        #expect(swiftType == "[String: [Int]]")
        guard case .set(let destination) = entity.properties[2].type.kind,
            case .array(let line) = entity.properties[3].type.kind
        else {
            Issue.record("expected Set<Order> and [Line]")
            return
        }
        #expect(destination.text == "Order")
        #expect(line.text == "Line")
        #expect(entity.properties[5].defaultValue?.kind == .integer("-3"))
        #expect(entity.properties[6].defaultValue?.kind == .float("2.5e-1"))
        #expect(entity.properties[7].defaultValue?.kind == .enumCase("retail"))
        #expect(entity.properties[8].defaultValue?.kind == .now)
        #expect(entity.properties[9].defaultValue?.kind == .null)
        #expect(entity.annotations.map(\.name.text) == ["sort", "unique", "index"])
        #expect(entity.annotations[0].arguments?.map { $0.words.map(\.text) } == [["name", "descending"], ["count"]])

        guard case .enumeration(let kind) = file.declarations[1] else {
            Issue.record("expected an enum")
            return
        }
        #expect(kind.rawType?.text == "Int")
        #expect(kind.cases.map(\.name.text) == ["retail", "wholesale"])
        #expect(kind.cases[0].rawValue?.kind == .integer("1"))
        #expect(kind.cases[0].doc == ["Shops."])

        guard case .composite(let address) = file.declarations[2] else {
            Issue.record("expected a composite")
            return
        }
        #expect(address.fields.map(\.name.text) == ["street", "zip"])

        guard case .migration(let migration) = file.declarations[3] else {
            Issue.record("expected a migration")
            return
        }
        #expect(migration.fromVersion == 1)
        #expect(migration.customStages.map(\.name.text) == ["fixIt"])
        #expect(migration.customStages[0].label == "Fix it")
        #expect(migration.customStages[0].doc == ["Does it."])
    }

    @Test func nodesCarryTheirSourceRanges() throws {
        let text = "model M version 1\nentity Trip {\n    title: String\n}\n"
        let (file, _) = Self.parse(text)
        guard case .entity(let entity) = file.declarations.first else {
            Issue.record("expected an entity")
            return
        }
        let source = SourceFile(path: "P.v1.model", text: text)
        #expect(source.location(of: entity.range.start) == SourcePosition(line: 2, column: 1))
        #expect(source.location(of: entity.name.range.start) == SourcePosition(line: 2, column: 8))
        #expect(source.location(of: entity.properties[0].type.range.start) == SourcePosition(line: 3, column: 12))
        #expect(entity.range.end == text.utf8.count - 1)
    }

    /// The lexer reuses the strings of names it saw lately, so names that share a prefix, differ
    /// only past their eighth byte, are too long to reuse, are not ASCII, or end the file must each
    /// still read as written.
    @Test func repeatedNamesReadAsWritten() {
        let names = [
            "a", "ab", "b", "abcdefg", "abcdefgh", "abcdefghi", "abcdefghX", "abcdefghijklmno",
            "abcdefghijklmnX", "abcdefghijklmnop", "abcdefghijklmnoq", "h\u{E9}llo", "h\u{E9}", "h\u{E8}",
        ]
        let properties = (names + names.reversed() + names).map { "    \($0): \($0)" }.joined(separator: "\n")
        let (file, diagnostics) = Self.parse(
            "model M version 1\nentity T {\n\(properties)\n}\nentity U { x: abcdefgh }")
        #expect(diagnostics.isEmpty)
        guard case .entity(let entity) = file.declarations.first, case .entity(let last) = file.declarations.last else {
            Issue.record("expected two entities")
            return
        }
        #expect(entity.properties.map(\.name.text) == names + names.reversed() + names)
        let types = entity.properties.map { property -> String in
            guard case .named(let type) = property.type.kind else { return "" }
            return type.text
        }
        #expect(types == names + names.reversed() + names)
        guard case .named(let type) = last.properties.first?.type.kind else {
            Issue.record("expected a named type")
            return
        }
        #expect(type.text == "abcdefgh")
    }

    @Test func commentsAreSkippedAndBlockCommentsNest() {
        let text = """
            // a comment
            model M version 1 /* a /* nested */ comment */
            //// four slashes are not documentation
            entity A { x: Int }
            """
        let (file, diagnostics) = Self.parse(text)
        #expect(diagnostics.isEmpty)
        guard case .entity(let entity) = file.declarations.first else {
            Issue.record("expected an entity")
            return
        }
        #expect(entity.doc.isEmpty)
    }

    @Test func stringEscapes() {
        let (file, diagnostics) = Self.parse("model M version 1\n" + #"entity A { s: String = "a\"b\\c\nd\te" }"#)
        #expect(diagnostics.isEmpty)
        guard case .entity(let entity) = file.declarations.first else {
            Issue.record("expected an entity")
            return
        }
        #expect(entity.properties[0].defaultValue?.kind == .string("a\"b\\c\nd\te"))
    }
}
