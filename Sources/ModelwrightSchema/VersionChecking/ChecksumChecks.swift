import Modelwright

extension VersionChecker {
    /// Checks what only the checksums of the lowered versions show: a frozen (released) version
    /// whose file changed or disappeared, and neighbours with one checksum (a warning).
    /// Adds what it finds to `diagnostics`; `false` when any of it is an error.
    package static func checkChecksums(
        _ versions: [LoweredVersion], of sources: ModelSources, diagnostics: inout ModelDiagnostics
    ) -> Bool {
        if let folder = sources.folder, let lock = sources.lock {
            diagnostics.others += checkFrozen(versions, lock: lock, sinks: &diagnostics.versions, folder: folder)
        }
        // Stages are keyed by the version number a store records, so one structure may come back
        // later (a history that adds something and removes it again). Two neighbours with one
        // checksum are still worth a word: their step changes no table.
        for (index, version) in versions.enumerated() where index > 0 {
            let checksum = version.checksum
            if versions[index - 1].checksum == checksum {
                diagnostics.versions[index].warning(
                    "version \(version.number) has the same structure as version \(version.number - 1) (checksum \(checksum)): this step changes no table, and a store opened without a migration plan takes either for the other; if the data must change, declare a custom stage in its migration block, or change the structure or add '@coreData(versionHashModifier: \"…\")' to what changed",
                    at: version.graph.headerRange.start)
            }
        }
        return !diagnostics.hasErrors
    }

    /// Reports every frozen version whose file changed or disappeared.
    private static func checkFrozen(
        _ versions: [LoweredVersion], lock: LockFile, sinks: inout [DiagnosticSink], folder: String
    ) -> [Diagnostic] {
        var missing: [Diagnostic] = []
        let lockPath = (folder.hasSuffix("/") ? folder : folder + "/") + LockFile.fileName
        // By number, not a search per frozen version: a lock file may list any number of them.
        var indexByNumber: [Int: Int] = [:]
        for (index, version) in versions.enumerated() {
            indexByNumber[version.number] = indexByNumber[version.number] ?? index
        }
        var unreported = 0
        for frozen in lock.frozen {
            guard let index = indexByNumber[frozen.version] else {
                guard missing.count < DiagnosticSink.errorLimit else {
                    unreported += 1
                    continue
                }
                missing.append(
                    Diagnostic(
                        severity: .error,
                        message:
                            "version \(frozen.version) is frozen in \(LockFile.fileName), but its file '\(VersionChecker.fileName(model: lock.model, version: frozen.version))' is missing; released versions must stay, so stores created with them can be migrated: restore the file (from version control), or, if version \(frozen.version) was never released, remove its entry from \(LockFile.fileName)",
                        path: lockPath, location: nil))
                continue
            }
            let checksum = versions[index].checksum.hexDigits
            let header = versions[index].graph.headerRange.start
            // The checksum covers no enum case, stage or clause: what the lock records of them. An
            // enum edit comes first even when the checksum changed too: a case's raw value shifts
            // every attribute default of it, which would otherwise be blamed for the enum's edit.
            let outside = changedEnumOrStage(in: versions[index], since: frozen)
            guard checksum != frozen.checksum || outside != nil else { continue }
            let change = outside ?? firstChange(in: versions[index], since: frozen)
            let checksums =
                checksum == frozen.checksum
                ? ""
                : ": \(LockFile.fileName) records checksum \(frozen.checksum), but this file now has checksum \(checksum); stores created with the released version would no longer open"
            sinks[index].error(
                "version \(frozen.version) is frozen (released)\(change.map { ", but \($0.what)" } ?? "")\(checksums)",
                at: change?.position ?? header,
                notes: [
                    (
                        "undo the change here and make it in a new version instead: 'modelwright new-version \(folder)' starts version \((versions.last?.number ?? 0) + 1) as a copy of the current one",
                        change?.position ?? header
                    )
                ]
            )
        }
        if unreported > 0 {
            missing.append(
                Diagnostic(
                    severity: .error,
                    message: "\(unreported) more frozen versions have no file; stopped reporting them",
                    path: lockPath, location: nil))
        }
        return missing
    }

    /// The first enum, in the file's order, whose cases or raw values differ from the ones the lock
    /// file recorded, then the first entity whose `@sync` marking differs, then a change to the
    /// custom stages of the step into the version; `nil` when
    /// the lock file records neither (written before they were frozen) or nothing changed.
    private static func changedEnumOrStage(in version: LoweredVersion, since frozen: LockFile.FrozenVersion) -> (
        what: String, position: Int
    )? {
        let graph = version.graph
        if let recorded = frozen.enums {
            for enumeration in graph.enumerations.sorted(by: { $0.range.start < $1.range.start }) {
                let name = enumeration.schemaDescription.name
                guard let before = recorded[name] else {
                    return ("enum '\(name)' was added to it here", enumeration.range.start)
                }
                let cases = enumeration.schemaDescription.cases
                // A removal first: in an Int enum it also shifts the raw values after it.
                if let removed = before.keys.filter({ key in !cases.contains { $0.name == key } }).sorted().first {
                    return (
                        "case '\(name).\(removed)' was removed: stores on devices may hold its raw value \(before[removed] ?? "")",
                        enumeration.range.start
                    )
                }
                // An Int enum numbers the cases without a raw value in order, so a reorder shows as
                // a changed raw value: say so, since the edit itself names no number.
                let reordered =
                    Set(before.keys) == Set(cases.map(\.name)) && Set(before.values) == Set(cases.map(\.rawValue))
                for enumCase in cases {
                    let position = enumeration.caseRanges[enumCase.name]?.start ?? enumeration.range.start
                    switch before[enumCase.name] {
                    case nil:
                        return ("case '\(name).\(enumCase.name)' was added here", position)
                    case let raw? where raw != enumCase.rawValue:
                        return (
                            "the raw value of '\(name).\(enumCase.name)' changed from \(raw) to \(enumCase.rawValue): stores on devices hold \(raw)"
                                + (reordered
                                    ? "; the cases were reordered, and an Int enum numbers the cases without a raw value in their order: restore the order, or write the released raw values ('\(enumCase.name) = \(raw)')"
                                    : ""),
                            position
                        )
                    default: continue
                    }
                }
            }
            let current = Set(graph.enumerations.map(\.schemaDescription.name))
            if let removed = recorded.keys.filter({ !current.contains($0) }).sorted().first {
                return ("enum '\(removed)' was removed from it", graph.headerRange.start)
            }
        }
        if let recorded = frozen.sync {
            let current = LockFile.syncMarkings(of: graph)
            for entity in graph.entities where current[entity.name] != recorded[entity.name] {
                let before = recorded[entity.name].map { "'@\($0)'" } ?? "not synced"
                let after = current[entity.name].map { "'@\($0)'" } ?? "not synced"
                return (
                    "entity '\(entity.name)' was \(before) and is now \(after): devices of the released version exchange its rows by the released rule",
                    entity.sync?.range.start ?? entity.range.start
                )
            }
        }
        if let recorded = frozen.stages {
            let stages = graph.migration?.customStages ?? []
            if stages.map(\.name) != recorded {
                let position = stages.first { !recorded.contains($0.name) }?.range.start ?? graph.migration?.range.start
                let what =
                    recorded.isEmpty
                    ? "custom stage '\(stages.first?.name ?? "")' was added"
                    : "its custom stages changed from \(recorded.map { "'\($0)'" }.joined(separator: ", ")) to \(stages.isEmpty ? "none" : stages.map { "'\($0.name)'" }.joined(separator: ", "))"
                return (
                    what + ": devices that migrated to it ran the released stages, and the others must run the same",
                    position ?? graph.headerRange.start
                )
            }
        }
        if let recorded = frozen.clauses {
            let clauses = LockFile.migrationClauses(of: graph)
            if let added = clauses.first(where: { !recorded.contains($0.text) }) {
                return (
                    "'\(added.text)' was added to its migration block: devices migrated to it by the released block",
                    added.range.start
                )
            }
            let current = Set(clauses.map(\.text))
            if let removed = recorded.first(where: { !current.contains($0) }) {
                return (
                    "'\(removed)' was removed from its migration block: devices migrated to it by the released block",
                    graph.migration?.range.start ?? graph.headerRange.start
                )
            }
        }
        return nil
    }

    /// The first declaration of `entity`, in the file's order, that differs from the one the lock
    /// file recorded (an attribute or relationship changed or added here, then a uniqueness
    /// constraint or index added, then one removed); `nil` when the lock file records no
    /// declaration digests, or when only the entity's own line (parent, abstract) changed.
    private static func firstChangedMember(
        of entity: EntityGraph.Entity, in version: LoweredVersion, since frozen: LockFile.FrozenVersion
    ) -> (what: String, position: Int)? {
        guard let recorded = frozen.members?[entity.name],
            let current = LockFile.memberDigests(of: version.schema)[entity.name]
        else { return nil }
        var properties: [(kind: String, name: String, position: Int)] =
            entity.attributes.map { ("attribute", $0.name, $0.range.start) }
            + entity.relationships.map { ("relationship", $0.name, $0.range.start) }
        properties.sort { $0.position < $1.position }
        for property in properties {
            let key = LockFile.memberKey(property.kind, [property.name])
            guard recorded[key] != current[key] else { continue }
            let how = recorded[key] == nil ? "was added here" : "differs from the released one"
            return ("\(property.kind) '\(property.name)' \(how)", property.position)
        }
        let constraints =
            entity.uniquenessConstraints.map {
                (LockFile.memberKey("unique", $0.sorted()), "uniqueness constraint", $0, entity.uniquenessRanges[$0])
            }
            + entity.indexes.map { (LockFile.memberKey("index", $0), "index", $0, entity.indexRanges[$0]) }
            + (entity.searchableAttributes.isEmpty
                ? []
                : [
                    (
                        LockFile.memberKey("search", entity.searchableAttributes.sorted()), "full-text index",
                        entity.searchableAttributes.sorted(), nil
                    )
                ])
        for (key, kind, names, range) in constraints.sorted(by: { ($0.3?.start ?? 0) < ($1.3?.start ?? 0) })
        where recorded[key] == nil {
            return ("the \(kind) (\(names.joined(separator: ", "))) was added here", range?.start ?? entity.range.start)
        }
        if let removed = recorded.keys.filter({ current[$0] == nil }).sorted().first {
            let parts = removed.split(separator: " ", maxSplits: 1).map(String.init)
            let kind = parts.first ?? removed
            let names = parts.count > 1 ? parts[1] : ""
            let what =
                kind == "attribute" || kind == "relationship"
                ? "\(kind) '\(names)' was removed"
                : "the \(["unique": "uniqueness constraint", "search": "full-text index"][kind] ?? kind) (\(names.replacingOccurrences(of: ",", with: ", "))) was removed"
            return (what, entity.range.start)
        }
        return nil
    }

    /// The first entity, in the file's order, whose structure differs from the one the lock file
    /// recorded (an entity whose parent changed too is passed over for the parent), then the
    /// first entity removed; `nil` when the lock file records no entity digests.
    private static func firstChange(in version: LoweredVersion, since frozen: LockFile.FrozenVersion) -> (
        what: String, position: Int
    )? {
        guard let recorded = frozen.entities else { return nil }
        let current = LockFile.entityDigests(of: version.schema)
        let entities = version.graph.entities
        let changed = Set(entities.map(\.name).filter { recorded[$0] != current[$0] })
        let ordered = entities.filter { changed.contains($0.name) }
        let first = ordered.first { entity in entity.parent.map { !changed.contains($0) } ?? true } ?? ordered.first
        if let first {
            guard recorded[first.name] != nil else {
                return ("entity '\(first.name)' was added to it here", first.range.start)
            }
            if let change = firstChangedMember(of: first, in: version, since: frozen) {
                return ("entity '\(first.name)' changed: \(change.what)", change.position)
            }
            return ("entity '\(first.name)' changed: its structure differs", first.range.start)
        }
        if let removed = recorded.keys.filter({ current[$0] == nil }).sorted().first {
            return ("entity '\(removed)' was removed from it", version.graph.headerRange.start)
        }
        return nil
    }
}
