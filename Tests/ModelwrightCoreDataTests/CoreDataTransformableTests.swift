import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCoreData
@testable import ModelwrightSchema

/// A Transformable imports as `Codable<T>` only when `T` is built from standard Swift Codable
/// types, and otherwise as `Data` holding the archived bytes: an imported model compiles as imported.
@Suite(.heavy)
struct CoreDataTransformableTests {
    /// The leaf types the generated code may name inside `Codable<…>` (this test's own list).
    static let leaves = [
        "Bool", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64",
        "Double", "Float", "String", "Date", "Data", "URL", "UUID", "Decimal",
    ]

    /// A random standard type, as Core Data might spell it and as the importer must spell it.
    static func standardType(depth: Int, using random: inout SplitMix64) -> (written: String, canonical: String) {
        let space = { (random: inout SplitMix64) in Bool.random(using: &random) ? " " : "" }
        if depth == 0 || Int.random(in: 0..<3, using: &random) == 0 {
            let leaf = leaves.randomElement(using: &random) ?? "Int"
            return (leaf, leaf)
        }
        var element = standardType(depth: depth - 1, using: &random)
        if Int.random(in: 0..<5, using: &random) == 0 {
            element = (element.written + space(&random) + "?", element.canonical + "?")
        }
        let key = standardType(depth: depth - 1, using: &random)
        switch Int.random(in: 0..<5, using: &random) {
        case 0: return ("[\(space(&random))\(element.written)]", "[\(element.canonical)]")
        case 1: return ("Array<\(element.written)\(space(&random))>", "[\(element.canonical)]")
        case 2: return ("Set<\(element.written)>", "Set<\(element.canonical)>")
        case 3:
            return (
                "[\(key.written)\(space(&random)):\(space(&random))\(element.written)]",
                "[\(key.canonical): \(element.canonical)]"
            )
        default:
            return (
                "Dictionary<\(key.written),\(space(&random))\(element.written)>",
                "[\(key.canonical): \(element.canonical)]"
            )
        }
    }

    static let transformers: [String?] = [
        nil, "", "NSSecureUnarchiveFromData", "NSKeyedUnarchiveFromData", "WMFSecureUnarchiveFromDataTransformer",
    ]

    @Test func standardTypesInEverySpellingMapToTheirCanonicalCodableType() {
        var random = SplitMix64(seed: 15)
        for _ in 0..<2000 {
            let (written, canonical) = Self.standardType(depth: 4, using: &random)
            for transformer in Self.transformers {
                #expect(
                    CoreDataTransformable.mapping(className: written, transformer: transformer) == .codable(canonical),
                    "\(written)")
            }
            // The canonical spelling is a fixed point: re-importing an export changes nothing.
            #expect(CoreDataTransformable.mapping(className: canonical, transformer: nil) == .codable(canonical))
        }
    }

    @Test func foundationClassesWithOneSwiftTypeMapToIt() {
        let expected = [
            "NSString": "String", "NSDate": "Date", "NSURL": "URL", "NSUUID": "UUID", "NSData": "Data",
            "NSDecimalNumber": "Decimal",
        ]
        for (className, type) in expected {
            #expect(CoreDataTransformable.mapping(className: className, transformer: nil) == .codable(type))
        }
    }

    @Test func everythingElseIsArchivedData() {
        var random = SplitMix64(seed: 16)
        var names = [
            "NSNumber", "NSArray", "NSDictionary", "NSSet", "NSMutableArray", "NSMutableDictionary",
            "NSMutableSet", "NSMutableString", "NSAttributedString", "NSValue", "NSObject", "CLLocation",
            "CLPlacemark", "UIColor", "NSColor", "UIImage", "CGPoint", "Color", "RemoteNotificationLinks",
            "Swift.String", "Foundation.Date", "string", "Any", "AnyObject", "Character", "Substring",
            "Optional<String>", "String?", "[String]?", "[NSString]", "[String: CLLocation]", "Set<UIColor>",
            "[]", "[:]", "[String", "String]", "Set<String", "Set<>", "[String:]", "Dictionary<String>",
            "Array<String, Int>", "[String??]", "[Int] [Int]", "Int Int", "<Int>", "(Int, String)", "Int.Type",
            "Strïng", "String\u{0}", "[String\n]",
            String(repeating: "[", count: 100) + "Int"
                + String(repeating: "]", count: 100),
        ]
        // Random identifiers, almost never a standard name, and standard names with a random suffix.
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
        for _ in 0..<500 {
            let length = Int.random(in: 1...12, using: &random)
            let name = String((0..<length).map { _ in letters.randomElement(using: &random) ?? "X" })
            names.append(name)
            names.append("[\(name)]")
            names.append((Self.leaves.randomElement(using: &random) ?? "Int") + name)
        }
        for name in names where !CoreDataTransformableCorpusTests.isStandard(name) {
            for transformer in Self.transformers {
                #expect(
                    CoreDataTransformable.mapping(className: name, transformer: transformer) == .archivedData,
                    "\(name)")
            }
        }
        #expect(CoreDataTransformable.mapping(className: nil, transformer: nil) == .archivedData)
        #expect(CoreDataTransformable.mapping(className: "", transformer: "X") == .archivedData)
    }

    @Test func anArchivedTransformableIsDataWithItsClassDocumentedAndAWarning() throws {
        let bundle = try CoreDataTestSupport.makeBundle(
            "Places",
            versions: [
                "Places": CoreDataTestSupport.contents(
                    """
                    <entity name="Place" representedClassName="Place" syncable="YES">
                        <attribute name="location" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromDataTransformer" customClassName="CLLocation"/>
                        <attribute name="name" attributeType="Transformable" customClassName="NSString"/>
                        <attribute name="tags" optional="YES" attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromData" customClassName="Set&lt;String&gt;"/>
                        <attribute name="extra" optional="YES" attributeType="Transformable"/>
                    </entity>
                    """)
            ])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        #expect(
            imported.text(1) == """
                /// Imported from Core Data: version 'Places' of Places.xcdatamodeld.
                model Places version 1

                entity Place {
                    /// Core Data Transformable: Core Data's default value transformer of an unnamed class; stored as its archived bytes.
                    extra: Data? @coreData(transformer: nil, className: nil)
                    /// Core Data Transformable: NSSecureUnarchiveFromDataTransformer of CLLocation; stored as its archived bytes.
                    location: Data? @coreData(transformer: "NSSecureUnarchiveFromDataTransformer", className: "CLLocation")
                    name: Codable<String> @coreData(transformer: nil, className: "NSString")
                    tags: Codable<Set<String>>?
                }

                """)
        let file = "Places.xcdatamodel/contents"
        #expect(
            imported.warnings == [
                "\(file):4:5: Transformable attribute 'Place.location' holds 'CLLocation' (value transformer 'NSSecureUnarchiveFromDataTransformer'), which is not a standard Swift Codable type; imported as 'Data' holding the archived bytes, for the app to decode with that transformer",
                "\(file):7:5: Transformable attribute 'Place.extra' names no class (Core Data's default value transformer), which is not a standard Swift Codable type; imported as 'Data' holding the archived bytes, for the app to decode with that transformer",
            ])
        #expect(!imported.loaded.hasErrors, "\(imported.loaded.diagnostics)")
        let place = try #require(imported.loaded.model?.current?.schema.entity(named: "Place"))
        #expect(
            place.attributes.map(\.type) == [
                .data, .data, .codable(typeName: "String"), .codable(typeName: "Set<String>"),
            ])

        // Export writes each back as the Transformable it was.
        let (first, second, export) = try CoreDataRoundTripTests.roundTrip(bundle.path)
        #expect(first == second)
        let xml = String(
            decoding: try #require(export.files.first { $0.path.hasSuffix("contents") }?.data), as: UTF8.self)
        #expect(
            xml.contains(
                #"attributeType="Transformable" valueTransformerName="NSSecureUnarchiveFromDataTransformer" customClassName="CLLocation""#
            ))
        // The attribute's doc line travels in `userInfo`, so the round trip keeps it.
        #expect(xml.contains(#"<attribute name="extra" optional="YES" attributeType="Transformable">"#))
        #expect(xml.contains(#"<attribute name="name" attributeType="Transformable" customClassName="NSString"/>"#))
    }

    @Test func aTransformableUnchangedBetweenVersionsIsNoChange() throws {
        let entity = """
            <entity name="Place" representedClassName="Place" syncable="YES">
                <attribute name="location" optional="YES" attributeType="Transformable" valueTransformerName="T" customClassName="CLLocation"/>
                <attribute name="name" optional="YES" attributeType="Transformable" customClassName="NSString"/>
                <attribute name="ids" optional="YES" attributeType="Transformable" customClassName="[Int64]"/>
                <attribute name="extra" optional="YES" attributeType="Transformable"/>
            </entity>
            """
        let bundle = try CoreDataTestSupport.makeBundle(
            "Places",
            versions: [
                "Places": CoreDataTestSupport.contents(entity),
                "Places 2": CoreDataTestSupport.contents(
                    entity.replacingOccurrences(
                        of: "<attribute name=\"name\"",
                        with:
                            "<attribute name=\"title\" optional=\"YES\" attributeType=\"String\"/>\n<attribute name=\"name\""
                    )),
            ])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        let model = try #require(imported.loaded.model)
        let changes = try #require(model.steps.first?.changes)
        #expect(changes.map(\.summary).count == 1, "\(changes.map(\.summary))")
        #expect(changes.allSatisfy { $0.summary.contains("title") }, "\(changes.map(\.summary))")
    }
}

/// Over the whole corpus: every imported attribute type compiles on Linux without app code.
@Suite(
    .heavy, .enabled(if: CoreDataTestSupport.corpusIsAvailable, "../shared/corpus is not present beside the package"))
struct CoreDataTransformableCorpusTests {
    /// Whether `type` is a leaf of the allowed set or `[T]`, `[K: V]`, `Set<T>` of allowed types
    /// (with `T?` inside), read independently of the importer's parser.
    static func isStandard(_ type: String) -> Bool {
        if CoreDataTransformableTests.leaves.contains(type) { return true }
        func inner(_ text: Substring) -> Bool {
            isStandard(text.hasSuffix("?") ? String(text.dropLast()) : String(text))
        }
        if type.hasPrefix("Set<"), type.hasSuffix(">") { return inner(type.dropFirst(4).dropLast()) }
        guard type.hasPrefix("["), type.hasSuffix("]") else { return false }
        let body = type.dropFirst().dropLast()
        // A dictionary's top-level ": " is the one outside any brackets.
        var depth = 0
        for index in body.indices {
            switch body[index] {
            case "[", "<": depth += 1
            case "]", ">": depth -= 1
            case ":" where depth == 0:
                return inner(body[..<index]) && body[body.index(after: index)...].hasPrefix(" ")
                    && inner(body[body.index(index, offsetBy: 2)...])
            default: break
            }
        }
        return inner(body)
    }

    @Test(arguments: CoreDataTestSupport.corpusModels)
    func everyImportedAttributeTypeIsBuiltInOrAStandardCodable(path: String) throws {
        let imported = try CoreDataTestSupport.importModel(path, options: .init(includesVersionsAfterCurrent: true))
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        let model = try #require(imported.loaded.model)
        var codables = 0
        for version in model.versions {
            for attribute in version.schema.entities.flatMap(\.attributes) {
                switch attribute.type {
                case .codable(let typeName):
                    codables += 1
                    #expect(Self.isStandard(typeName), "\(version.number) \(attribute.name): Codable<\(typeName)>")
                case .enumeration, .composite:
                    Issue.record("\(attribute.name): the importer writes no enums or composites")
                default:
                    break
                }
            }
        }
        if path.hasSuffix("WooCommerce.xcdatamodeld") { #expect(codables > 1000) }
    }
}
