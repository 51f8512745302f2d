import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// The archive is lossless and strict: every schema decodes back to an equal one, and a damaged
/// text throws a `SchemaArchiveError` (or, where the damage still reads as an archive, decodes to
/// a schema that archives stably), never traps.
///
/// `MODELWRIGHT_ARCHIVE_CASES=<n>` runs `n` random schemas instead of 600.
struct SchemaArchiveTests {
    static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_ARCHIVE_CASES"].flatMap { Int($0) } ?? 600

    @Test func everyRandomSchemaDecodesToAnEqualSchema() throws {
        var schemas = RandomSchemas(seed: 0x5EED_A4C1)
        for index in 0..<Self.caseCount {
            let schema = schemas.schema()
            let text = schema.archive
            let decoded = try SchemaDescription(archive: text)
            #expect(decoded == schema, "case \(index):\n\(text)")
            #expect(decoded.archive == text, "case \(index): archiving is not stable")
            #expect(decoded.checksum == schema.checksum)
        }
    }

    @Test func anArchiveIsPrintableASCIIWithoutQuotesOrBackslashes() {
        var schemas = RandomSchemas(seed: 7)
        for _ in 0..<200 {
            let text = schemas.schema().archive
            let allowed = text.utf8.allSatisfy { (0x20...0x7E).contains($0) || $0 == 0x0A }
            #expect(allowed && !text.contains("\"") && !text.contains("\\"), "\(text)")
            #expect(!text.contains("  ") && !text.contains(" \n") && !text.hasSuffix(" "))
        }
    }

    @Test func everyDoubleReadsBackBitForBit() throws {
        var schemas = RandomSchemas(seed: 11)
        for _ in 0..<2_000 {
            let value = schemas.double()
            let schema = SchemaDescription(
                modelName: "M", version: 1,
                entities: [
                    EntityDescription(
                        name: "E",
                        attributes: [
                            AttributeDescription(name: "d", type: .double, defaultValue: .floatingPoint(value)),
                            AttributeDescription(name: "t", type: .date, defaultValue: .date(secondsSince1970: value)),
                        ])
                ])
            let attributes = try SchemaDescription(archive: schema.archive).entities[0].attributes
            guard case .floatingPoint(let double) = attributes[0].defaultValue,
                case .date(let seconds) = attributes[1].defaultValue
            else {
                Issue.record("defaults changed kind")
                continue
            }
            #expect(double.bitPattern == value.bitPattern && seconds.bitPattern == value.bitPattern, "\(value)")
        }
    }

    @Test func damagedArchivesThrowOrDecodeStably() {
        var schemas = RandomSchemas(seed: 0xDA_4A6E)
        var thrown = 0
        for index in 0..<Self.caseCount * 4 {
            let damaged = schemas.damage(schemas.schema().archive)
            do {
                let schema = try SchemaDescription(archive: damaged)
                #expect(try SchemaDescription(archive: schema.archive) == schema, "case \(index):\n\(damaged)")
            } catch let error as SchemaArchiveError {
                thrown += 1
                let lineCount = damaged.split(separator: "\n", omittingEmptySubsequences: false).count
                #expect((1...lineCount + 1).contains(error.line), "case \(index): \(error)")
            } catch {
                Issue.record("case \(index): \(error) is not a SchemaArchiveError")
            }
        }
        // Most damage must be caught: a format that accepted anything would pass the loop above.
        #expect(thrown > Self.caseCount * 2, "\(thrown) of \(Self.caseCount * 4) damaged archives threw")
    }

    @Test func randomBytesThrow() {
        var random = SplitMix64(seed: 99)
        for _ in 0..<500 {
            let bytes = (0..<random.next(below: 200)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            #expect(throws: SchemaArchiveError.self) {
                try SchemaDescription(archive: String(decoding: bytes, as: UTF8.self))
            }
        }
    }

    @Test(arguments: [
        ("", 1, "expected 'modelwright-schema-archive 2'"),
        ("modelwright-schema-archive 3\nmodel M 1", 1, "a format this runtime reads"),
        ("modelwright-schema-archive 2\nmodel M 1\nentity E\nattribute a enum:string:K same", 4, "described before"),
        (
            "modelwright-schema-archive 1\nmodel M 1\nentity E\nattribute a enum:string:K\nend\n"
                + "attribute b enum:string:K same", 6, "described before"
        ),
        ("modelwright-schema-archive 1", 2, "ends where a 'model' line belongs"),
        ("modelwright-schema-archive 1\nmodel M one", 2, "'one' is not an integer"),
        ("modelwright-schema-archive 1\nmodel M +1", 2, "'+1' is not an integer"),
        ("modelwright-schema-archive 1\nmodel M 1\nattribute a string", 3, "expected a 'entity' line"),
        ("modelwright-schema-archive 1\nmodel M 1\nentity E\nattribute a text", 4, "unknown attribute type 'text'"),
        ("modelwright-schema-archive 1\nmodel M 1\nentity E\nattribute a string optional optional", 4, "repeated"),
        ("modelwright-schema-archive 1\nmodel M 1\nentity E\nattribute a string default=double:1.50", 4, "number"),
        (
            "modelwright-schema-archive 1\nmodel M 1\nentity E\nattribute a enum:string:K\ncase x x", 6,
            "before an 'end'"
        ),
        ("modelwright-schema-archive 1\nmodel M 1\nentity E\nrelationship r D toOne delete=nullify", 4, "delete rule"),
        ("modelwright-schema-archive 1\nmodel M%4 1", 2, "malformed %-escape"),
        ("modelwright-schema-archive 1\nmodel M%41 1", 2, "malformed %-escape"),
        ("modelwright-schema-archive 1\nmodel M%FF 1", 2, "not UTF-8"),
        ("modelwright-schema-archive 1\nmodel M\u{E9} 1", 2, "must be %-escaped"),
        ("modelwright-schema-archive 1\nmodel  1", 2, "an empty value"),
        ("modelwright-schema-archive 1\nmodel M 1\nentity E\nend", 4, "'end' cannot follow"),
    ])
    func malformedArchivesSayWhereAndWhy(text: String, line: Int, reason: String) {
        #expect {
            try SchemaDescription(archive: text)
        } throws: { error in
            guard let error = error as? SchemaArchiveError else { return false }
            return error.line == line && error.reason.contains(reason)
        }
    }

    @Test func compositesNestOnlySoDeep() throws {
        func nested(_ depth: Int) -> String {
            let opening = (0..<depth).map { "attribute c\($0) composite:C\($0)" }
            let ending = Array(repeating: "end", count: depth)
            return ([SchemaArchive.header, "model M 1", "entity E"] + opening + ending).joined(
                separator: "\n")
        }
        let deepest = try SchemaDescription(archive: nested(SchemaArchiveReader.maximumDepth))
        #expect(deepest.archive == nested(SchemaArchiveReader.maximumDepth))
        for depth in [SchemaArchiveReader.maximumDepth + 1, 100_000] {
            #expect(throws: SchemaArchiveError.self) { try SchemaDescription(archive: nested(depth)) }
        }
    }

    /// An enum or composite is described at its first use only, so the archive stays linear
    /// however many attributes share a large type (1,500 uses of a 3,000-case enum wrote 4.5
    /// million lines in format 1); format 1, which repeats the description, still decodes.
    @Test func aSharedTypeIsDescribedOnce() throws {
        var random = SplitMix64(seed: 0xE_A5E)
        for _ in 0..<20 {
            let cases = (0..<(1 + random.next(below: 400))).map {
                EnumDescription.Case(name: "c\($0)", rawValue: "r\($0)")
            }
            let kind = EnumDescription(name: "K", rawType: .string, cases: cases)
            let inner = EnumDescription(name: "J", rawType: .int, cases: [.init(name: "a", rawValue: "1")])
            let composite = CompositeDescription(
                name: "C",
                fields: [
                    AttributeDescription(name: "f", type: .enumeration(inner)),
                    AttributeDescription(name: "g", type: .enumeration(kind), isOptional: true),
                ])
            let uses = 1 + random.next(below: 300)
            let entities = (0..<(1 + random.next(below: 3))).map { entity in
                EntityDescription(
                    name: "E\(entity)",
                    attributes: (0..<uses).map { index in
                        let type: AttributeType = [.enumeration(kind), .composite(composite), .enumeration(inner)][
                            random.next(below: 3)]
                        return AttributeDescription(
                            name: "a\(index)", type: type, isOptional: random.next(below: 2) == 0)
                    })
            }
            let schema = SchemaDescription(modelName: "M", version: 1, entities: entities)
            let lines = SchemaArchive.lines(of: schema)
            let attributes = entities.count * uses
            #expect(lines.count <= 2 + entities.count + attributes + cases.count + 12, "\(lines.count) lines")
            let decoded = try SchemaDescription(archive: lines.joined(separator: "\n"))
            #expect(decoded == schema)
            #expect(decoded.archive == lines.joined(separator: "\n"), "archiving is not stable")
        }
        let version1 = """
            modelwright-schema-archive 1
            model M 1
            entity E
            attribute a enum:string:K
            case x y
            end
            attribute b enum:string:K optional
            case x y
            end
            """
        let kind = AttributeType.enumeration(
            .init(name: "K", rawType: .string, cases: [.init(name: "x", rawValue: "y")]))
        let decoded = try SchemaDescription(archive: version1)
        #expect(
            decoded
                == SchemaDescription(
                    modelName: "M", version: 1,
                    entities: [
                        EntityDescription(
                            name: "E",
                            attributes: [
                                AttributeDescription(name: "a", type: kind),
                                AttributeDescription(name: "b", type: kind, isOptional: true),
                            ])
                    ]))
        #expect(decoded.archive.hasSuffix("attribute b enum:string:K optional same"))
    }

    @Test func aTrailingNewlineIsAccepted() throws {
        let schema = RandomSchemas(seed: 3).schemaWithEntities()
        #expect(try SchemaDescription(archive: schema.archive + "\n") == schema)
        #expect(throws: SchemaArchiveError.self) { try SchemaDescription(archive: schema.archive + "\n\n") }
    }
}

extension RandomSchemas {
    /// The first random schema with at least one entity.
    fileprivate func schemaWithEntities() -> SchemaDescription {
        var schemas = self
        while true {
            let schema = schemas.schema()
            if !schema.entities.isEmpty { return schema }
        }
    }
}
