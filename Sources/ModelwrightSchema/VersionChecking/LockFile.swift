import Foundation
import Modelwright

/// The lock file beside a model's versions, `modelwright-lock.json`: the checksums of released
/// versions. A released version must never change, or stores created with it no longer open;
/// loading the model checks every frozen version against its recorded checksum.
///
/// ```json
/// {
///   "frozen" : [
///     { "checksum" : "89de58cf…", "version" : 1 },
///     { "checksum" : "d70d31d9…", "version" : 2 }
///   ],
///   "model" : "Trips"
/// }
/// ```
///
/// `modelwright lock <folder>` writes it; doc comments may still be edited in a frozen version,
/// since the checksum does not cover them.
package struct LockFile: Codable, Sendable, Equatable {
    /// The lock file's name inside a model folder.
    package static let fileName = FileNames.lock

    /// One released version.
    package struct FrozenVersion: Codable, Sendable, Equatable {
        /// The version number.
        package var version: Int
        /// Its checksum when it was frozen.
        package var checksum: String
        /// Each entity's structure when it was frozen, as the first digits of the checksum of a
        /// schema holding that entity alone (``LockFile/entityDigests(of:)``): what lets an edit
        /// be traced to the entity it changed. Absent from lock files written before it existed.
        package var entities: [String: String]? = nil
        /// Each entity's declarations when it was frozen, by entity name: for each attribute,
        /// relationship, uniqueness constraint and index (keyed by ``memberKey(_:_:)``), the first
        /// digits of the checksum of a schema holding the entity with that declaration alone
        /// (``LockFile/memberDigests(of:)``): what lets an edit be traced to the declaration it
        /// changed. Absent from lock files written before it existed, which still work: the error
        /// then names the entity.
        package var members: [String: [String: String]]? = nil
        /// Each enum's cases when it was frozen, by enum name: each case's raw value by case name.
        /// Stores on devices hold the raw values and released code names the cases, so neither may
        /// change. Absent from lock files written before it existed: their enums are not checked.
        package var enums: [String: [String: String]]? = nil
        /// The custom stages of the step into this version when it was frozen, in order: devices
        /// have run them. Absent from lock files written before it existed: not checked.
        package var stages: [String]? = nil
        /// The `@sync` marking of each synced entity when it was frozen (`sync`, or
        /// `sync(unique: merge)`), by entity name: it decides what devices exchange, not what a
        /// store holds, so the checksum leaves it out and the lock keeps it. Absent from lock files
        /// written before it existed: not checked.
        package var sync: [String: String]? = nil
        /// The migration block's other clauses when it was frozen, in order: each accepted loss
        /// (`lossy Book.rating`) and each change a custom stage covers (`covers fill Book.rating`),
        /// as ``migrationClauses(of:)`` spells them. Devices have migrated by the released rules,
        /// and the checksum covers neither. Absent from lock files written before it existed: not
        /// checked.
        package var clauses: [String]? = nil
    }

    /// The accepted losses and covered changes of `graph`'s migration block, in the file's order,
    /// as ``FrozenVersion/clauses`` records them, with where each was written. A loss's reason is
    /// prose, like a doc comment, and may be edited.
    package static func migrationClauses(of graph: EntityGraph) -> [(text: String, range: SourceRange)] {
        guard let migration = graph.migration else { return [] }
        let losses = migration.acceptedLosses.map { loss in
            ("lossy " + [loss.entity, loss.property].compactMap { $0 }.joined(separator: "."), loss.range)
        }
        let covers = migration.customStages.flatMap { stage in
            (stage.covers ?? []).map { ("covers \(stage.name) \($0.text)", $0.range) }
        }
        return (losses + covers).sorted { $0.1.start < $1.1.start }
    }

    /// The `@sync` marking of each synced entity of `graph`, as ``FrozenVersion/sync`` records it.
    package static func syncMarkings(of graph: EntityGraph) -> [String: String] {
        Dictionary(
            graph.entities.compactMap { entity in
                entity.sync.map { (entity.name, $0.unique.map { "sync(unique: \($0.rawValue))" } ?? "sync") }
            },
            uniquingKeysWith: { first, _ in first })
    }

    /// The cases of each enum of `graph`, as ``FrozenVersion/enums`` records them.
    package static func enumCases(of graph: EntityGraph) -> [String: [String: String]] {
        Dictionary(
            graph.enumerations.map { enumeration in
                let description = enumeration.schemaDescription
                return (
                    description.name,
                    Dictionary(
                        description.cases.map { ($0.name, $0.rawValue) }, uniquingKeysWith: { first, _ in first })
                )
            },
            uniquingKeysWith: { first, _ in first })
    }

    /// How many hexadecimal digits of each declaration's digest the lock file keeps: a lock file
    /// holds one per declaration of every released version, so fewer than an entity's.
    private static let memberDigestLength = 8

    /// The key of one declaration of an entity in ``FrozenVersion/members``: its kind and name
    /// (`attribute title`, `relationship owner`), or for a constraint its names (`unique a,b`,
    /// sorted; `index a,b`, in written order).
    package static func memberKey(_ kind: String, _ names: [String]) -> String {
        kind + " " + names.joined(separator: ",")
    }

    /// The digest of each declaration of each entity (``FrozenVersion/members``): the runtime's
    /// checksum of a schema holding the entity with only that declaration, so it covers exactly
    /// what the version checksum covers of it.
    package static func memberDigests(of schema: SchemaDescription) -> [String: [String: String]] {
        var result: [String: [String: String]] = [:]
        for entity in schema.entities {
            var bare = entity
            bare.attributes = []
            bare.relationships = []
            bare.uniquenessConstraints = []
            bare.indexes = []
            bare.searchableAttributes = []
            func digest(_ change: (inout EntityDescription) -> Void) -> String {
                var alone = bare
                change(&alone)
                let schema = SchemaDescription(modelName: schema.modelName, version: schema.version, entities: [alone])
                return String(SchemaChecksum(of: schema).hexDigits.prefix(memberDigestLength))
            }
            var members: [String: String] = [:]
            for attribute in entity.attributes {
                members[memberKey("attribute", [attribute.name])] = digest { $0.attributes = [attribute] }
            }
            for relationship in entity.relationships {
                members[memberKey("relationship", [relationship.name])] = digest { $0.relationships = [relationship] }
            }
            for constraint in entity.uniquenessConstraints {
                members[memberKey("unique", constraint.sorted())] = digest { $0.uniquenessConstraints = [constraint] }
            }
            for index in entity.indexes {
                members[memberKey("index", index)] = digest { $0.indexes = [index] }
            }
            // Only for an entity with a full-text index, so older lock files keep their entries.
            if !entity.searchableAttributes.isEmpty {
                let names = entity.searchableAttributes.sorted()
                members[memberKey("search", names)] = digest { $0.searchableAttributes = names }
            }
            result[entity.name] = members
        }
        return result
    }

    /// How many hexadecimal digits of each entity's digest the lock file keeps: enough to tell an
    /// edit, short enough that a long history keeps a small lock file.
    private static let entityDigestLength = 16

    /// The digest of each entity's structure, by entity name: the runtime's checksum of a schema
    /// that holds only that entity, so it covers exactly what the version checksum covers.
    package static func entityDigests(of schema: SchemaDescription) -> [String: String] {
        Dictionary(
            schema.entities.map { entity in
                let alone = SchemaDescription(modelName: schema.modelName, version: schema.version, entities: [entity])
                return (entity.name, String(SchemaChecksum(of: alone).hexDigits.prefix(entityDigestLength)))
            },
            uniquingKeysWith: { first, _ in first })
    }

    /// The model's name.
    package var model: String
    /// The frozen versions, oldest first.
    package var frozen: [FrozenVersion]

    /// Freezes every version of `model` up to and including `last`, keeping what was frozen before.
    package static func freezing(_ model: PlannedModel, through last: Int) -> LockFile {
        LockFile(
            model: model.name,
            frozen: model.versions.filter { $0.number <= last }.map {
                FrozenVersion(
                    version: $0.number, checksum: $0.checksum.hexDigits, entities: entityDigests(of: $0.schema),
                    members: memberDigests(of: $0.schema), enums: enumCases(of: $0.graph),
                    stages: $0.graph.migration?.customStages.map(\.name) ?? [], sync: syncMarkings(of: $0.graph),
                    clauses: migrationClauses(of: $0.graph).map(\.text))
            }
        )
    }

    /// The file's bytes: sorted keys and two-space indentation, so the same lock is always the same text.
    package func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self) + Data("\n".utf8)
    }

    /// Reads the lock file of a model folder: `nil` when there is none, a diagnostic when it is
    /// broken. A lock file that is a symbolic link is refused unread.
    static func read(in folder: ConfinedFolder) -> (lock: LockFile?, problem: Diagnostic?) {
        let path = ModelSources.path(of: fileName, in: folder.path)
        let data: [UInt8]
        do {
            guard let bytes = try folder.readIfPresent(fileName, limit: SourceFile.maximumSize) else {
                return (nil, nil)
            }
            data = bytes
        } catch {
            let message =
                error == .symbolicLink
                ? "the lock file is a symbolic link; Modelwright reads only the files inside a model folder: replace the link with the file itself"
                : "the lock file cannot be read (\(error.reason)); 'modelwright lock' writes it as a regular file"
            return (nil, Diagnostic(severity: .error, message: message, path: path, location: nil))
        }
        do {
            return (try JSONDecoder().decode(LockFile.self, from: Data(data)), nil)
        } catch {
            return (
                nil,
                Diagnostic(
                    severity: .error,
                    message:
                        "the lock file cannot be read (\(error)); it must hold {\"model\": …, \"frozen\": [{\"version\": 1, \"checksum\": …}]}, as 'modelwright lock' writes it",
                    path: path, location: nil)
            )
        }
    }
}
