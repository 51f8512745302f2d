import Foundation

/// The unmutated inputs a campaign starts from: the example model's versions and the Core Data
/// `contents` files of the shared corpus and the Core Data test fixtures, plus a small built-in model.
struct FuzzSeeds: Sendable {
    /// A seed file and where it came from.
    struct Seed: Sendable {
        /// A short name shown in the mutation list, such as `Trips.v3.model`.
        var name: String
        /// The file's bytes.
        var bytes: [UInt8]
    }

    /// `Trips.v1.model`, `Trips.v2.model` and `Trips.v3.model`, in version order.
    var schemaVersions: [Seed]
    /// The example model's generator config, copied beside the versions as `generate` finds it.
    var config: [UInt8]
    /// Core Data `contents` files, grouped by corpus folder so a group with a hundred versions
    /// is not picked a hundred times as often as a group with one.
    var xmlGroups: [[Seed]]

    /// The package's root folder, found from this file's path (`Tests/ModelwrightFuzz/`).
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// Reads the seeds from the package and the corpus folder (`../shared/corpus` by default).
    static func load(corpus: String?) throws -> FuzzSeeds {
        let trips = packageRoot.appendingPathComponent("Models/Trips")
        let versions = try (1...3).map { number in
            let name = "Trips.v\(number).model"
            return Seed(name: name, bytes: [UInt8](try Data(contentsOf: trips.appendingPathComponent(name))))
        }
        let config = [UInt8]((try? Data(contentsOf: trips.appendingPathComponent("modelwright-config.json"))) ?? Data())
        let corpusFolder =
            corpus ?? packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus").path
        var groups = xmlGroups(in: corpusFolder)
        let fixtures = packageRoot.appendingPathComponent("Tests/ModelwrightCoreDataTests/Fixtures").path
        groups += xmlGroups(in: fixtures)
        groups.append([Seed(name: "built-in", bytes: Array(builtInModel.utf8))])
        return FuzzSeeds(schemaVersions: versions, config: config, xmlGroups: groups)
    }

    /// Every `contents` file under `folder`, grouped by its first-level subfolder, in a stable order.
    private static func xmlGroups(in folder: String) -> [[Seed]] {
        guard let enumerator = FileManager.default.enumerator(atPath: folder) else { return [] }
        var groups: [String: [Seed]] = [:]
        while let relative = enumerator.nextObject() as? String {
            guard relative.hasSuffix("/contents") || relative == "contents" else { continue }
            let path = folder + "/" + relative
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            let group = String(relative.prefix { $0 != "/" })
            groups[group, default: []].append(Seed(name: relative, bytes: [UInt8](data)))
        }
        return groups.keys.sorted().map { key in groups[key, default: []].sorted { $0.name < $1.name } }
    }

    /// A small but complete Core Data model, used when no corpus is found.
    static let builtInModel = """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="21754" systemVersion="22E261" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
            <entity name="Person" representedClassName="Person" syncable="YES">
                <attribute name="name" attributeType="String" defaultValueString="Ann"/>
                <attribute name="age" optional="YES" attributeType="Integer 16" defaultValueString="0" usesScalarValueType="YES"/>
                <attribute name="born" optional="YES" attributeType="Date" usesScalarValueType="NO"/>
                <relationship name="pets" optional="YES" toMany="YES" deletionRule="Cascade" destinationEntity="Pet" inverseName="owner" inverseEntity="Pet"/>
                <uniquenessConstraints>
                    <uniquenessConstraint>
                        <constraint value="name"/>
                    </uniquenessConstraint>
                </uniquenessConstraints>
            </entity>
            <entity name="Pet" representedClassName="Pet" parentEntity="Animal" syncable="YES">
                <relationship name="owner" optional="YES" maxCount="1" deletionRule="Nullify" destinationEntity="Person" inverseName="pets" inverseEntity="Person"/>
            </entity>
            <entity name="Animal" representedClassName="Animal" isAbstract="YES" syncable="YES">
                <attribute name="nickname" optional="YES" attributeType="String" elementID="alias"/>
            </entity>
        </model>
        """
}
