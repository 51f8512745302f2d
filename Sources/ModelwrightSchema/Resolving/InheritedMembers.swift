/// The properties visible in an entity — its own and every ancestor's — kept up to date while
/// the inheritance forest is walked depth first, so that checking an entity against what it
/// inherits costs only its own properties, not its ancestors' again.
///
/// Computing each entity's inherited properties afresh was quadratic in the depth of a chain of
/// parents (cubic with the lookups it made); with this walk a chain 10,000 deep is linear.
struct InheritedMembers {
    /// A property visible in the entity being visited.
    enum Member {
        case attribute(EntityGraph.Attribute)
        case relationship(EntityGraph.Relationship)
    }

    /// One step of the walk: entering an entity (its ancestors entered, not left) or leaving it.
    enum Step: Equatable {
        case enter(Int)
        case leave(Int)
    }

    /// The owners and properties visible under each name, outermost ancestor first.
    private var visible: [String: [(owner: String, member: Member)]] = [:]
    /// For each entity entered, the first attribute it sees, outermost ancestor first.
    private var firstAttributes: [String?] = []

    /// The entity that declares `name` nearest to the visited entity, among its ancestors and itself.
    func nearestOwner(of name: String) -> String? {
        visible[name]?.last?.owner
    }

    /// The property named `name` as `allAttributes`/`allRelationships` would find it first: the
    /// outermost ancestor's.
    func member(named name: String) -> Member? {
        visible[name]?.first?.member
    }

    /// How many values the visited entity's record stores: each attribute and to-one
    /// relationship, inherited ones included, a composite attribute counting its fields.
    private(set) var storedValues = 0

    /// Every name visible, for "did you mean" hints.
    var names: [String] { Array(visible.keys) }

    /// The first attribute the visited entity has, inherited ones first.
    var firstAttributeName: String? { firstAttributes.last ?? nil }

    /// Makes `entity`'s own properties visible, on top of its ancestors'.
    mutating func enter(_ entity: EntityGraph.Entity) {
        for attribute in entity.attributes {
            visible[attribute.name, default: []].append((entity.name, .attribute(attribute)))
        }
        for relationship in entity.relationships {
            visible[relationship.name, default: []].append((entity.name, .relationship(relationship)))
        }
        firstAttributes.append((firstAttributes.last ?? nil) ?? entity.attributes.first?.name)
        storedValues += Self.storedValues(of: entity)
    }

    /// The values `entity`'s own properties store.
    static func storedValues(of entity: EntityGraph.Entity) -> Int {
        let attributes = entity.attributes.reduce(0) { total, attribute in
            if case .composite(let composite) = attribute.type { return total + composite.fields.count }
            return total + 1
        }
        return attributes + entity.relationships.count { $0.cardinality == .toOne }
    }

    /// Hides `entity`'s own properties again, after it and its descendants were visited.
    mutating func leave(_ entity: EntityGraph.Entity) {
        for name in entity.attributes.map(\.name) + entity.relationships.map(\.name) {
            visible[name]?.removeLast()
            if visible[name]?.isEmpty == true { visible[name] = nil }
        }
        firstAttributes.removeLast()
        storedValues -= Self.storedValues(of: entity)
    }

    /// Every entity entered after its parent and left after its children, roots and children in
    /// declaration order. `parents` holds each entity's parent's position; an entity whose parent
    /// is missing, or that a cycle would make unreachable, is a root.
    static func walk(parents: [Int?]) -> [Step] {
        var children = [[Int]](repeating: [], count: parents.count)
        var roots: [Int] = []
        for (index, parent) in parents.enumerated() {
            if let parent, parent != index, parents.indices.contains(parent) {
                children[parent].append(index)
            } else {
                roots.append(index)
            }
        }
        var steps: [Step] = []
        steps.reserveCapacity(parents.count * 2)
        var entered = [Bool](repeating: false, count: parents.count)
        // An explicit stack, never recursion: a chain may be as deep as the file is long.
        func visit(_ root: Int) {
            var stack: [(entity: Int, nextChild: Int)] = [(root, 0)]
            entered[root] = true
            steps.append(.enter(root))
            while let top = stack.last {
                if top.nextChild < children[top.entity].count {
                    stack[stack.count - 1].nextChild += 1
                    let child = children[top.entity][top.nextChild]
                    guard !entered[child] else { continue }
                    entered[child] = true
                    steps.append(.enter(child))
                    stack.append((child, 0))
                } else {
                    steps.append(.leave(top.entity))
                    stack.removeLast()
                }
            }
        }
        for root in roots { visit(root) }
        // Entities on a cycle no root reaches (the builder breaks cycles first; this is a guard).
        for index in parents.indices where !entered[index] { visit(index) }
        return steps
    }
}
