/// Where one Core Data model version keeps its objects in a SQLite store (`coredata-store-format.md`,
/// §3–§6): entity ids, one table per root entity, and the column of every attribute and relationship.
///
/// Computed from the version alone, so the store importer reads and the test-store writer writes by
/// the same rules.
struct CoreDataStoreLayout {
    /// One entity's place.
    struct Entity {
        /// The model's entity.
        var entity: CoreDataStoreModel.Entity
        /// Its `Z_ENT`.
        var id: Int
        /// Its root entity's name.
        var root: String
        /// Its root's table, `Z` + the root's name in upper case.
        var table: String
        /// Whether it has subentities: a to-one into it then has an entity column too.
        var hasSubentities: Bool
        /// Its stored attributes, inherited ones first, with their columns.
        var attributes: [(attribute: CoreDataStoreModel.Attribute, column: String)]
        /// Its relationships, inherited ones first, with the entity that declares each.
        var relationships: [(relationship: CoreDataStoreModel.Relationship, owner: String)]
    }

    /// Where a relationship's links are, as Core Data stores them.
    enum LinkStorage: Equatable {
        /// A foreign key in the source's table (`ZOWNER`), an entity column when the destination has
        /// subentities (`Z5_OWNER`), and an order column when the inverse is ordered (`Z_FOK_OWNER`).
        case foreignKey(column: String, entityColumn: String?, orderColumn: String?)
        /// A to-many whose inverse is a to-one: the inverse's foreign key, in the destination's table.
        case inverseForeignKey(inverse: String)
        /// A to-many without an inverse: a "virtual to-one" column in the destination's table.
        case virtualForeignKey(column: String, orderColumn: String?)
        /// A many-to-many join table: one of two candidate names, the column of the source's key,
        /// the column of the destination's key, and the order of the destinations when ordered.
        case joinTable(candidates: [String], source: String, destination: String, order: String?)
    }

    /// Every entity, by name.
    private(set) var entities: [String: Entity] = [:]
    /// Entity names by `Z_ENT`.
    private(set) var names: [Int: String] = [:]
    /// Root entity names, in id order.
    private(set) var roots: [String] = []

    init(_ version: CoreDataStoreModel.Version) {
        var byName: [String: CoreDataStoreModel.Entity] = [:]
        for entity in version.entities where byName[entity.name] == nil { byName[entity.name] = entity }
        var children: [String: [String]] = [:]
        var rootNames: [String] = []
        for entity in byName.values {
            if let parent = entity.parent, byName[parent] != nil, parent != entity.name {
                children[parent, default: []].append(entity.name)
            } else {
                rootNames.append(entity.name)
            }
        }
        // Root entities and subentities are numbered from 1, depth first, each level sorted by name
        // without case (`caseInsensitiveCompare:`), ties by code unit so the order is total.
        let order = { (lhs: String, rhs: String) -> Bool in
            let left = lhs.lowercased()
            let right = rhs.lowercased()
            return left == right
                ? CoreDataVersionHashes.coreDataOrder(lhs, rhs) : left.utf16.lexicographicallyPrecedes(right.utf16)
        }
        var nextID = 1
        var visited: Set<String> = []
        for root in rootNames.sorted(by: order) {
            roots.append(root)
            var columnsTaken: Set<String> = ["Z_PK", "Z_ENT", "Z_OPT"]
            var stack:
                [(
                    name: String, inherited: [(CoreDataStoreModel.Attribute, String)],
                    relationships: [(CoreDataStoreModel.Relationship, String)]
                )] = [(root, [], [])]
            while let (name, inherited, inheritedRelationships) = stack.popLast() {
                guard visited.insert(name).inserted, let entity = byName[name] else { continue }
                var attributes = inherited
                for attribute in entity.attributes.sorted(by: { order($0.name, $1.name) }) where !attribute.isTransient
                {
                    attributes.append((attribute, Self.claim("Z" + attribute.name.uppercased(), in: &columnsTaken)))
                }
                let relationships =
                    inheritedRelationships + entity.relationships.filter { !$0.isTransient }.map { ($0, name) }
                let kids = (children[name] ?? []).sorted(by: order)
                entities[name] = Entity(
                    entity: entity, id: nextID, root: root, table: "Z" + root.uppercased(),
                    hasSubentities: !kids.isEmpty, attributes: attributes, relationships: relationships)
                names[nextID] = name
                nextID += 1
                for kid in kids.reversed() { stack.append((kid, attributes, relationships)) }
            }
        }
    }

    /// `name`, or with the first numeric suffix no other column of the table has.
    private static func claim(_ name: String, in taken: inout Set<String>) -> String {
        var candidate = name
        var suffix = 1
        while taken.contains(candidate) {
            candidate = name + String(suffix)
            suffix += 1
        }
        taken.insert(candidate)
        return candidate
    }

    /// Where the links of `relationship`, declared by `owner`, are stored.
    func storage(of relationship: CoreDataStoreModel.Relationship, owner: String) -> LinkStorage? {
        guard let source = entities[owner], let destination = entities[relationship.destination] else { return nil }
        let name = relationship.name.uppercased()
        let inverse = relationship.inverse.flatMap { inverseName in
            destination.relationships.first { $0.relationship.name == inverseName && !$0.relationship.isTransient }
        }
        if !relationship.isToMany {
            let orderColumn =
                inverse.map { $0.relationship.isToMany && $0.relationship.isOrdered } == true ? "Z_FOK_" + name : nil
            return .foreignKey(
                column: "Z" + name, entityColumn: destination.hasSubentities ? "Z\(destination.id)_\(name)" : nil,
                orderColumn: orderColumn)
        }
        guard let inverse else {
            return .virtualForeignKey(
                column: "Z\(source.id)\(name)", orderColumn: relationship.isOrdered ? "Z_FOK_\(source.id)\(name)" : nil)
        }
        guard inverse.relationship.isToMany else { return .inverseForeignKey(inverse: inverse.relationship.name) }
        guard let inverseOwner = entities[inverse.owner] else { return nil }
        let inverseName = inverse.relationship.name.uppercased()
        if inverse.relationship.name == relationship.name && inverse.owner == owner {
            return .joinTable(
                candidates: ["Z_\(source.id)\(name)"], source: "Z_\(source.id)\(name)", destination: "REFLEXIVE",
                order: relationship.isOrdered ? "FOK_REFLEXIVE" : nil)
        }
        // The column holding X's key is named after X's id and the relationship whose destination is X.
        let sourceColumn = "Z_\(source.id)\(inverseName)"
        let destinationColumn = "Z_\(destination.id)\(name)"
        let candidates =
            source.id <= inverseOwner.id
            ? ["Z_\(source.id)\(name)", "Z_\(inverseOwner.id)\(inverseName)"]
            : ["Z_\(inverseOwner.id)\(inverseName)", "Z_\(source.id)\(name)"]
        return .joinTable(
            candidates: candidates, source: sourceColumn, destination: destinationColumn,
            order: relationship.isOrdered ? "Z_FOK_\(destination.id)\(name)" : nil)
    }
}
