import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCoreData
@testable import ModelwrightSchema

/// Each Core Data construct becomes the schema construct a Core Data user would expect, and what
/// the schema language cannot say is reported at its line and column.
@Suite(.heavy)
struct CoreDataImportTests {
    static let version1 = CoreDataTestSupport.contents(
        """
            <entity name="Customer" representedClassName="Customer" syncable="YES">
                <attribute name="id" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="name" attributeType="String" defaultValueString=""/>
                <relationship name="orders" optional="YES" toMany="YES" deletionRule="Deny" destinationEntity="Order" inverseName="customer" inverseEntity="Order"/>
            </entity>
            <entity name="Order" representedClassName="Order" syncable="YES">
                <attribute name="number" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                <relationship name="customer" optional="YES" maxCount="1" deletionRule="No Action" destinationEntity="Customer" inverseName="orders" inverseEntity="Customer"/>
            </entity>
        """)

    /// Line 3 is the first entity: `contents(_:)` puts the XML declaration and `<model>` first.
    static let version2 = CoreDataTestSupport.contents(
        """
            <entity name="Client" representedClassName="ShopClient" elementID="Customer" versionHashModifier="2" syncable="YES">
                <attribute name="fullName" attributeType="String" defaultValueString="" elementID="name"/>
                <attribute name="id" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="orderCount" optional="YES" attributeType="Integer 64" derived="YES" derivationExpression="orders.@count" usesScalarValueType="YES"/>
                <attribute name="scratch" optional="YES" transient="YES" attributeType="String"/>
                <relationship name="orders" optional="YES" toMany="YES" deletionRule="Deny" destinationEntity="Order" inverseName="customer" inverseEntity="Order"/>
                <fetchedProperty name="recentOrders" optional="YES">
                    <fetchRequest name="fetchedPropertyFetchRequest" entity="Order" predicateString="placedAt &gt; $FETCH_SOURCE.since"/>
                </fetchedProperty>
                <userInfo>
                    <entry key="source.api" value="v3 &quot;shop&quot;"/>
                </userInfo>
            </entity>
            <entity name="Item" representedClassName="Item" syncable="YES">
                <attribute name="sku" attributeType="String" indexed="YES"/>
                <relationship name="order" maxCount="1" deletionRule="Nullify" destinationEntity="Order" inverseName="items" inverseEntity="Order"/>
            </entity>
            <entity name="Order" representedClassName="Order" syncable="YES">
                <attribute name="number" attributeType="Integer 32" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="placedAt" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
                <attribute name="tags" optional="YES" attributeType="Transformable" valueTransformerName="TagsTransformer" customClassName="[String]"/>
                <relationship name="customer" optional="YES" maxCount="1" deletionRule="No Action" destinationEntity="Client" inverseName="orders" inverseEntity="Client"/>
                <relationship name="items" optional="YES" toMany="YES" deletionRule="Cascade" ordered="YES" destinationEntity="Item" inverseName="order" inverseEntity="Item"/>
                <relationship name="related" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="Order"/>
                <fetchIndex name="byPlacedAtAndNumber">
                    <fetchIndexElement property="placedAt" type="Binary" order="ascending"/>
                    <fetchIndexElement property="number" type="Binary" order="descending"/>
                </fetchIndex>
                <uniquenessConstraints>
                    <uniquenessConstraint>
                        <constraint value="number"/>
                    </uniquenessConstraint>
                    <uniquenessConstraint>
                        <constraint value="customer"/>
                        <constraint value="placedAt"/>
                    </uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            <fetchRequest name="ordersByNumber" entity="Order" predicateString="number == $number"/>
            <fetchRequest name="bigOrders" entity="Order" predicateString="number &gt;= $minimum" fetchLimit="20"/>
            <fetchRequest name="withSku" entity="Order" predicateString="SUBQUERY(items, $i, $i.sku == $sku).@count &gt; 0"/>
            <fetchRequest name="clientByID" entity="Client" predicateString="id == $id"/>
            <fetchRequest name="manyOrders" entity="Order" predicateString="number == 'many'"/>
            <configuration name="Cloud">
                <memberEntity name="Order"/>
            </configuration>
            <elements>
                <element name="Order" positionX="0" positionY="0" width="128" height="60"/>
            </elements>
        """)

    private static func importShop(
        current: String? = nil, extraVersions: [String: String] = [:]
    ) throws -> (CoreDataTestSupport.Imported, URL) {
        var versions = ["Shop": version1, "Shop 2": version2]
        versions.merge(extraVersions) { $1 }
        let bundle = try CoreDataTestSupport.makeBundle(
            "Shop", versions: versions, currentVersionFile: current.map(CoreDataTestSupport.currentVersion))
        return (try CoreDataTestSupport.importModel(bundle.path), bundle)
    }

    @Test func eachConstructBecomesItsSchemaSpelling() throws {
        let (imported, bundle) = try Self.importShop()
        defer {
            try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent())
            try? FileManager.default.removeItem(at: imported.folder)
        }
        #expect(!imported.loaded.hasErrors, "\(imported.loaded.diagnostics)")
        #expect(
            imported.text(2) == """
                /// Imported from Core Data: version 'Shop 2' of Shop.xcdatamodeld.
                model Shop version 2

                entity Client {
                    @renamed(from: Customer)
                    @coreData(className: "ShopClient", versionHashModifier: "2")
                    @userInfo("source.api", "v3 \\"shop\\"")
                    fullName: String = "" @renamed(from: name)
                    id_: Int64 = 0 @coreData(name: "id")
                    orders: Set<Order> @inverse(customer) @delete(deny)
                }

                entity Item {
                    sku: String @indexed
                    order: Order @inverse(items)
                }

                entity Order {
                    number: Int32 = 0 @unique
                    placedAt: Date?
                    tags: Codable<[String]>? @coreData(transformer: "TagsTransformer")
                    customer: Client? @inverse(orders) @delete(noAction)
                    items: [Item] @inverse(order) @delete(cascade)
                    related: Set<Order> @noInverse
                    @unique(customer, placedAt)
                    @index(placedAt, number)
                }

                request ordersByNumber: Order where "number == $number"

                request bigOrders: Order where "number >= $minimum"

                request clientByID: Client where "id_ == $id"

                """)
        let version = try #require(imported.loaded.model?.versions.last)
        let order = try #require(version.schema.entity(named: "Order"))
        #expect(order.relationships.first { $0.name == "items" }?.isOrdered == true)
        #expect(order.relationships.first { $0.name == "customer" }?.deleteRule == .noAction)
        #expect(order.attributes.first { $0.name == "tags" }?.type == .codable(typeName: "[String]"))
        #expect(order.uniquenessConstraints == [["number"], ["customer", "placedAt"]])
        #expect(order.indexes == [["placedAt", "number"]])
        #expect(version.schema.entity(named: "Client")?.renamedFrom == "Customer")
    }

    @Test func whatCannotBeImportedIsReportedAtItsLineAndColumn() throws {
        let (imported, bundle) = try Self.importShop()
        defer {
            try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent())
            try? FileManager.default.removeItem(at: imported.folder)
        }
        let file = "Shop 2.xcdatamodel/contents"
        #expect(
            imported.warnings
                == [
                    "Shop.xcdatamodeld:-: the bundle has no .xccurrentversion; the newest version, 'Shop 2', is current",
                    "\(file):6:9: derived attribute 'Client.orderCount' ('orders.@count') is not imported: the schema language has no derived attributes; compute it with a request (a count, say) instead",
                    "\(file):7:9: transient attribute 'Client.scratch' is not imported: it is not stored; keep it as a property of your own type",
                    "\(file):9:9: fetched property 'Client.recentOrders' is not imported: the schema language has no fetched properties; fetch 'Order' with a request in code",
                    "\(file):27:9: fetch index 'Order.byPlacedAtAndNumber' is imported as ascending: Modelwright indexes have no order ('number' is descending)",
                    "\(file):42:5: 'fetchLimit=\"20\"' on fetch request template 'bigOrders' is not imported: a named request holds only a predicate; set limits on the request in code (`.limit(…)`)",
                    "\(file):43:5: fetch request template 'withSku' is not imported: its predicate cannot be read: SUBQUERY is not supported; use ANY, ALL or NONE with a key path through the to-many relationship",
                    "\(file):45:5: fetch request template 'manyOrders' is not imported: constant \"many\" does not match the attribute's type Int32",
                    "\(file):46:5: configuration 'Cloud' is not imported: a Modelwright store holds every entity of its schema",
                ].filter { !$0.hasPrefix("Shop.xcdatamodeld") })
        // The bundle note is a note, not a warning.
        #expect(imported.result.diagnostics.first?.severity == .note)
    }

    /// A Core Data composite attribute (iOS 17) is left out with a warning at its line and column
    /// that says why, not that the schema language has no such type (it has composites).
    @Test func aCompositeAttributeIsReportedWithItsReason() throws {
        let bundle = try CoreDataTestSupport.makeBundle(
            versions: [
                "M": CoreDataTestSupport.contents(
                    """
                    <entity name="Person">
                        <attribute name="name" optional="YES" attributeType="String"/>
                        <attribute name="home" optional="YES" attributeType="Composite" composite="Address"/>
                    </entity>
                    <compositeAttribute name="Address">
                        <attribute name="city" optional="YES" attributeType="String"/>
                    </compositeAttribute>
                    """)
            ])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        let warning = try #require(imported.warnings.first { $0.contains("'Person.home'") })
        #expect(warning.contains("composite attribute 'Person.home' is not imported"), "\(warning)")
        #expect(warning.contains("not confirmed") && !warning.contains("no such type"), "\(warning)")
        #expect(warning.hasPrefix("M.xcdatamodel/contents:") && warning.contains(":5:5: "), "\(warning)")
    }

    @Test func aRenamingIdentifierEqualToTheNameOrCarriedForwardIsNoRename() throws {
        // Version 3 keeps `elementID="Customer"` on Client, as Xcode does when it copies a version.
        let (imported, bundle) = try Self.importShop(extraVersions: ["Shop 3": Self.version2])
        defer {
            try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent())
            try? FileManager.default.removeItem(at: imported.folder)
        }
        #expect(!imported.loaded.hasErrors, "\(imported.loaded.diagnostics)")
        #expect(imported.text(2).contains("@renamed(from: Customer)"))
        #expect(!imported.text(3).contains("@renamed"))
    }

    @Test func anEntityNamedLikeTheModelRenamesTheModel() throws {
        let xml = CoreDataTestSupport.contents(
            #"    <entity name="Shop" representedClassName="Shop" syncable="YES"><attribute name="title" optional="YES" attributeType="String"/></entity>"#
        )
        let bundle = try CoreDataTestSupport.makeBundle("Shop", versions: ["Shop": xml])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        #expect(imported.result.modelName == "ShopModel")
        #expect(imported.text(1).contains("model ShopModel version 1\n\nentity Shop {"))
        #expect(imported.loaded.model?.name == "ShopModel")
    }

    @Test func namesTheSchemaRejectsAreChangedAndKeepTheirCoreDataName() throws {
        let xml = CoreDataTestSupport.contents(
            """
                <entity name="Data" representedClassName="Data" syncable="YES">
                    <attribute name="id" attributeType="UUID" usesScalarValueType="NO"/>
                    <attribute name="now" optional="YES" attributeType="Date"/>
                    <relationship name="true" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Data" inverseName="true" inverseEntity="Data"/>
                </entity>
            """)
        let bundle = try CoreDataTestSupport.makeBundle("Odd.Names-Model", versions: ["V": xml])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        #expect(!imported.loaded.hasErrors, "\(imported.loaded.diagnostics)")
        #expect(imported.result.modelName == "OddNamesModel")
        #expect(imported.text(1).contains("entity Data_ {\n    @coreData(name: \"Data\")\n"))
        #expect(imported.text(1).contains("    id_: UUID @coreData(name: \"id\")"))
        #expect(imported.text(1).contains("    true: Data_? @inverse(`true`)"))
    }
}
