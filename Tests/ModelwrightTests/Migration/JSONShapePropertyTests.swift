import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// The shape check accepts exactly the JSON `JSONDecoder` reads as the declared standard type:
/// values of drawn types encoded by `JSONEncoder` pass, and mutations of them pass exactly when
/// `JSONDecoder` still reads them as that type.
struct JSONShapePropertyTests {
    /// Drawn types × drawn values × drawn mutations, against `JSONDecoder` with the real Swift type.
    @Test func acceptsExactlyWhatJSONDecoderReads() throws {
        var mutantsRefused = 0
        var mutantsAccepted = 0
        for index in 0..<400 {
            var random = SplitMix64(seed: 25, index: index)
            let drawn = Self.drawType(&random, depth: 0)
            let shape = try #require(JSONShape(spelling: drawn.spelling), "\(drawn.spelling)")
            for _ in 0..<3 {
                let json = try drawn.encodedSample(&random)
                #expect(shape.problem(inJSON: json) == nil, "\(drawn.spelling): \(json) refused")
                for _ in 0..<4 {
                    let mutant = Self.mutate(json, &random)
                    let reads = drawn.decodes(mutant)
                    let problem = shape.problem(inJSON: mutant)
                    #expect(
                        (problem == nil) == reads,
                        "\(drawn.spelling): \(mutant) — JSONDecoder reads it: \(reads), check: \(problem ?? "fits")")
                    if reads { mutantsAccepted += 1 } else { mutantsRefused += 1 }
                }
            }
        }
        // The mutations reach both sides of the line.
        #expect(mutantsRefused > 1000 && mutantsAccepted > 200, "\(mutantsRefused) refused, \(mutantsAccepted) read")
    }

    /// `MigrationTester.insertRow` refuses a `Codable` fixture exactly when `JSONDecoder` does
    /// not read it as the declared type (issue 25, B15), naming the attribute.
    @Test func insertRowRefusesWhatJSONDecoderDoesNotRead() throws {
        var refused = 0
        for index in 0..<30 {
            var random = SplitMix64(seed: 2515, index: index)
            let drawn = Self.drawType(&random, depth: 0)
            let schemas = (1...2).map { version in
                SchemaDescription(
                    modelName: "Fixtures", version: version,
                    entities: [
                        EntityDescription(
                            name: "Box",
                            attributes: [
                                AttributeDescription(
                                    name: "value", type: .codable(typeName: drawn.spelling), isOptional: true)
                            ])
                    ])
            }
            let tester = try MigrationTester(
                plan: MigrationPlan(current: schemas[1], stages: [.lightweight(from: schemas[0], to: schemas[1])]),
                startingAt: schemas[0])
            for _ in 0..<4 {
                let json = Self.mutate(try drawn.encodedSample(&random), &random)
                let wellFormed =
                    (try? JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)) != nil
                guard wellFormed else { continue }
                do {
                    _ = try tester.insertRow("Box", ["value": .string(json)])
                    #expect(drawn.decodes(json), "\(drawn.spelling): \(json) inserted")
                } catch MigrationError.invalidFixture("Box", 1, let reason) {
                    refused += 1
                    #expect(!drawn.decodes(json), "\(drawn.spelling): \(json) refused: \(reason)")
                    #expect(reason.contains("'value'"), "\(reason)")
                }
            }
        }
        #expect(refused > 20, "\(refused) refused")
    }

    /// The red team's cases (issue 25, B5–B14), each on the side `JSONDecoder` puts it.
    @Test func theReportedCases() throws {
        let cases: [(type: String, json: String, fits: Bool)] = [
            ("[Int: UUID]", #"{"x":"6C714D6F-5A52-4E0E-8D8B-1C0D0E0F1011"}"#, false),
            ("[Int: UUID]", #"{"1.5":"6C714D6F-5A52-4E0E-8D8B-1C0D0E0F1011"}"#, false),
            ("[Int: UUID]", #"{"1":"6C714D6F-5A52-4E0E-8D8B-1C0D0E0F1011"}"#, true),
            ("[Int: UUID]", #"{"1":"not-a-uuid"}"#, false),
            ("[URL]", #"[""]"#, false),
            ("Data?", #""!!notbase64""#, false),
            ("[UInt8]?", "[300]", false),
            ("[UInt8]?", "[-1]", false),
            ("[UInt8]?", "[200]", true),
            ("[String: [Int]]", #"{"a":[9223372036854775808]}"#, false),
            ("[UUID: Int]?", #"["6C714D6F-5A52-4E0E-8D8B-1C0D0E0F1011",5]"#, true),
            ("[UUID: Int]?", #"{"6C714D6F-5A52-4E0E-8D8B-1C0D0E0F1011":5}"#, false),
            ("[Int8: String]?", #"[3,"three"]"#, true),
            ("[Int8: String]?", #"[3]"#, false),
            ("Data", #""""#, true),
            ("[String: Int?]", #"{"a":null}"#, true),
        ]
        for (type, json, fits) in cases {
            let shape = try #require(JSONShape(spelling: type))
            let problem = shape.problem(inJSON: json)
            #expect((problem == nil) == fits, "\(type) \(json): \(problem ?? "fits")")
        }
    }

    // MARK: Drawn types

    /// A drawn type: its spelling, values of it as `JSONEncoder` writes them, and whether
    /// `JSONDecoder` reads some JSON as it.
    private protocol Drawn: Sendable {
        var spelling: String { get }
        func encodedSample(_ random: inout SplitMix64) throws -> String
        func decodes(_ json: String) -> Bool
        func array(spelledAs spelling: String) -> any Drawn
        func optional() -> any Drawn
        func keyed<Key: Codable & Hashable & Sendable>(by key: Typed<Key>) -> any Drawn
    }

    private struct Typed<Value: Codable & Sendable>: Drawn {
        let spelling: String
        let make: @Sendable (inout SplitMix64) -> Value

        func encodedSample(_ random: inout SplitMix64) throws -> String {
            String(decoding: try JSONEncoder().encode(make(&random)), as: UTF8.self)
        }

        func decodes(_ json: String) -> Bool { (try? JSONDecoder().decode(Value.self, from: Data(json.utf8))) != nil }

        func array(spelledAs spelling: String) -> any Drawn {
            let make = make
            return Typed<[Value]>(spelling: spelling) { random in
                (0..<Int.random(in: 0...3, using: &random)).map { _ in make(&random) }
            }
        }

        func optional() -> any Drawn {
            let make = make
            return Typed<Value?>(spelling: "\(spelling)?") { random in
                Bool.random(using: &random) ? nil : make(&random)
            }
        }

        func keyed<Key: Codable & Hashable & Sendable>(by key: Typed<Key>) -> any Drawn {
            let make = make
            return Typed<[Key: Value]>(spelling: "[\(key.spelling): \(spelling)]") { random in
                var dictionary: [Key: Value] = [:]
                for _ in 0..<Int.random(in: 0...3, using: &random) { dictionary[key.make(&random)] = make(&random) }
                return dictionary
            }
        }
    }

    private protocol DrawnKey: Sendable {
        func keying(_ value: any Drawn) -> any Drawn
        func set() -> any Drawn
        var drawn: any Drawn { get }
    }

    private static func scalar<T: Codable & Hashable & Sendable>(
        _ name: String, _ make: @escaping @Sendable (inout SplitMix64) -> T
    )
        -> any DrawnKey
    { Key(typed: Typed(spelling: name, make: make)) }

    private struct Key<T: Codable & Hashable & Sendable>: DrawnKey {
        let typed: Typed<T>
        func keying(_ value: any Drawn) -> any Drawn { value.keyed(by: typed) }
        func set() -> any Drawn {
            let make = typed.make
            return Typed<Set<T>>(spelling: "Set<\(typed.spelling)>") { random in
                Set((0..<Int.random(in: 0...3, using: &random)).map { _ in make(&random) })
            }
        }
        var drawn: any Drawn { typed }
    }

    private static let scalars: [any DrawnKey] = [
        scalar("String") {
            ["", "a", "ü", "1", "-2", "x y", "6C714D6F-5A52-4E0E-8D8B-1C0D0E0F1011"].randomElement(using: &$0)!
        },
        scalar("UUID") { random in
            UUID(
                uuid: (0..<16).reduce(into: uuid_t(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) { bytes, index in
                    withUnsafeMutableBytes(of: &bytes) { $0[index] = UInt8.random(in: 0...255, using: &random) }
                })
        },
        scalar("URL") { URL(string: "https://example.com/\(Int.random(in: 0...99, using: &$0))")! },
        scalar("Data") { random in
            Data((0..<Int.random(in: 0...5, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) })
        },
        scalar("Date") {
            Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -1_000_000...1_000_000, using: &$0)))
        },
        scalar("Bool") { Bool.random(using: &$0) },
        scalar("Int") { Int.random(in: .min ... .max, using: &$0) },
        scalar("Int8") { Int8.random(in: .min ... .max, using: &$0) },
        scalar("Int16") { Int16.random(in: .min ... .max, using: &$0) },
        scalar("Int32") { Int32.random(in: .min ... .max, using: &$0) },
        scalar("Int64") { Int64.random(in: .min ... .max, using: &$0) },
        scalar("UInt") { UInt.random(in: .min ... .max, using: &$0) },
        scalar("UInt8") { UInt8.random(in: .min ... .max, using: &$0) },
        scalar("UInt16") { UInt16.random(in: .min ... .max, using: &$0) },
        scalar("UInt32") { UInt32.random(in: .min ... .max, using: &$0) },
        scalar("UInt64") { UInt64.random(in: .min ... .max, using: &$0) },
        scalar("Double") { Double(Int.random(in: -1000...1000, using: &$0)) / 8 },
        scalar("Float") { Float(Int.random(in: -1000...1000, using: &$0)) / 4 },
        scalar("Decimal") { Decimal(Int.random(in: -1000...1000, using: &$0)) },
    ]

    private static func drawType(_ random: inout SplitMix64, depth: Int) -> any Drawn {
        let key = scalars.randomElement(using: &random)!
        if depth >= 2 { return key.drawn }
        switch Int.random(in: 0..<7, using: &random) {
        case 0, 1: return key.drawn
        case 2:
            let element = drawType(&random, depth: depth + 1)
            return element.array(spelledAs: "[\(element.spelling)]")
        case 3:
            let element = drawType(&random, depth: depth + 1)
            return element.array(spelledAs: "Array<\(element.spelling)>")
        case 4: return key.set()
        case 5: return drawType(&random, depth: depth + 1).optional()
        default: return key.keying(drawType(&random, depth: depth + 1))
        }
    }

    // MARK: Mutations

    /// Fragments that stand in for one value: wrong types, integers at and past each width's
    /// edges, fractions, strings that are not UUIDs, URLs or base64.
    private static let fragments = [
        "0", "1", "-1", "1.5", "1.0", "127", "128", "-129", "255", "256", "300", "65536", "4294967296",
        "9223372036854775807", "9223372036854775808", "-9223372036854775809", "18446744073709551615",
        "18446744073709551616", "1e400", "1e3", "true", "false", "null", "\"\"", "\"x\"", "\"1\"", "\"1.5\"",
        "\"not-a-uuid\"", "\"!!notbase64\"", "\"AAEC\"", "\"6C714D6F-5A52-4E0E-8D8B-1C0D0E0F1011\"",
        "\"https://example.com\"", "[]", "{}", "[1]", "{\"1\":1}", "[\"a\",1]",
    ]

    /// `json` with one drawn token (a string, number or literal) replaced by a drawn fragment,
    /// or, now and then, with its brackets swapped or its first element dropped.
    private static func mutate(_ json: String, _ random: inout SplitMix64) -> String {
        var text = Array(json)
        var tokens: [Range<Int>] = []
        var position = 0
        while position < text.count {
            let start = position
            if text[position] == "\"" {
                position += 1
                while position < text.count, text[position] != "\"" {
                    position += text[position] == "\\" ? 2 : 1
                }
                position += 1
                tokens.append(start..<min(position, text.count))
            } else if "-0123456789tfn".contains(text[position]) {
                while position < text.count, !",]}:".contains(text[position]) { position += 1 }
                tokens.append(start..<position)
            } else {
                position += 1
            }
        }
        let fragment = fragments.randomElement(using: &random)!
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return "[\(json)]"
        case 1:
            if let open = text.firstIndex(where: { $0 == "[" || $0 == "{" }),
                let close = text.lastIndex(where: { $0 == "]" || $0 == "}" })
            {
                text[open] = text[open] == "[" ? "{" : "["
                text[close] = text[close] == "]" ? "}" : "]"
            }
            return String(text)
        default:
            guard let token = tokens.randomElement(using: &random) else { return fragment }
            text.replaceSubrange(token, with: Array(fragment))
            return String(text)
        }
    }
}
