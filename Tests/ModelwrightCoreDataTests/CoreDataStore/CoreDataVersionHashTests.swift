import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData

/// Core Data's entity version hashes (`coredata-store-format.md`, §9), computed from what
/// `import-coredata` keeps of a model.
@Suite(.heavy)
struct CoreDataVersionHashTests {
    /// The facts of a one-version model written as `entities` XML.
    static func facts(_ body: String) throws -> CoreDataStoreModel.Version {
        let model = try CoreDataReader.read(Data(CoreDataTestSupport.contents(body).utf8), path: "contents")
        return CoreDataStoreFacts.version(of: model, named: "v", number: 1, shape: ImportedShape())
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] { Modelwright.SHA256.digest(of: bytes) }

    /// The recipe spelt out byte by byte for a small model: an entity with one attribute, a
    /// subentity, and a to-one / to-many pair.
    @Test func theRecipeByteByByte() throws {
        let version = try Self.facts(
            """
            <entity name="Shelf" versionHashModifier="m1">
                <attribute name="label" optional="YES" attributeType="String" versionHashModifier="x"/>
                <relationship name="books" optional="YES" toMany="YES" ordered="YES" destinationEntity="Book" inverseName="shelf" inverseEntity="Book"/>
                <uniquenessConstraints><uniquenessConstraint><constraint value="label"/></uniquenessConstraint></uniquenessConstraints>
            </entity>
            <entity name="Book" isAbstract="YES">
                <attribute name="cover" attributeType="Binary" allowsExternalBinaryDataStorage="YES" preserveAfterDeletion="YES"/>
                <relationship name="shelf" maxCount="1" destinationEntity="Shelf" inverseName="books" inverseEntity="Shelf"/>
            </entity>
            <entity name="Novel" parentEntity="Book">
                <attribute name="words" attributeType="Integer 64"/>
                <attribute name="draft" optional="YES" transient="YES" attributeType="String"/>
            </entity>
            """)
        func le<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
        func base(_ name: String, _ flags: UInt16, _ modifier: String? = nil) -> [UInt8] {
            Self.sha256(Array(name.utf8) + le(flags) + Array((modifier ?? "").utf8))
        }
        let label = Self.sha256(base("label", 1, "x") + le(Int32(700)))
        let books = Self.sha256(
            base("books", 1) + Array("Book".utf8) + Array("shelf".utf8) + le(UInt32(0)) + le(UInt32(0)) + le(UInt16(1)))
        let cover = Self.sha256(base("cover", 0) + le(Int32(1000)) + [1, 1])
        let shelf = Self.sha256(
            base("shelf", 0) + Array("Shelf".utf8) + Array("books".utf8) + le(UInt32(1)) + le(UInt32(0)))
        let words = Self.sha256(base("words", 0) + le(Int32(300)))
        let shelfEntity = Self.sha256(
            Array("Shelf".utf8) + [0] + books + label + Array("m1".utf8) + Array("label".utf8))
        let bookEntity = Self.sha256(Array("Book".utf8) + [1] + cover + shelf)
        let novelEntity = Self.sha256(Array("Novel".utf8) + [0] + bookEntity + cover + shelf + words)
        let hashes = CoreDataVersionHashes.hashes(of: version)
        #expect(hashes["Shelf"] == Data(shelfEntity))
        #expect(hashes["Book"] == Data(bookEntity))
        #expect(hashes["Novel"] == Data(novelEntity))
        // NSStoreModelVersionChecksumKey: base64 SHA-256 of the hashes in name order.
        #expect(
            CoreDataVersionHashes.checksum(of: hashes)
                == Data(Self.sha256(bookEntity + novelEntity + shelfEntity)).base64EncodedString())
    }

    /// One entity with every kind of property, as XML attributes that can be switched.
    struct Variant {
        var className = "Thing"
        var optional = "YES"
        var type = "String"
        var defaultValue = ""
        var indexed = ""
        var deletionRule = "Nullify"
        var userInfo = ""
        var transformer = ""
        var scalar = ""
        var modifier = ""
        var entityModifier = ""
        var ordered = "NO"
        var minCount = ""
        var inverse = "things"
        var abstract = "NO"
        var external = ""
        var preserve = ""
        var constraint = ""
        var reversed = false

        var xml: String {
            var properties = [
                "<attribute name=\"value\" optional=\"\(optional)\" attributeType=\"\(type)\"\(defaultValue)\(indexed)\(transformer)\(scalar)\(modifier)\(external)\(preserve)>\(userInfo)</attribute>",
                "<attribute name=\"other\" optional=\"YES\" attributeType=\"Integer 32\"/>",
                "<relationship name=\"owner\" optional=\"YES\" maxCount=\"1\" deletionRule=\"\(deletionRule)\" destinationEntity=\"Owner\" inverseName=\"\(inverse)\" inverseEntity=\"Owner\"/>",
            ]
            if reversed { properties.reverse() }
            return """
                <entity name="Thing" representedClassName="\(className)" isAbstract="\(abstract)"\(entityModifier)>
                \(properties.joined(separator: "\n"))
                \(constraint)
                </entity>
                <entity name="Owner">
                    <relationship name="things" optional="YES" toMany="YES" ordered="\(ordered)"\(minCount) destinationEntity="Thing" inverseName="owner" inverseEntity="Thing"/>
                    <relationship name="others" optional="YES" toMany="YES" destinationEntity="Thing"/>
                </entity>
                """
        }
    }

    /// What Core Data leaves out of the hash changes no hash; every property that goes in changes
    /// the hash of the entity that has it, and of no other.
    @Test func whatTheHashCoversAndWhatItDoesNot() throws {
        let plain = CoreDataVersionHashes.hashes(of: try Self.facts(Variant().xml))
        let unchanged: [(String, (inout Variant) -> Void)] = [
            ("class name", { $0.className = "OtherClass" }),
            ("default value", { $0.defaultValue = " defaultValueString=\"abc\"" }),
            ("index", { $0.indexed = " indexed=\"YES\"" }),
            ("delete rule", { $0.deletionRule = "Cascade" }),
            ("userInfo", { $0.userInfo = "<userInfo><entry key=\"k\" value=\"v\"/></userInfo>" }),
            ("transformer name", { $0.transformer = " valueTransformerName=\"T\"" }),
            ("scalar type", { $0.scalar = " usesScalarValueType=\"YES\"" }),
            ("declaration order", { $0.reversed = true }),
        ]
        for (what, change) in unchanged {
            var variant = Variant()
            change(&variant)
            #expect(CoreDataVersionHashes.hashes(of: try Self.facts(variant.xml)) == plain, "\(what) changed a hash")
        }
        let changed: [(String, String, (inout Variant) -> Void)] = [
            ("optional", "Thing", { $0.optional = "NO" }),
            ("type", "Thing", { $0.type = "URI" }),
            ("property modifier", "Thing", { $0.modifier = " versionHashModifier=\"2\"" }),
            ("entity modifier", "Thing", { $0.entityModifier = " versionHashModifier=\"2\"" }),
            ("abstract", "Thing", { $0.abstract = "YES" }),
            (
                "external storage", "Thing",
                {
                    $0.type = "Binary"
                    $0.external = " allowsExternalBinaryDataStorage=\"YES\""
                }
            ),
            ("preserve after deletion", "Thing", { $0.preserve = " preserveAfterDeletion=\"YES\"" }),
            (
                "uniqueness", "Thing",
                {
                    $0.constraint =
                        "<uniquenessConstraints><uniquenessConstraint><constraint value=\"value\"/><constraint value=\"other\"/></uniquenessConstraint></uniquenessConstraints>"
                }
            ),
            ("ordered", "Owner", { $0.ordered = "YES" }),
            ("minimum count", "Owner", { $0.minCount = " minCount=\"2\"" }),
        ]
        for (what, entity, change) in changed {
            var variant = Variant()
            change(&variant)
            var base = Variant()
            if what == "external storage" { base.type = "Binary" }
            let before = CoreDataVersionHashes.hashes(of: try Self.facts(base.xml))
            let after = CoreDataVersionHashes.hashes(of: try Self.facts(variant.xml))
            #expect(before[entity] != after[entity], "\(what) did not change \(entity)'s hash")
            for other in after.keys where other != entity {
                #expect(before[other] == after[other], "\(what) changed \(other)'s hash")
            }
        }
    }

    /// A version hash covers inherited properties and the parent's hash: a change in a parent
    /// changes every subentity's hash; a transient property changes nothing.
    @Test func parentsReachTheirSubentitiesAndTransientsReachNothing() throws {
        func xml(parentAttribute: String, transient: String) -> String {
            """
            <entity name="Base"><attribute name="a" optional="YES" attributeType="\(parentAttribute)"/></entity>
            <entity name="Middle" parentEntity="Base"><attribute name="b" optional="YES" attributeType="String"\(transient)/></entity>
            <entity name="Leaf" parentEntity="Middle"/>
            <entity name="Alone"/>
            """
        }
        let plain = CoreDataVersionHashes.hashes(of: try Self.facts(xml(parentAttribute: "String", transient: "")))
        let retyped = CoreDataVersionHashes.hashes(of: try Self.facts(xml(parentAttribute: "Date", transient: "")))
        for name in ["Base", "Middle", "Leaf"] { #expect(plain[name] != retyped[name]) }
        #expect(plain["Alone"] == retyped["Alone"])
        let withTransient = try Self.facts(
            xml(parentAttribute: "String", transient: "").replacingOccurrences(
                of: "<entity name=\"Leaf\" parentEntity=\"Middle\"/>",
                with:
                    "<entity name=\"Leaf\" parentEntity=\"Middle\"><attribute name=\"t\" optional=\"YES\" transient=\"YES\" attributeType=\"String\"/></entity>"
            ))
        #expect(CoreDataVersionHashes.hashes(of: withTransient) == plain)
    }

    /// Every version of every corpus model hashes every entity, and two versions whose entity XML
    /// is the same give it the same hash: over WooCommerce's 117 versions, that is most entities.
    @Test(.enabled(if: CoreDataTestSupport.corpusIsAvailable))
    func everyCorpusVersionHashesEveryEntity() throws {
        var compared = 0
        for path in CoreDataTestSupport.corpusModels {
            let bundle = try CoreDataBundle.open(path: path)
            var previous: (model: CoreDataModel, hashes: [String: Data])?
            var facts: [CoreDataStoreModel.Version] = []
            defer {
                // The file keeps each distinct entity once; it reads back as every version.
                let model = CoreDataStoreModel(versions: facts)
                let decoded = try? JSONDecoder().decode(
                    CoreDataStoreModel.self, from: Data(CoreDataStoreFacts.text(of: model).utf8))
                #expect(decoded == model, "\(path)")
            }
            for version in bundle.versions {
                let model = try CoreDataReader.read(version)
                facts.append(
                    CoreDataStoreFacts.version(
                        of: model, named: version.name, number: facts.count + 1, shape: ImportedShape()))
                let hashes = CoreDataVersionHashes.hashes(of: facts[facts.count - 1])
                #expect(Set(hashes.keys) == Set(model.entities.map(\.name)), "\(version.name)")
                #expect(hashes.values.allSatisfy { $0.count == 32 })
                if let previous {
                    for entity in model.entities {
                        // Same XML (locations aside) for the entity and its ancestors: same hash.
                        let chain = { (model: CoreDataModel) -> [CoreDataModel.Entity] in
                            var result: [CoreDataModel.Entity] = []
                            var current = model.entity(named: entity.name)
                            while var found = current, result.count < 50 {
                                found.location = nil
                                found.attributes = found.attributes.map {
                                    var a = $0
                                    a.location = nil
                                    return a
                                }
                                found.relationships = found.relationships.map {
                                    var r = $0
                                    r.location = nil
                                    return r
                                }
                                found.fetchedProperties = []
                                found.fetchIndexes = []
                                result.append(found)
                                current = found.parentEntity.flatMap { model.entity(named: $0) }
                            }
                            return result
                        }
                        if chain(model) == chain(previous.model) {
                            #expect(
                                hashes[entity.name] == previous.hashes[entity.name], "\(version.name): \(entity.name)")
                            compared += 1
                        }
                    }
                }
                previous = (model, hashes)
            }
        }
        #expect(compared > 1000)
    }
}
