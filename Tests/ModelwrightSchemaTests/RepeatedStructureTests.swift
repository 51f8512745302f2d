import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightSchema

/// Histories in which a structure comes back (a property added in one release and removed in the
/// next, as a large messaging app's `UserClient.legacyPushToken` was): each is validated and
/// planned, then a store of every version, filled with rows, migrates to the last version by the
/// number it records and keeps exactly the values every step between keeps. The same store with
/// its number removed (an old or imported store) either opens with the very rows the numbered
/// one got, or is refused with `StoreError.unresolvableStoreVersion` exactly when the steps
/// between the versions sharing its checksum change data.
///
/// `MODELWRIGHT_REPEATED_HISTORIES=<n>` runs `n` random histories instead of the CI's 6.
struct RepeatedStructureTests {
    /// What a version may hold besides `User.name` and `User.rank`: one bit per feature.
    private enum Feature: Int, CaseIterable {
        case token = 1
        case score = 2
        case tags = 4
    }

    /// The model text of version `number` with the features of `state`, accepting what the
    /// previous state had and this one drops.
    private static func text(version number: Int, state: Int, previous: Int?) -> String {
        func has(_ feature: Feature, _ state: Int) -> Bool { state & feature.rawValue != 0 }
        var lines = ["model Rep version \(number)", "entity User {", "    name: String", "    rank: Int32 = 1"]
        if has(.token, state) { lines.append("    token: String?") }
        if has(.score, state) { lines.append("    score: Int64 = 0") }
        if has(.tags, state) { lines.append("    tags: Set<Tag> @inverse(owner)") }
        lines.append("}")
        if has(.tags, state) { lines += ["entity Tag {", "    label: String", "    owner: User?", "}"] }
        if let previous {
            var lossy: [String] = []
            if has(.token, previous), !has(.token, state) { lossy.append("lossy User.token") }
            if has(.score, previous), !has(.score, state) { lossy.append("lossy User.score") }
            if has(.tags, previous), !has(.tags, state) { lossy += ["lossy User.tags", "lossy Tag"] }
            if !lossy.isEmpty { lines += ["migration from \(number - 1) {"] + lossy.map { "    " + $0 } + ["}"] }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The states of a history: the A→B→A case first, then random ones of 3 to 7 versions with at
    /// least one state repeated.
    private static func history(seed: UInt64) -> [Int] {
        guard seed > 0 else { return [0, Feature.token.rawValue, 0] }
        var random = SplitMix64(seed: seed)
        let count = 3 + Int(random.next() % 5)
        var states = (0..<count).map { _ in Int(random.next() % 8) }
        let repeated = Int(random.next() % UInt64(count - 2))
        states[repeated + 2 + Int(random.next() % UInt64(count - repeated - 2))] = states[repeated]
        return states
    }

    /// Every table's rows (the metadata aside), each as its columns by name, in a fixed order.
    private static func dump(_ url: URL) throws -> [String: [[String: SQLValue]]] {
        let connection = try SQLiteConnection(path: url.path, readOnly: true)
        let context = MigrationContext(
            connection: connection,
            layout: try SchemaLayout(SchemaDescription(modelName: "Rep", version: 1, entities: [])))
        var tables: [String: [[String: SQLValue]]] = [:]
        for table in try context.query("SELECT name FROM sqlite_master WHERE type = 'table'") {
            guard case .text(let name) = table["name"], name != SchemaSQL.metadataTable else { continue }
            tables[name] = try context.query("SELECT * FROM \(quoted(name)) ORDER BY \"id\"").map(\.values)
        }
        return tables
    }

    @Test func historiesWithRepeatedStructuresPlanAndMigrateFromEveryVersion() throws {
        let count = ProcessInfo.processInfo.environment["MODELWRIGHT_REPEATED_HISTORIES"].flatMap { Int($0) } ?? 6
        var migrations = 0
        var resolved = 0
        var refused = 0
        for seed in 0..<UInt64(count) {
            let states = Self.history(seed: seed)
            var files: [String: String] = [:]
            for (index, state) in states.enumerated() {
                files["Rep.v\(index + 1).model"] = Self.text(
                    version: index + 1, state: state, previous: index > 0 ? states[index - 1] : nil)
            }
            let failure = "seed \(seed), states \(states)"
            let folder = try temporaryModelFolder(named: "Rep", files: files)
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let loaded = FrontEnd.run(modelAt: folder.path)
            let errors = loaded.diagnostics.filter { $0.severity == .error }
            #expect(errors.isEmpty, "\(failure): \(errors.prefix(3))")
            let model = try #require(loaded.model, "\(failure) plans")
            let schemas = model.versions.map(\.schema)
            let last = try #require(schemas.last)
            // Each stage carries the losses its step declares, as the generated plan does: the runtime
            // refuses an undeclared removal of an entity holding rows.
            let plan = MigrationPlan(
                current: last,
                stages: zip(schemas, schemas.dropFirst()).enumerated().map { index, pair in
                    MigrationStage.lightweight(from: pair.0, to: pair.1, lossy: model.steps[index].losses)
                })
            for (index, start) in schemas.enumerated() {
                let numbered = try store(at: start, in: folder, name: "numbered-\(index)")
                let before = try Self.dump(numbered)
                let bare = folder.appendingPathComponent("bare-\(index).sqlite")
                try FileManager.default.copyItem(at: numbered, to: bare)
                try SQLiteConnection(path: bare.path).execute(
                    "DELETE FROM \(quoted(SchemaSQL.metadataTable)) WHERE \"key\" = 'version'")

                try Store(url: numbered, migrationPlan: plan).close()
                migrations += 1
                let metadata = try StoreMetadata.read(on: SQLiteConnection(path: numbered.path, readOnly: true))
                #expect(
                    metadata.values[StoreMetadata.modelKey] == "Rep" && metadata.version == last.version
                        && metadata.checksum == last.checksum.hexDigits,
                    "\(failure), from version \(index + 1)")
                let after = try Self.dump(numbered)
                // What every step from here to the last version keeps, is kept.
                let kept = states[index...].reduce(7, &)
                #expect(
                    Self.kept(before, kept: kept) == Self.kept(after, kept: kept),
                    "\(failure), from version \(index + 1): values every step keeps")

                // The same store without its number: resolved to the newest version with its
                // checksum when nothing between changes data, else refused, untouched.
                let sharing = states.indices.filter { schemas[$0].checksum == start.checksum }
                let (oldest, newest) = (sharing.first ?? index, sharing.last ?? index)
                let atBothEnds = states[oldest]
                let netZero = states[oldest...newest].allSatisfy { $0 & atBothEnds == atBothEnds }
                let bytes = try Data(contentsOf: bare)
                do {
                    try Store(url: bare, migrationPlan: plan).close()
                    #expect(netZero, "\(failure), from version \(index + 1) without a number: opened")
                    #expect(try Self.dump(bare) == after, "\(failure), from version \(index + 1) without a number")
                    #expect(
                        try StoreMetadata.read(on: SQLiteConnection(path: bare.path, readOnly: true)).version
                            == last.version, "\(failure): the resolved store records its number")
                    resolved += 1
                } catch let error as StoreError {
                    guard case .unresolvableStoreVersion(_, let versions, _) = error else { throw error }
                    #expect(!netZero, "\(failure), from version \(index + 1) without a number: \(error)")
                    #expect(versions == sharing.map { $0 + 1 })
                    #expect(try Data(contentsOf: bare) == bytes, "\(failure): a refused store is untouched")
                    refused += 1
                }
            }
        }
        print(
            "repeated-structure histories: \(count), migrations: \(migrations), stores without a number resolved: \(resolved), refused: \(refused)"
        )
        #expect(resolved > 0 && refused > 0)
    }

    /// A store of `schema` with rows in every entity and its version recorded.
    private func store(at schema: SchemaDescription, in folder: URL, name: String) throws -> URL {
        let url = folder.appendingPathComponent(name + ".sqlite")
        let layout = try SchemaLayout(schema)
        let connection = try SQLiteConnection(path: url.path)
        try connection.execute(SchemaSQL.createStatements(for: layout, in: connection.dialect))
        try StoreMetadata.record(schema, on: connection)
        try SyntheticRows.insert(for: layout, into: connection)
        return url
    }

    /// A dump reduced to the columns of the features in `kept` and the ones always there.
    private static func kept(_ dump: [String: [[String: SQLValue]]], kept: Int) -> [String: [[String: SQLValue]]] {
        var columns: Set<String> = ["id", "name", "rank"]
        if kept & Feature.token.rawValue != 0 { columns.insert("token") }
        if kept & Feature.score.rawValue != 0 { columns.insert("score") }
        let keepsTags = kept & Feature.tags.rawValue != 0
        if keepsTags { columns.formUnion(["label", "owner"]) }
        return dump.filter { $0.key == "User" || ($0.key == "Tag" && keepsTags) }.mapValues { rows in
            rows.map { $0.filter { columns.contains($0.key) } }
        }
    }
}
