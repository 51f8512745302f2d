import Modelwright

/// Diffs two adjacent versions into ``SchemaChange``s, classifies each one, and reports as an
/// error, at the offending declaration, every change the newer version does not account for:
/// a lossy change without `lossy …`, a change that needs a default or a custom stage without a
/// `custom` stage. Renames are never guessed: a removal beside an addition of the same type
/// gets a note suggesting `@renamed(from:)`.
///
/// The step is then run on an empty in-memory store (a shadow database), which both checks that
/// the runtime can perform it and tells which tables it rebuilds.
package struct MigrationPlanner {
    package let previous: LoweredVersion
    package let next: LoweredVersion
    var changes: [SchemaChange] = []
    var old: EntityGraph { previous.graph }
    var new: EntityGraph { next.graph }
    /// The entities of each version by name: a long history diffs thousands of entity pairs.
    let oldEntities: [String: EntityGraph.Entity]
    let newEntities: [String: EntityGraph.Entity]
    /// The older version's entities that declare each attribute name, for finding attributes that
    /// moved up without a search of every entity per attribute.
    let oldDeclarers: [String: [EntityGraph.Entity]]

    package init(from previous: LoweredVersion, to next: LoweredVersion) {
        self.previous = previous
        self.next = next
        oldEntities = Self.byName(previous.graph.entities)
        newEntities = Self.byName(next.graph.entities)
        var declarers: [String: [EntityGraph.Entity]] = [:]
        for entity in previous.graph.entities {
            for name in Set(entity.attributes.map(\.name)) { declarers[name, default: []].append(entity) }
        }
        oldDeclarers = declarers
    }

    /// Elements by name; the first wins, as `first(where:)` would find it.
    static func byName<Element>(_ elements: [Element], name: (Element) -> String) -> [String: Element] {
        Dictionary(elements.map { (name($0), $0) }, uniquingKeysWith: { first, _ in first })
    }

    static func byName(_ entities: [EntityGraph.Entity]) -> [String: EntityGraph.Entity] {
        byName(entities) { $0.name }
    }

    /// Plans the step, reporting unaccounted changes into `sink` (the newer version's file);
    /// `freshSchemas`, shared by the steps of one model, spares the shadow checks recreating
    /// the tables that do not change from one version to the next.
    package static func plan(
        from previous: LoweredVersion, to next: LoweredVersion, sink: inout DiagnosticSink,
        freshSchemas: FreshSchemaCache = FreshSchemaCache()
    ) -> PlannedStep {
        var planner = MigrationPlanner(from: previous, to: next)
        planner.diff()
        return planner.finish(sink: &sink, freshSchemas: freshSchemas)
    }

    /// The changes from `previous` to `next` that need a `lossy` line or a custom stage, each with
    /// the entity and property (previous version's names) a `lossy` line would name.
    package static func unaccounted(from previous: LoweredVersion, to next: LoweredVersion) -> [(
        change: SchemaChange, lost: (entity: String, property: String?)?
    )] {
        var planner = MigrationPlanner(from: previous, to: next)
        planner.diff()
        return planner.changes.enumerated().compactMap { index, change in
            guard change.kind != .lightweight else { return nil }
            let lost = planner.lossesNeeded.first { $0.change == index }.map { ($0.entity, $0.property) }
            return (change, lost)
        }
    }

    // MARK: - Diff

    mutating func diff() {
        var continued: Set<String> = []
        for entity in new.entities {
            let oldName = entity.renamedFrom ?? entity.name
            guard let oldEntity = oldEntities[oldName] else {
                add(.lightweight, "add entity \(entity.name)", entity, at: entity.range.start)
                continue
            }
            continued.insert(oldName)
            if oldName != entity.name {
                add(
                    .lightweight, "rename entity \(oldName) to \(entity.name)", entity,
                    at: entity.renameRange?.start ?? entity.range.start)
            }
            diffEntity(oldEntity, entity)
        }
        for entity in old.entities where !continued.contains(entity.name) {
            let suggestion = new.entities.first { candidate in
                old.entity(named: candidate.renamedFrom ?? candidate.name) == nil
                    && Set(candidate.attributes.map(\.name)) == Set(entity.attributes.map(\.name))
            }
            add(
                .lossy, "remove entity \(entity.name)", entityName: entity.name, table: rootTable(entity.name, in: old),
                at: new.migration?.range.start ?? new.headerRange.start, lost: (entity.name, nil),
                hint: suggestion.map {
                    "if '\(entity.name)' became '\($0.name)', write '@renamed(from: \(entity.name))' on it"
                }
            )
        }
    }

    // MARK: - Recording

    mutating func add(
        _ kind: SchemaChange.Kind, _ summary: String, _ entity: EntityGraph.Entity, at offset: Int,
        lost: (entity: String, property: String?)? = nil, hint: String? = nil, property: String? = nil,
        work: StageObligation.Work? = nil, caution: String? = nil
    ) {
        add(
            kind, summary, entityName: entity.name, table: rootTable(entity.name, in: new), at: offset, lost: lost,
            hint: hint, property: property, work: work, caution: caution)
    }

    mutating func add(
        _ kind: SchemaChange.Kind, _ summary: String, entityName: String, table: String, at offset: Int,
        lost: (entity: String, property: String?)? = nil, hint: String? = nil, property: String? = nil,
        work: StageObligation.Work? = nil, caution: String? = nil
    ) {
        changes.append(
            SchemaChange(
                summary: summary, kind: kind, entity: entityName, resolution: hint, caution: caution, table: table,
                offset: offset, property: property, work: work))
        if let lost { lossesNeeded.append((changes.count - 1, lost.entity, lost.property)) }
    }

    var lossesNeeded: [(change: Int, entity: String, property: String?)] = []

    /// What the app writes for an attribute only its code can fill: a function returning the new
    /// value, for the types a stage can return as one column's value (an enum as its raw value, a
    /// Codable value as the app's own type, which the store keeps as JSON), and a hook for a
    /// composite value, which spans columns.
    static func work(for attribute: EntityGraph.Attribute, onlyRowsWithoutValue: Bool) -> StageObligation.Work {
        switch attribute.type {
        case .composite: .hook
        default: .value(attribute.type, isOptional: attribute.isOptional, onlyRowsWithoutValue: onlyRowsWithoutValue)
        }
    }

    func rootTable(_ entity: String, in graph: EntityGraph) -> String {
        guard let found = graph.entity(named: entity) else { return entity }
        return graph.ancestors(of: found).last?.name ?? found.name
    }

    func describe(_ attribute: EntityGraph.Attribute) -> String {
        describe(attribute.type) + (attribute.isOptional ? "?" : "")
            + (attribute.defaultValue.map { " = \(describe($0))" } ?? "")
    }

    func describe(_ type: AttributeType) -> String { DefaultValueChecker.typeName(type) }

    func describe(_ value: DefaultValue) -> String {
        switch value {
        case .bool(let value): "\(value)"
        case .integer(let value): "\(value)"
        case .floatingPoint(let value): "\(value)"
        case .decimal(let text): text
        case .string(let text): "\"\(text)\""
        case .date(let seconds): "date \(seconds)"
        case .now: "now"
        case .enumCase(let name): ".\(name)"
        }
    }

}
