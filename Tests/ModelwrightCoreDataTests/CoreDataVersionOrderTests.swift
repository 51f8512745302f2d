import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCoreData
@testable import ModelwrightSchema

/// Versions are ordered by name within a name family and by the Xcode builds that saved them
/// between families; when that cannot decide, opening stops and names `--version-order`.
@Suite(.heavy)
struct CoreDataVersionOrderTests {
    /// A `contents` file saved by Xcode build `build`, holding the given entity elements.
    static func contents(build: String, _ body: String = #"<entity name="A" syncable="YES"/>"#) -> String {
        CoreDataTestSupport.contents(body).replacingOccurrences(
            of: #"lastSavedToolsVersion="22758""#, with: #"lastSavedToolsVersion="\#(build)""#)
    }

    /// WooCommerce's `contents` for `Model <number>`, rewritten as saved by Xcode build `build`.
    static func wooContents(_ number: Int, build: String) throws -> String {
        let name = number == 1 ? "Model" : "Model \(number)"
        let url = CoreDataTestSupport.corpus.appendingPathComponent(
            "woocommerce+woocommerce-ios/WooCommerce.xcdatamodeld/\(name).xcdatamodel/contents")
        let text = try String(contentsOf: url, encoding: .utf8)
        let pattern = try Regex(#"lastSavedToolsVersion="[^"]*""#)
        return text.replacing(pattern, with: #"lastSavedToolsVersion="\#(build)""#, maxReplacements: 1)
    }

    @Test func familiesAreTheNamesUpToTheirFirstDigit() {
        let family = CoreDataVersionOrder.Family.key(of:)
        for name in ["Model", "Model 2", "Model 117", "Model_v3", "Model.V10", "Model v1.4", "ModelV2", "Model-2"] {
            #expect(family(name) == "Model", "\(name)")
        }
        #expect(family("SampleModel3_v2") == "SampleModel")
        #expect(family("Advanced.EvolutionDemo.V2") == family("Advanced.EvolutionDemo"))
        #expect(family("NewName v2.7.0") != family("AppName 5"))
        #expect(family("Model copy") != family("Model"))
    }

    @Test func toolsVersionsCompareTheirPartsAsNumbers() throws {
        let builds = ["21754", "14490.99", "14492.1", "14490.98", "9", "22758", "14490.100"]
        let sorted = try builds.map { try #require(ToolsVersion($0)) }.sorted().map(\.description)
        #expect(sorted == ["9", "14490.98", "14490.99", "14490.100", "14492.1", "21754", "22758"])
        for text in ["", "1..2", "x", "1.2.3.4.5", "1234567890", "-1", " 1"] {
            #expect(ToolsVersion(text) == nil, "\(text)")
        }
    }

    // MARK: - A renamed model

    /// The five oldest versions are named `Tracker` … `Tracker 5`, the eight newest `HabitKit v1.4`
    /// … `HabitKit v2.7.0`: names alone would put the newest first.
    static let oldNames = ["Tracker", "Tracker 2", "Tracker 3", "Tracker 4", "Tracker 5"]
    static let newNames = [
        "HabitKit v1.4", "HabitKit v1.5", "HabitKit v1.6", "HabitKit v1.7", "HabitKit v2.0", "HabitKit v2.1",
        "HabitKit v2.5", "HabitKit v2.7.0",
    ]

    /// The renamed bundle, WooCommerce's first thirteen models under those names, with the
    /// builds given; `.xccurrentversion` names `current`.
    static func renamedBundle(builds: [String], current: String? = "HabitKit v2.7.0") throws -> URL {
        var versions: [String: String] = [:]
        for (index, name) in (oldNames + newNames).enumerated() {
            versions[name] = try wooContents(index + 1, build: builds[index])
        }
        return try CoreDataTestSupport.makeBundle(
            "HabitKit", versions: versions, currentVersionFile: current.map { CoreDataTestSupport.currentVersion($0) })
    }

    static let separatedBuilds = [
        "14135", "14315.18", "14460.32", "14460.32", "14490.98",
        "14490.99", "14490.98", "15400", "16119", "17192", "17709", "21754", "22758",
    ]

    @Test(.enabled(if: CoreDataTestSupport.corpusIsAvailable))
    func aRenamedModelImportsItsOldNameFirstByTheBuildsThatSavedIt() throws {
        let bundle = try Self.renamedBundle(builds: Self.separatedBuilds)
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let opened = try CoreDataBundle.open(path: bundle.path)
        #expect(opened.versions.map(\.name) == Self.oldNames + Self.newNames)
        #expect(opened.order.basis == .savedToolsVersions)
        #expect(opened.order.nameOrder == Self.newNames + Self.oldNames)
        #expect(
            opened.order.summary.hasSuffix(
                "(by saved tools version; names alone would put 'HabitKit v1.4' first and 'Tracker 5' last)"))
        #expect(opened.currentIndex == 12)
        let warnings = opened.notes.filter { $0.severity == .warning }.map(\.message)
        #expect(warnings.count == 1)
        #expect(
            warnings.first?.hasPrefix(
                "the version names alone would put 'HabitKit v1.4' first, but the Xcode builds that saved the versions put 'Tracker' … 'Tracker 5' (saved by Xcode builds 14135–14490.98) before 'HabitKit v1.4' … 'HabitKit v2.7.0' (saved by Xcode builds 14490.98–22758), so they are imported in that order"
            ) == true)

        let imported = try CoreDataTestSupport.importModel(bundle.path)
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        #expect(imported.result.files.map(\.versionName) == Self.oldNames + Self.newNames)
        #expect(!imported.warnings.contains { $0.contains("comes after the current version") })
        #expect(!imported.loaded.hasErrors, "\(imported.loaded.diagnostics.filter { $0.severity == .error }.prefix(3))")
        #expect(imported.loaded.model?.versions.count == 13)
    }

    @Test(.enabled(if: CoreDataTestSupport.corpusIsAvailable))
    func overlappingBuildsStopTheImportAndNameTheOption() throws {
        // Tracker 5 was re-saved by a later Xcode than the first HabitKit versions.
        var builds = Self.separatedBuilds
        builds[4] = "17192"
        let bundle = try Self.renamedBundle(builds: builds)
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let failure = try #require(throws: CoreDataBundle.Failure.self) { try CoreDataBundle.open(path: bundle.path) }
        #expect(!failure.isUsageError)
        #expect(failure.path == bundle.path)
        #expect(
            failure.message.hasPrefix(
                "cannot tell the order of the versions: the versions have 2 different names and the Xcode builds that saved them overlap: 'Tracker' … 'Tracker 5' (saved by Xcode builds 14135–17192) and 'HabitKit v1.4' … 'HabitKit v2.7.0' (saved by Xcode builds 14490.98–22758)"
            ))
        #expect(failure.message.contains("pass --version-order"))

        let stated = Self.oldNames + Self.newNames
        let opened = try CoreDataBundle.open(path: bundle.path, versionOrder: stated)
        #expect(opened.versions.map(\.name) == stated)
        #expect(opened.order.basis == .stated)
        #expect(opened.order.summary.hasSuffix("(as stated by --version-order)"))
        #expect(opened.notes.isEmpty)
    }

    @Test func aCurrentVersionOutsideTheLastFamilyStopsTheImport() throws {
        let bundle = try CoreDataTestSupport.makeBundle(
            versions: [
                "Old": Self.contents(build: "14135"), "Old 2": Self.contents(build: "15400"),
                "New v1": Self.contents(build: "21754"),
            ], currentVersionFile: CoreDataTestSupport.currentVersion("Old 2"))
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let failure = try #require(throws: CoreDataBundle.Failure.self) { try CoreDataBundle.open(path: bundle.path) }
        #expect(
            failure.message.contains(
                "put 'New v1' (saved by Xcode build 21754) last, but .xccurrentversion names 'Old 2'"))
        #expect(failure.message.contains("--version-order"))
        // Stated, the order stands, and the versions after the current one are drafts as before.
        let opened = try CoreDataBundle.open(path: bundle.path, versionOrder: ["Old", "Old 2", "New v1"])
        #expect(opened.versions[opened.currentIndex].name == "Old 2")
    }

    @Test func aRenameThatPointsBackwardsAcrossFamiliesStopsTheImport() throws {
        let order = #"<entity name="Order" syncable="YES"><attribute name="total" attributeType="Double"/></entity>"#
        let renamed =
            #"<entity name="OrderRecord" elementID="Order" syncable="YES"><attribute name="sum" attributeType="Double" elementID="total"/></entity>"#
        let keptName =
            #"<entity name="OrderRecord" syncable="YES"><attribute name="sum" attributeType="Double"/></entity>"#
        let attributeBack =
            #"<entity name="OrderRecord" syncable="YES"><attribute name="total" attributeType="Double"/></entity>"#
        let cases: [(newest: String, stops: String?)] = [
            (keptName, nil),
            (
                order,
                "'Old 2' has entity 'OrderRecord' renamed from 'Order' (elementID), but 'New v1', which the builds put after it, still has 'Order'"
            ),
            (
                attributeBack,
                "'Old 2' has attribute 'OrderRecord.sum' renamed from 'total' (elementID), but 'New v1', which the builds put after it, still has 'total'"
            ),
        ]
        for (newest, stops) in cases {
            let bundle = try CoreDataTestSupport.makeBundle(versions: [
                "Old": Self.contents(build: "100", order), "Old 2": Self.contents(build: "200", renamed),
                "New v1": Self.contents(build: "300", newest),
            ])
            defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
            if let stops {
                let failure = try #require(throws: CoreDataBundle.Failure.self) {
                    try CoreDataBundle.open(path: bundle.path)
                }
                #expect(failure.message.contains("their renaming identifiers disagree: \(stops); pass --version-order"))
            } else {
                #expect(try CoreDataBundle.open(path: bundle.path).versions.map(\.name) == ["Old", "Old 2", "New v1"])
            }
        }
    }

    @Test func familiesAllSavedByOneBuildCannotBePlaced() {
        let candidates = ["New v1", "New v2", "Old", "Old 2"].map {
            CoreDataVersionOrder.Candidate(name: $0, toolsVersion: ToolsVersion("21754"))
        }
        guard case .ambiguous(let reason) = CoreDataVersionOrder.decide(candidates, current: nil) else {
            Issue.record("two families saved by one build were put in an order")
            return
        }
        #expect(reason.contains("'New v1' … 'New v2' (saved by Xcode build 21754) and 'Old' … 'Old 2'"))
    }

    @Test func aFamilyWithoutBuildsCannotBePlaced() throws {
        let bare = CoreDataTestSupport.contents("").replacingOccurrences(
            of: #"lastSavedToolsVersion="22758" "#, with: "")
        let bundle = try CoreDataTestSupport.makeBundle(
            versions: ["Alpha": bare, "Beta 2": Self.contents(build: "21754")])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let failure = try #require(throws: CoreDataBundle.Failure.self) { try CoreDataBundle.open(path: bundle.path) }
        #expect(failure.message.contains("version 'Alpha' records no lastSavedToolsVersion"))
    }

    @Test func badStatedOrdersAreUsageErrorsListingTheVersions() throws {
        let bundle = try CoreDataTestSupport.makeBundle(
            versions: ["Test": Self.contents(build: "1"), "Test 2": Self.contents(build: "2")])
        defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
        let cases: [(order: [String]?, skip: [String], message: String)] = [
            (
                ["Test", "Test 3"], [],
                "name 2 of --version-order is not a version of the bundle; its versions are: 'Test', 'Test 2'"
            ),
            (
                ["Test", "Test 2", "Test"], [],
                "--version-order names 'Test' twice; name each version once, oldest first"
            ),
            (
                ["Test 2"], [],
                "--version-order does not name 'Test'; name every version once, oldest first, or leave it out with --skip-version"
            ),
            (
                nil, ["Test 9"],
                "--skip-version names 'Test 9', which is not a version of the bundle; its versions are: 'Test', 'Test 2'"
            ),
        ]
        for (order, skip, message) in cases {
            let failure = try #require(throws: CoreDataBundle.Failure.self) {
                try CoreDataBundle.open(path: bundle.path, versionOrder: order, skipping: skip)
            }
            #expect(failure.isUsageError)
            #expect(failure.message == message)
        }
        // Names may carry the folder extension; a skipped version need not be named.
        let opened = try CoreDataBundle.open(
            path: bundle.path, versionOrder: ["Test 2.xcdatamodel", "Test"], skipping: [])
        #expect(opened.versions.map(\.name) == ["Test 2", "Test"])
        let skipped = try CoreDataBundle.open(path: bundle.path, versionOrder: ["Test 2"], skipping: ["Test"])
        #expect(skipped.versions.map(\.name) == ["Test 2"])
        #expect(throws: CoreDataBundle.Failure.self) {
            try CoreDataBundle.open(path: bundle.path, skipping: ["Test", "Test 2"])
        }
    }

    // MARK: - Generated cases

    /// A random bundle: one to four name families, each named in a random style, saved either
    /// by separated ranges of builds in a random true order or by builds drawn at random.
    struct RandomCase {
        var candidates: [CoreDataVersionOrder.Candidate]
        var truth: [String]?
        var current: String?

        init(using random: inout SplitMix64) {
            let bases = ["Model", "AppName", "Tracker", "HabitKit", "Store", "Zeta"].shuffled(using: &random)
            let familyCount = Int.random(in: 1...4, using: &random)
            let separated = Bool.random(using: &random)
            var build = Int.random(in: 1000...20000, using: &random)
            var families: [[(String, String)]] = []
            for base in bases.prefix(familyCount) {
                let count = Int.random(in: 1...5, using: &random)
                let style = Int.random(in: 0...2, using: &random)
                var members: [(String, String)] = []
                for number in 1...count {
                    let name: String
                    switch style {
                    case 0: name = number == 1 ? base : "\(base) \(number)"
                    case 1: name = "\(base) v\(number).\(Int.random(in: 0...9, using: &random))"
                    default: name = "\(base)_v\(number)"
                    }
                    if separated {
                        build += Int.random(in: 0...2, using: &random)
                    } else {
                        // Few builds, so that ties and families saved by one build are common.
                        build = Int.random(in: 1000...1002, using: &random)
                    }
                    let fraction =
                        Int.random(in: 0..<4, using: &random) == 0 ? ".\(Int.random(in: 1...2, using: &random))" : ""
                    members.append((name, "\(build)\(fraction)"))
                }
                build += separated ? 100 : 0
                families.append(members)
            }
            let all = families.flatMap { $0 }
            let naturalNames = NaturalOrder.sorted(all.map(\.0))
            candidates = naturalNames.map { name in
                .init(name: name, toolsVersion: ToolsVersion(all.first { $0.0 == name }?.1 ?? ""))
            }
            let trueOrder = families.flatMap { NaturalOrder.sorted($0.map(\.0)) }
            switch Int.random(in: 0...2, using: &random) {
            case 0: current = nil
            case 1: current = trueOrder.last
            default: current = all.randomElement(using: &random)?.0
            }
            truth = separated && (current == nil || current == trueOrder.last) ? trueOrder : nil
        }
    }

    /// The one arrangement of families, if any, where each family's builds precede the next's
    /// and the current version is in the last: found by trying every permutation, with the
    /// builds compared here rather than through the ordering's own ranges.
    static func onlyValidOrder(
        _ families: [CoreDataVersionOrder.Family], builds: [String: ToolsVersion], current: String?
    ) -> [String]? {
        func precedes(_ earlier: CoreDataVersionOrder.Family, _ later: CoreDataVersionOrder.Family) -> Bool {
            let first = earlier.members.compactMap { builds[$0] }
            let second = later.members.compactMap { builds[$0] }
            let noneLater = first.allSatisfy { build in second.allSatisfy { build <= $0 } }
            let notAllSame = first.contains { build in second.contains { build < $0 } }
            return noneLater && notAllSame
        }
        func permutations(_ items: [CoreDataVersionOrder.Family]) -> [[CoreDataVersionOrder.Family]] {
            guard items.count > 1 else { return [items] }
            return items.indices.flatMap { index in
                var rest = items
                let first = rest.remove(at: index)
                return permutations(rest).map { [first] + $0 }
            }
        }
        let valid = permutations(families).filter { order in
            zip(order, order.dropFirst()).allSatisfy { precedes($0, $1) }
                && (current.map { order.last?.members.contains($0) == true } ?? true)
        }
        return valid.count == 1 ? valid[0].flatMap(\.members) : nil
    }

    @Test func generatedHistoriesAreOrderedConsistentlyWithTheEvidenceOrStop() {
        var random = SplitMix64(seed: 0x5EED_0F_0DE2)
        var counts = (names: 0, builds: 0, stopped: 0)
        for _ in 0..<2000 {
            let test = RandomCase(using: &random)
            let families = CoreDataVersionOrder.Family.split(test.candidates)
            let decision = CoreDataVersionOrder.decide(test.candidates, current: test.current)
            if families.count == 1 {
                #expect(decision == .ordered(test.candidates.map(\.name), .names))
                counts.names += 1
                continue
            }
            let builds = Dictionary(
                uniqueKeysWithValues: test.candidates.compactMap { candidate in
                    candidate.toolsVersion.map { (candidate.name, $0) }
                })
            let expected = Self.onlyValidOrder(families, builds: builds, current: test.current)
            switch decision {
            case .ordered(let names, let basis):
                #expect(basis == .savedToolsVersions)
                #expect(names == expected, "\(test.candidates) current \(test.current ?? "-")")
                counts.builds += 1
            case .ambiguous(let reason):
                #expect(expected == nil, "\(reason)")
                counts.stopped += 1
            }
            if let truth = test.truth {
                #expect(decision == .ordered(truth, .savedToolsVersions), "\(test.candidates)")
            }
        }
        // The generator reaches every outcome, so none of the checks above passes vacuously.
        #expect(counts.names > 200 && counts.builds > 200 && counts.stopped > 200, "\(counts)")
    }

    @Test func generatedBundlesOnDiskOpenInTheOrderTheEvidenceGives() throws {
        var random = SplitMix64(seed: 0xB0DD_1E5)
        for _ in 0..<40 {
            let test = RandomCase(using: &random)
            var versions: [String: String] = [:]
            for candidate in test.candidates {
                versions[candidate.name] = Self.contents(build: candidate.toolsVersion?.description ?? "")
            }
            let bundle = try CoreDataTestSupport.makeBundle(
                versions: versions, currentVersionFile: test.current.map { CoreDataTestSupport.currentVersion($0) })
            defer { try? FileManager.default.removeItem(at: bundle.deletingLastPathComponent()) }
            switch CoreDataVersionOrder.decide(test.candidates, current: test.current) {
            case .ordered(let names, _):
                let opened = try CoreDataBundle.open(path: bundle.path)
                #expect(opened.versions.map(\.name) == names)
                #expect(opened.versions[opened.currentIndex].name == (test.current ?? names.last))
            case .ambiguous:
                let failure = try #require(throws: CoreDataBundle.Failure.self) {
                    try CoreDataBundle.open(path: bundle.path)
                }
                #expect(failure.message.contains("pass --version-order"))
            }
        }
    }
}
