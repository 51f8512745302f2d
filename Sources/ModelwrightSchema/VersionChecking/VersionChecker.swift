/// Checks what only makes sense across versions: one model name, versions numbered 1…N without
/// gaps, file names that say their version, `migration from` naming the previous version, and
/// `@renamed(from:)` naming something that existed in the previous version.
package enum VersionChecker {
    /// The file name a version must have inside a model folder, such as `Trips.v3.model`.
    static func fileName(model: String, version: Int) -> String {
        FileNames.version(version, of: model)
    }

    /// Checks the versions of one model folder, sorted by version number.
    /// - Parameters:
    ///   - versions: each version's graph with its source file and that file's diagnostics.
    ///   - isComplete: whether every file of the folder is among them; a file with errors has no
    ///     graph, and its absence must not be reported as a missing version.
    /// - Returns: each version's diagnostics, with what the checks found added.
    static func check(_ versions: [(graph: EntityGraph, sink: DiagnosticSink)], isComplete: Bool) -> [DiagnosticSink] {
        var sinks = versions.map(\.sink)
        guard let first = versions.first?.graph else { return sinks }
        // A file whose name and header disagree on the version number is one mistake: its own
        // error explains the gap or the clash it leaves, which is not reported again.
        let misnamed = Set(
            versions.indices.filter { index in
                let graph = versions[index].graph
                return graph.modelName == first.modelName
                    && sinks[index].file.path.split(separator: "/").last.map(String.init)
                        != fileName(model: graph.modelName, version: graph.version)
            })
        var seen: [Int: (path: String, index: Int)] = [:]
        for (index, version) in versions.enumerated() {
            let graph = version.graph
            let file = sinks[index].file
            let header = graph.headerRange.start
            if graph.modelName != first.modelName {
                sinks[index].error(
                    "this file declares model '\(graph.modelName)', but the other versions in its folder are '\(first.modelName)'",
                    at: header
                )
                continue
            }
            let expected = fileName(model: graph.modelName, version: graph.version)
            if misnamed.contains(index) {
                let name = file.path.split(separator: "/").last.map(String.init) ?? file.path
                let named = FileNames.versionNumber(inName: name).map { " (its name says version \($0))" } ?? ""
                let clash = versions.indices.first { $0 != index && versions[$0].graph.version == graph.version }
                let fix =
                    clash.map {
                        "version \(graph.version) is also declared in '\(sinks[$0].file.path)': change the version number in this header"
                    }
                    ?? "rename the file to '\(expected)', or change the version number in this header"
                sinks[index].error(
                    "a file holding version \(graph.version) of '\(graph.modelName)' must be named '\(expected)'\(named)",
                    at: header,
                    notes: [(fix, header)]
                )
            }
            if let other = seen[graph.version], !misnamed.contains(index), !misnamed.contains(other.index) {
                sinks[index].error("version \(graph.version) is also declared in '\(other.path)'", at: header)
            }
            seen[graph.version] = (file.path, index)
        }
        if isComplete, misnamed.isEmpty, let last = versions.indices.last,
            let message = missingVersionsMessage(Set(versions.map(\.graph.version)), model: first.modelName)
        {
            sinks[last].error(message, at: versions[last].graph.headerRange.start)
        }
        // Every version's custom stages become methods of one generated protocol.
        var stages: [String: Int] = [:]
        for index in versions.indices {
            let graph = versions[index].graph
            for stage in graph.migration?.customStages ?? [] {
                if let other = stages[stage.name], other != graph.version {
                    sinks[index].error(
                        "custom stage '\(stage.name)' is also declared by version \(other)'s migration; every stage becomes a method of the protocol \(graph.modelName)Migrations, so rename this one",
                        at: stage.range.start)
                } else {
                    stages[stage.name] = graph.version
                }
            }
            let previous =
                index > 0 && versions[index - 1].graph.version == graph.version - 1 ? versions[index - 1].graph : nil
            checkMigration(graph, sink: &sinks[index])
            if let previous {
                checkRenames(graph, previous: previous, sink: &sinks[index])
            } else if graph.version == 1 {
                reportRenamesWithoutPrevious(graph, sink: &sinks[index])
            }
        }
        return sinks
    }

    /// The error for the gaps in `numbers` (1 up to the highest), as ranges: `versions 2–5, 7 of
    /// 'M' are missing`. Walks the versions that exist, never the numbers between them, so a
    /// folder holding versions 1 and 1,000,000 costs as much as one holding 1 and 3. At most
    /// ``maximumListedGaps`` gaps are listed, then how many more there are.
    static func missingVersionsMessage(_ numbers: Set<Int>, model: String) -> String? {
        var gaps: [ClosedRange<Int>] = []
        var expected = 1
        for number in numbers.sorted() where number >= 1 {
            if number > expected { gaps.append(expected...(number - 1)) }
            expected = number + 1
        }
        guard !gaps.isEmpty else { return nil }
        let count = gaps.reduce(0) { $0 + $1.count }
        var listed = gaps.prefix(maximumListedGaps).map { gap in
            gap.count == 1 ? "\(gap.lowerBound)" : "\(gap.lowerBound)–\(gap.upperBound)"
        }.joined(separator: ", ")
        if gaps.count > maximumListedGaps { listed += " and \(gaps.count - maximumListedGaps) more gaps" }
        // A released version's file deleted by mistake is the likely cause: say where releases are
        // recorded, as the lock check does for the newest one.
        return
            "version\(count > 1 ? "s" : "") \(listed) of '\(model)' \(count > 1 ? "are" : "is") missing: versions are numbered 1, 2, 3, … without gaps; a released version (listed in \(FileNames.lock)) must keep its file: restore it from version control"
    }

    /// The most gaps the missing-versions error lists.
    static let maximumListedGaps = 20

    private static func checkMigration(_ graph: EntityGraph, sink: inout DiagnosticSink) {
        guard let migration = graph.migration else { return }
        if graph.version == 1 {
            sink.error(
                "version 1 has no earlier version to migrate from; remove this migration block",
                at: migration.range.start)
        } else if migration.fromVersion != graph.version - 1 {
            sink.error(
                "version \(graph.version) can only declare a migration from version \(graph.version - 1), not \(migration.fromVersion)",
                at: migration.range.start,
                notes: [
                    (
                        "write 'migration from \(graph.version - 1)'; stages run one version step at a time",
                        migration.range.start
                    )
                ]
            )
        }
    }

    private static func reportRenamesWithoutPrevious(_ graph: EntityGraph, sink: inout DiagnosticSink) {
        for entity in graph.entities {
            let ranges =
                [entity.renameRange] + entity.attributes.map(\.renameRange) + entity.relationships.map(\.renameRange)
            for range in ranges.compactMap({ $0 }) {
                sink.error(
                    "version 1 has no previous version, so nothing can be renamed; remove '@renamed'", at: range.start)
            }
        }
    }

    private static func checkRenames(_ graph: EntityGraph, previous: EntityGraph, sink: inout DiagnosticSink) {
        for entity in graph.entities {
            if let oldName = entity.renamedFrom, let range = entity.renameRange {
                if previous.entity(named: oldName) == nil {
                    sink.error(
                        "'\(entity.name)' is renamed from '\(oldName)', but version \(previous.version) has no entity '\(oldName)'",
                        at: range.start,
                        suggesting: Suggestion(for: oldName, among: previous.entities.map(\.name), at: range.start)
                    )
                } else if graph.entity(named: oldName) != nil {
                    sink.error(
                        "'\(entity.name)' is renamed from '\(oldName)', but '\(oldName)' still exists in version \(graph.version)",
                        at: range.start
                    )
                }
            }
            let oldEntity = previous.entity(named: entity.renamedFrom ?? entity.name)
            let renamed =
                entity.attributes.map { ($0.name, $0.renamedFrom, $0.renameRange, true) }
                + entity.relationships.map { ($0.name, $0.renamedFrom, $0.renameRange, false) }
            let currentNames = Set(entity.attributes.map(\.name) + entity.relationships.map(\.name))
            // Once per entity, not per renamed property: an entity renaming thousands of
            // properties would otherwise list its old properties thousands of times.
            let renames = renamed.contains { $0.1 != nil } ? oldEntity : nil
            let oldAttributeNames = renames.map { previous.allAttributes(of: $0).map(\.name) } ?? []
            let oldRelationshipNames = renames.map { previous.allRelationships(of: $0).map(\.name) } ?? []
            let oldNameSet = (attributes: Set(oldAttributeNames), relationships: Set(oldRelationshipNames))
            for case (let name, let oldName?, let range?, let isAttribute) in renamed {
                guard let oldEntity else {
                    sink.error(
                        "'\(entity.name)' is new in version \(graph.version), so '\(name)' has nothing to be renamed from",
                        at: range.start
                    )
                    continue
                }
                // An attribute is renamed from an attribute, a relationship from a relationship.
                let kind = isAttribute ? "attribute" : "relationship"
                let oldNames = isAttribute ? oldAttributeNames : oldRelationshipNames
                if !(isAttribute ? oldNameSet.attributes : oldNameSet.relationships).contains(oldName) {
                    sink.error(
                        "'\(name)' is renamed from '\(oldName)', but '\(oldEntity.name)' in version \(previous.version) has no \(kind) '\(oldName)'",
                        at: range.start,
                        suggesting: Suggestion(for: oldName, among: oldNames, at: range.start)
                    )
                } else if currentNames.contains(oldName) {
                    sink.error(
                        "'\(name)' is renamed from '\(oldName)', but '\(oldName)' still exists in '\(entity.name)'",
                        at: range.start
                    )
                }
            }
        }
    }
}
