import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCoreData
@testable import ModelwrightSchema

/// A warning that recurs across versions is reported once, where it first appears, naming the
/// other versions; errors are never grouped.
@Suite(.heavy)
struct CoreDataWarningGroupTests {
    /// A version whose `Item` has a transient attribute (a warning) when `transient` is set.
    static func version(transient: Bool, extra: String = "") -> String {
        CoreDataTestSupport.contents(
            """
            <entity name="Item" representedClassName="Item" syncable="YES">
                <attribute name="name" optional="YES" attributeType="String"/>
                \(transient ? #"<attribute name="scratch" optional="YES" transient="YES" attributeType="String"/>"# : "")
                \(extra)
            </entity>
            """)
    }

    @Test func aProblemInSeveralVersionsIsOneWarningNamingTheOthers() throws {
        let versions = [
            "Model": Self.version(transient: true),
            "Model 2": Self.version(transient: true),
            "Model 3": Self.version(transient: true),
            "Model 4": Self.version(transient: false),
            "Model 5": Self.version(
                transient: true,
                extra: #"<attribute name="later" optional="YES" attributeType="String" minValueString="1"/>"#),
            "Model 6": Self.version(transient: false),
        ]
        let bundle = try CoreDataTestSupport.makeBundle("Grouped", versions: versions)
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        #expect(
            imported.warnings == [
                "Model.xcdatamodel/contents:5:5: transient attribute 'Item.scratch' is not imported: it is not stored; keep it as a property of your own type (also in versions 'Model 2'–'Model 3', 'Model 5')",
                "Model 5.xcdatamodel/contents:6:5: 'minValueString=\"1\"' on attribute 'Item.later' is not imported: the schema language has no validation rules; check the value in code",
            ])
    }

    @Test func aProblemInEveryVersionIsOneRange() throws {
        let names = ["Model"] + (2...9).map { "Model \($0)" }
        let bundle = try CoreDataTestSupport.makeBundle(
            "Grouped", versions: Dictionary(uniqueKeysWithValues: names.map { ($0, Self.version(transient: true)) }))
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let imported = try CoreDataTestSupport.importModel(bundle.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        #expect(imported.warnings.count == 1)
        #expect(imported.warnings.first?.hasPrefix("Model.xcdatamodel/contents:5:5: transient attribute") == true)
        #expect(imported.warnings.first?.hasSuffix("(also in versions 'Model 2'–'Model 9')") == true)
    }

    @Test func theSuffixNamesExactlyTheOtherVersions() {
        var random = SplitMix64(seed: 3)
        let names = (0..<40).map { "V\($0)" }
        for _ in 0..<500 {
            let indexes = (0..<40).filter { _ in Int.random(in: 0..<3, using: &random) == 0 }
            guard !indexes.isEmpty else { continue }
            let suffix = CoreDataWarningGroups.suffix(indexes, names: names)
            #expect(suffix.hasPrefix(indexes.count == 1 ? "(also in version 'V" : "(also in versions 'V"))
            // Expand the ranges back into indexes.
            let body = suffix.drop { $0 != "'" }.dropLast()
            var runs: [(first: Int, last: Int)] = []
            for part in body.split(separator: ", ") {
                let bounds = part.split(separator: "–").compactMap { Int($0.dropFirst(2).dropLast()) }
                guard let first = bounds.first, let last = bounds.last else { continue }
                runs.append((first, last))
            }
            #expect(runs.flatMap { Array($0.first...$0.last) } == indexes, "\(suffix)")
            // Each run is as long as it can be: the next one never starts right after it ends.
            for (run, next) in zip(runs, runs.dropFirst()) {
                #expect(next.first > run.last + 1, "\(suffix)")
            }
        }
    }

    @Test func errorsAreNeverGroupedAndWarningsOnlyAcrossVersions() {
        func diagnostic(_ severity: Diagnostic.Severity, _ message: String, version: Int) -> Diagnostic {
            Diagnostic(
                severity: severity, message: message, path: "V\(version)/contents",
                location: SourcePosition(line: version + 1, column: 1))
        }
        let perVersion = (0..<4).map { version in
            [
                diagnostic(.error, "broken", version: version),
                diagnostic(.warning, "odd", version: version),
                diagnostic(.warning, "odd", version: version),
            ]
        }
        let grouped = CoreDataWarningGroups.grouped(perVersion, versionNames: ["A", "B", "C", "D"])
        #expect(grouped.filter { $0.severity == .error }.count == 4)
        #expect(grouped.filter { $0.message == "broken" }.map(\.path) == (0..<4).map { "V\($0)/contents" })
        // Two in the first version stay two (two places); the later versions are named once.
        #expect(
            grouped.filter { $0.severity == .warning }.map(\.message)
                == Array(repeating: "odd (also in versions 'B'–'D')", count: 2))
        #expect(grouped.filter { $0.severity == .warning }.allSatisfy { $0.path == "V0/contents" })
    }
}
