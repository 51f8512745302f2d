import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCoreData
@testable import ModelwrightSchema

/// A version Xcode 3 saved (binary `elements` and `layout`, no `contents`) stops the import at its
/// folder, naming the format and the fix; `--skip-version` leaves it out, with a warning.
@Suite(.heavy)
struct CoreDataLegacyVersionTests {
    private static let user = CoreDataTestSupport.contents(
        #"    <entity name="User" representedClassName="User" syncable="YES"><attribute name="name" attributeType="String"/></entity>"#
    )

    /// A bundle whose first version, `Test`, holds only Xcode 3's binary `elements` and `layout`.
    static func legacyBundle() throws -> URL {
        let bundle = try CoreDataTestSupport.makeBundle(
            versions: ["Test 2": user, "Test 3": user], currentVersionFile: CoreDataTestSupport.currentVersion("Test 3")
        )
        let legacy = bundle.appendingPathComponent("Test.xcdatamodel")
        try FileManager.default.createDirectory(at: legacy, withIntermediateDirectories: true)
        let archive: [String: Any] = [
            "$archiver": "NSKeyedArchiver", "$version": 100_000, "$objects": ["$null"], "$top": [String: Any](),
        ]
        let data = try PropertyListSerialization.data(fromPropertyList: archive, format: .binary, options: 0)
        try data.write(to: legacy.appendingPathComponent("elements"))
        try data.write(to: legacy.appendingPathComponent("layout"))
        return bundle
    }

    @Test func aVersionXcode3SavedIsALocatedErrorNamingTheFormatAndTheOption() throws {
        let bundle = try Self.legacyBundle()
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let failure = try #require(throws: CoreDataBundle.Failure.self) { try CoreDataBundle.open(path: bundle.path) }
        #expect(!failure.isUsageError)
        #expect(failure.path == bundle.appendingPathComponent("Test.xcdatamodel").path)
        #expect(failure.message.contains("saved by Xcode 3 as a binary 'elements' archive"))
        #expect(
            failure.message.contains("open the model in a current Xcode and save it, which writes its 'contents' file"))
        #expect(failure.message.contains("--skip-version 'Test'"))
        #expect(failure.description.hasPrefix("\(failure.path): error: version 'Test' was saved by Xcode 3"))
    }

    @Test func skippedVersionsAreLeftOutWithAWarningAndTheRestNumberedFromOne() throws {
        let bundle = try Self.legacyBundle()
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let opened = try CoreDataBundle.open(path: bundle.path, skipping: ["Test"])
        #expect(opened.versions.map(\.name) == ["Test 2", "Test 3"])
        #expect(opened.currentIndex == 1)
        let result = CoreDataImporter.importModel(opened)
        #expect(!result.hasErrors)
        #expect(result.files.map(\.name) == ["Test.v1.model", "Test.v2.model"])
        #expect(result.files.map(\.versionName) == ["Test 2", "Test 3"])
        let warnings = result.diagnostics.filter { $0.severity == .warning }
        #expect(warnings.count == 1)
        #expect(warnings.first?.path == bundle.appendingPathComponent("Test.xcdatamodel").path)
        #expect(warnings.first?.message.hasPrefix("version 'Test' is skipped (--skip-version)") == true)
    }

    @Test func skippingTheCurrentVersionMakesTheNewestRemainingCurrent() throws {
        let bundle = try Self.legacyBundle()
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let opened = try CoreDataBundle.open(path: bundle.path, skipping: ["Test", "Test 3"])
        #expect(opened.versions.map(\.name) == ["Test 2"])
        #expect(
            opened.notes.map(\.message).last
                == ".xccurrentversion names 'Test 3.xcdatamodel', which is skipped; the newest version, 'Test 2', is current"
        )
    }

    @Test func aVersionNameIsEscapedWhenAFailureIsPrinted() throws {
        let bundle = try CoreDataTestSupport.makeBundle(versions: ["Test": Self.user])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        try FileManager.default.createDirectory(
            at: bundle.appendingPathComponent("Evil\u{1B}[2J.xcdatamodel"), withIntermediateDirectories: true)
        let failure = try #require(throws: CoreDataBundle.Failure.self) { try CoreDataBundle.open(path: bundle.path) }
        #expect(failure.message.contains("\u{1B}"))
        #expect(!failure.description.contains("\u{1B}"))
    }

    @Test func everyVersionWithoutContentsIsReportedAtOnce() throws {
        let bundle = try Self.legacyBundle()
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        try FileManager.default.removeItem(at: bundle.appendingPathComponent("Test 2.xcdatamodel/contents"))
        let failure = try #require(throws: CoreDataBundle.Failure.self) { try CoreDataBundle.open(path: bundle.path) }
        #expect(failure.message.contains("Xcode 3"))
        #expect(failure.others.map(\.path) == [bundle.appendingPathComponent("Test 2.xcdatamodel").path])
        #expect(failure.others.first?.message.hasPrefix("version 'Test 2' has no 'contents' file") == true)
        #expect(failure.description.split(separator: "\n").count == 2)
    }

    @Test func aBareVersionXcode3SavedNamesTheFormatWithoutOfferingToSkipIt() throws {
        let bundle = try Self.legacyBundle()
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let version = bundle.appendingPathComponent("Test.xcdatamodel").path
        let failure = try #require(throws: CoreDataBundle.Failure.self) { try CoreDataBundle.open(path: version) }
        #expect(failure.message.contains("saved by Xcode 3 as a binary 'elements' archive"))
        #expect(!failure.message.contains("--skip-version"))
    }
}
