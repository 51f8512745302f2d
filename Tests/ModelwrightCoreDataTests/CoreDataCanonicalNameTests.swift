import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCoreData

/// Core Data names that are canonically equal (the same text in NFC and NFD) are one name to
/// Modelwright, as Swift compares strings: the importer keeps the first and reports the second,
/// instead of merging the two and giving one the other's type.
@Suite(.heavy)
struct CoreDataCanonicalNameTests {
    /// Every pair of spellings of one name: precomposed and decomposed accents, a Hangul syllable
    /// and its jamo, and an Angstrom sign against the letter it is equal to.
    static let pairs: [(String, String)] = [
        ("caf\u{E9}", "cafe\u{301}"), ("\u{C5}ngstr\u{F6}m", "A\u{30A}ngstro\u{308}m"),
        ("\u{D55C}", "\u{1112}\u{1161}\u{11AB}"),
        ("\u{F1}o", "n\u{303}o"), ("\u{212B}x", "\u{C5}x"),
    ]

    @Test(arguments: pairs.indices)
    func canonicallyEqualPropertyNamesAreOneName(_ index: Int) throws {
        let (first, second) = Self.pairs[index]
        let bundle = try CoreDataTestSupport.makeBundle(
            versions: [
                "Test": CoreDataTestSupport.contents(
                    """
                    <entity name="Note" representedClassName="Note" syncable="YES">
                        <attribute name="\(first)" optional="YES" attributeType="String"/>
                        <attribute name="\(second)" optional="YES" attributeType="Integer 64" usesScalarValueType="YES"/>
                    </entity>
                    """)
            ])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        let text = imported.text(1)
        // One attribute, with its own type: the String one, declared first in Xcode's order.
        let attributes = text.split(separator: "\n").filter { $0.contains(": String") || $0.contains(": Int64") }
        #expect(attributes.count == 1, "\(text)")
        #expect(
            imported.warnings.contains { $0.contains("canonically equal") },
            "\(imported.warnings)")
        #expect(imported.loaded.hasErrors == false, "\(imported.loaded.diagnostics)")
    }
}
