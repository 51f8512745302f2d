import Modelwright

/// Checks an entity graph against the Swift names its generated code declares, so that a model
/// `validate` accepts compiles: each record's stored properties, its `Fields` accessors and its
/// to-many request properties must all differ, in every record of a hierarchy (a record holds
/// its ancestors' properties too).
///
/// Names the templates fix (`id`, `path`, `Fields` …) are refused where a name is declared (see
/// ``NameRules/reservedPropertyNames``); this check covers the names derived from the model's:
/// `<relationship>ID` for a to-one relationship, which yields to a declared property of the same
/// name by becoming `<relationship>RecordID`, and `<relationship>Request` for a to-many one.
///
/// The names the generated code derives from the model's are computed here and nowhere else: a
/// relationship's ID and request properties, the stage protocol and its members. The generator's
/// records, fields, named requests and migrations spell the members this model checked.
///
/// It also checks the store's namespace, so that a model `validate` accepts gets its store: the
/// tables and columns SQLite compares without case, the names SQLite and the runtime keep, and
/// SQLite's column limit, as the runtime's own layout finds them (``StoreLimits``).
package enum GeneratedNamespace {
    /// The Swift name of the ID property (and field) a to-one relationship generates:
    /// `<relationship>ID`, or, when a property of the same hierarchy already has that name (Core
    /// Data models often keep both `productID` and `product`), `<relationship>RecordID`. The graph
    /// keeps it on each relationship (`idProperty`).
    package static func idProperty(ofRelationship relationship: String, taken: Set<String>) -> String {
        let plain = relationship + "ID"
        return taken.contains(plain) ? relationship + "RecordID" : plain
    }

    /// The Swift name of the request property a to-many relationship generates: `<relationship>Request`.
    package static func requestProperty(ofRelationship relationship: String) -> String {
        relationship + "Request"
    }

    /// The protocol of a model's custom migration stages, which the app implements: `<Model>Migrations`.
    package static func migrationsProtocol(ofModel model: String) -> String {
        model + "Migrations"
    }

    /// The stage protocol's hook before a custom stage changes the tables: `<stage>WillMigrate`.
    package static func willMigrateHook(ofStage stage: String) -> String {
        stage + "WillMigrate"
    }

    /// The stage protocol's hook after a custom stage changed the tables: `<stage>DidMigrate`.
    package static func didMigrateHook(ofStage stage: String) -> String {
        stage + "DidMigrate"
    }

    /// The stage protocol's requirement for one obligation of a stage: the stage, the entity and
    /// the property joined as words, `parseRatingsBookRating`.
    package static func stageRequirement(ofStage stage: String, entity: String, property: String?) -> String {
        stage + upperFirst(entity) + upperFirst(property ?? "")
    }

    private static func upperFirst(_ text: String) -> String { text.prefix(1).uppercased() + text.dropFirst() }

    /// Sets each relationship's ID property, then reports every generated name that collides.
    static func check(_ graph: inout EntityGraph, diagnostics: inout DiagnosticSink) {
        // Every name declared in a hierarchy, by its root: the rule must name a relationship's ID
        // property the same in every record that holds it.
        // Parents by position and each entity's root, found once: linear however deep the chains.
        let parents = graph.entities.map { entity in entity.parent.flatMap(graph.position(of:)) }
        var rootPositions = [Int?](repeating: nil, count: parents.count)
        for start in parents.indices where rootPositions[start] == nil {
            var path = [start]
            var current = start
            while let parent = parents[current], rootPositions[parent] == nil, path.count <= parents.count {
                path.append(parent)
                current = parent
            }
            let root = parents[current].flatMap { rootPositions[$0] } ?? current
            for position in path { rootPositions[position] = root }
        }
        // Each entity's root by position: hierarchies are kept in arrays indexed by their root's
        // position, built once, not in dictionaries keyed by the root's name.
        let roots = rootPositions.indices.map { rootPositions[$0] ?? $0 }
        var declared = [Set<String>](repeating: [], count: roots.count)
        for (entity, root) in zip(graph.entities, roots) {
            for attribute in entity.attributes { declared[root].insert(attribute.name) }
            for relationship in entity.relationships { declared[root].insert(relationship.name) }
        }
        // Set on a copy, assigned once: each change to `graph.entities` rebuilds its index of positions.
        var entities = graph.entities
        for index in entities.indices {
            let root = roots[index]
            for relationship in entities[index].relationships.indices {
                let name = entities[index].relationships[relationship].name
                entities[index].relationships[relationship].idProperty =
                    idProperty(ofRelationship: name, taken: declared[root])
            }
        }
        graph.entities = entities
        checkSQLNames(graph, roots: roots, diagnostics: &diagnostics)
        // Each record's members are its lineage's: bounded by the inheritance depth, which is
        // checked before (a model over it has errors and is not checked further here).
        guard !diagnostics.hasErrors else { return }
        // Lowering is a later stage: the store itself is checked after resolving (`StoreCheck`).
        if mayBreakStore(graph, roots: roots) { graph.storeCheckDue = true }
        var reported: Set<Int> = []
        for index in graph.entities.indices {
            var lineage = [index]
            while let parent = parents[lineage[0]], lineage.count <= GraphBuilder.maximumInheritanceDepth {
                lineage.insert(parent, at: 0)
            }
            checkMembers(of: lineage, in: graph, reported: &reported, diagnostics: &diagnostics)
        }
    }

    /// Reports a generated member of `entity`'s record that another member of it already has,
    /// at the declaration that brought the second one.
    /// `lineage` holds the positions of the record's entity and its ancestors, root first.
    private static func checkMembers(
        of lineage: [Int], in graph: EntityGraph, reported: inout Set<Int>, diagnostics: inout DiagnosticSink
    ) {
        guard let last = lineage.last else { return }
        let entity = graph.entities[last]
        var members: [String: String] = [:]
        // Ancestors first: a name is reported where the later declaration is.
        for position in lineage {
            for attribute in graph.entities[position].attributes {
                members[attribute.name] = attribute.name
            }
            for relationship in graph.entities[position].relationships {
                members[relationship.name] = relationship.name
            }
        }
        for position in lineage {
            for relationship in graph.entities[position].relationships {
                let derived =
                    relationship.cardinality == .toOne
                    ? relationship.idProperty : requestProperty(ofRelationship: relationship.name)
                if let owner = members[derived] {
                    // Each relationship is reported once, however many records hold it.
                    guard reported.insert(relationship.range.start).inserted else { continue }
                    diagnostics.error(
                        "the relationship '\(relationship.name)' generates the Swift property '\(derived)', which '\(owner)' of \(entity.name) already generates; rename one of them",
                        at: relationship.range.start)
                } else {
                    members[derived] = relationship.name
                }
            }
        }
    }

    /// Reports names that differ only in letter case where SQL needs them apart, since SQLite
    /// compares names without case: the tables of two hierarchies, and two columns of one
    /// hierarchy's table (which also holds `id` and `_entity`). The same name in two entities of
    /// one hierarchy is one shared column, as the runtime lays it out.
    private static func checkSQLNames(_ graph: EntityGraph, roots: [Int], diagnostics: inout DiagnosticSink) {
        var tables: [String: String] = [:]
        for entity in graph.entities where entity.parent == nil {
            if let other = tables[entity.name.lowercased()], other != entity.name {
                diagnostics.error(
                    "'\(entity.name)' and '\(other)' would name one SQL table, since SQLite compares names without case; rename one",
                    at: entity.range.start)
            } else {
                tables[entity.name.lowercased()] = entity.name
            }
        }
        // Each hierarchy's columns by lowercased name, indexed by its root's position.
        var columns = [[String: String]](repeating: [:], count: roots.count)
        for root in Set(roots) { columns[root] = ["id": "id", "_entity": "_entity"] }
        for (entity, root) in zip(graph.entities, roots) {
            let properties =
                entity.attributes.map { ($0.name, $0.range) }
                + entity.relationships.filter { $0.cardinality == .toOne }.map { ($0.name, $0.range) }
            for (name, range) in properties {
                let key = name.lowercased()
                if let other = columns[root][key], other != name {
                    diagnostics.error(
                        "'\(name)' and '\(other)' would name one SQL column of \(graph.entities[root].name)'s table, since SQLite compares names without case; rename one",
                        at: range.start)
                } else {
                    columns[root][key] = name
                }
            }
        }
    }

    /// Whether the store's own check could find anything. It lowers the whole graph, so it runs
    /// only when a look that never misses finds a name that may be reserved, two join tables that
    /// may meet, a composite with fields equal without case, or a hierarchy that may reach the
    /// column limit (counting generously: a column and a position column per relationship).
    private static func mayBreakStore(_ graph: EntityGraph, roots: [Int]) -> Bool {
        var joinTables: Set<String> = []
        var columns = [Int](repeating: 0, count: roots.count)
        for root in Set(roots) { columns[root] = 2 }
        for (entity, root) in zip(graph.entities, roots) {
            if entity.parent == nil, StoreLimits.isReserved(tableName: entity.name) { return true }
            var count = 2 * entity.relationships.count
            for attribute in entity.attributes {
                guard case .composite(let composite) = attribute.type else {
                    count += 1
                    continue
                }
                count += composite.fields.count
            }
            columns[root] += count
            // A table or column name PostgreSQL would cut: the longest the entity's names make is
            // a join table's (`_Entity_relationship`), a composite field's (`attribute.field`) or a
            // position column's (`relationship._position`).
            let longest =
                (entity.attributes.map(\.name) + entity.relationships.map(\.name)).map(\.utf8.count).max() ?? 0
            let fields = entity.attributes.map { attribute -> Int in
                guard case .composite(let composite) = attribute.type else { return 0 }
                return attribute.name.utf8.count + 1 + (composite.fields.map(\.name.utf8.count).max() ?? 0)
            }
            if max(entity.name.utf8.count + 2, 10) + longest > StoreLimits.maximumNameBytes
                || (fields.max() ?? 0) > StoreLimits.maximumNameBytes
            {
                return true
            }
            // A join table is named after one of its sides: each side's name is a candidate.
            for relationship in entity.relationships where relationship.cardinality == .toMany {
                let name = "_\(entity.name)_\(relationship.name)"
                if StoreLimits.isReserved(tableName: name) || !joinTables.insert(name.lowercased()).inserted {
                    return true
                }
            }
        }
        // A searchable column FTS5 keeps, or two tables one of whose names is the other's and '_'
        // (their full-text indexes' tables may meet).
        let searchable = graph.entities.filter { !$0.searchableAttributes.isEmpty }
        if searchable.contains(where: { entity in
            entity.searchableAttributes.contains { StoreLimits.reservedSearchColumns.contains($0.lowercased()) }
        }) {
            return true
        }
        let rootNames = Set(roots.map { graph.entities[$0].name.lowercased() })
        if searchable.count > 1,
            rootNames.contains(where: { name in
                rootNames.contains { name.count > $0.count && name.hasPrefix($0 + "_") }
            })
        {
            return true
        }
        return columns.contains { $0 > StoreLimits.maximumColumns }
            || graph.composites.contains { Set($0.fields.map { $0.name.lowercased() }).count != $0.fields.count }
    }
}
