import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCoreData
@testable import ModelwrightSchema

/// Core Data lets siblings declare one property name with different types (its store gives the
/// second a column with a numeric suffix). A large blogging app's model has a relationship
/// `AbstractPost.featuredImage` beside an attribute `ReaderPost.featuredImage` under one root: it
/// imports, validates, plans, and a store of it keeps both values across a migration.
@Suite(.heavy)
struct CoreDataSiblingColumnTests {
    static func version(_ extra: String) -> String {
        CoreDataTestSupport.contents(
            """
            <entity name="BasePost" representedClassName="BasePost" isAbstract="YES" syncable="YES">
                <attribute name="title" optional="YES" attributeType="String"/>
                <attribute name="score" optional="YES" attributeType="Integer 64" defaultValueString="0" usesScalarValueType="YES"/>
            </entity>
            <entity name="AbstractPost" representedClassName="AbstractPost" parentEntity="BasePost" syncable="YES">
                <attribute name="rating" optional="YES" attributeType="Double" defaultValueString="0.0" usesScalarValueType="YES"/>
                <relationship name="featuredImage" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Media" inverseName="posts" inverseEntity="Media"/>
            </entity>
            <entity name="ReaderPost" representedClassName="ReaderPost" parentEntity="BasePost" syncable="YES">
                <attribute name="featuredImage" optional="YES" attributeType="String"/>
                <attribute name="rating" optional="YES" attributeType="Decimal" defaultValueString="0.0"/>
                \(extra)
            </entity>
            <entity name="Media" representedClassName="Media" syncable="YES">
                <attribute name="url" optional="YES" attributeType="String"/>
                <relationship name="posts" optional="YES" toMany="YES" deletionRule="Nullify" destinationEntity="AbstractPost" inverseName="featuredImage" inverseEntity="AbstractPost"/>
            </entity>
            """)
    }

    @Test func siblingsWithOneNameAndTwoMeaningsImportValidateAndKeepTheirValues() throws {
        let bundle = try CoreDataTestSupport.makeBundle(
            "Blog",
            versions: [
                "Blog": Self.version(""),
                "Blog 2": Self.version("<attribute name=\"summary\" optional=\"YES\" attributeType=\"String\"/>"),
            ])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        #expect(!imported.loaded.hasErrors, "\(imported.loaded.diagnostics.prefix(3))")
        let versions = try #require(imported.loaded.model?.versions.map(\.schema))
        try #require(versions.count == 2)
        let stage = MigrationStage.custom(
            from: versions[0], to: versions[1], steps: [.init(name: "nothing", label: "nothing") { _ in }])
        let tester = try MigrationTester(
            plan: MigrationPlan(current: versions[1], stages: [stage]), startingAt: versions[0])
        let media = try tester.insert("Media", ["url": .text("https://example.com/a.png")])
        try tester.insert("AbstractPost", ["title": .text("mine"), "featuredImage": media, "rating": .real(4.5)])
        try tester.insert(
            "ReaderPost",
            ["title": .text("theirs"), "featuredImage": .text("007"), "rating": .text("19.99")])
        _ = try tester.migrate()
        let mine = try #require(try tester.rows(of: "AbstractPost").first { $0["_entity"] == .text("AbstractPost") })
        let theirs = try #require(try tester.rows(of: "ReaderPost").first)
        #expect(mine["featuredImage"] == media)
        #expect(mine["rating"] == .real(4.5))
        #expect(theirs["featuredImage"] == .text("007"))
        #expect(theirs["rating"] == .text("19.99"))
    }
}
