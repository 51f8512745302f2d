extension SchemaLayout {
    /// The columns a request reads (see ``ReadSet``), plus those reached by `extraKeys`, such as a
    /// results controller's section key.
    func reads<Target: Record>(of request: FetchRequest<Target>, extraKeys: [ColumnPath] = []) throws -> ReadSet {
        let entity = try self.entity(Target.entityName)
        var reads = ReadSet()
        reads.read(["id"] + entity.columns.map(\.name), of: entity.table)
        if entity.hasDiscriminator { reads.read("_entity", of: entity.table) }
        if let condition = request.condition {
            var collector = ConditionReads(layout: self, reads: reads)
            try condition.accept(&collector, in: entity)
            reads = collector.reads
        }
        for path in request.sortKeys.map(\.path) + extraKeys {
            try collectReads(of: path, from: entity, into: &reads)
        }
        if let scope = request.scope {
            let owner = try self.entity(scope.entity)
            let (relationship, _) = try destination(of: scope.relationship, from: owner)
            try collectReads(of: relationship, from: owner, to: entity, into: &reads)
        }
        if request.sortKeys.isEmpty, let sort = schema.entity(named: entity.name)?.defaultSort {
            reads.read(sort.map { entity.columnName($0.attribute) }, of: entity.table)
        }
        return reads
    }

    /// Records a column reached through to-one hops: each hop's own column, and each destination's ID.
    fileprivate func collectReads(of path: ColumnPath, from entity: EntityLayout, into reads: inout ReadSet) throws {
        let last = try follow(path.hops, from: entity, into: &reads)
        reads.read(last.columnName(path.column), of: last.table)
    }

    /// Records a to-many relationship reached through to-one hops; returns its destination.
    @discardableResult
    fileprivate func collectReads(
        of path: RelationshipPath, from entity: EntityLayout, into reads: inout ReadSet
    ) throws -> EntityLayout {
        let last = try follow(path.hops, from: entity, into: &reads)
        let (relationship, destination) = try self.destination(of: path.relationship, from: last)
        try collectReads(of: relationship, from: last, to: destination, into: &reads)
        return destination
    }

    /// Records how a to-many relationship links its source to `destination`: the inverse column
    /// (and position) on the destination, or the join table.
    private func collectReads(
        of relationship: RelationshipDescription, from source: EntityLayout, to destination: EntityLayout,
        into reads: inout ReadSet
    ) throws {
        reads.read("id", of: destination.table)
        if destination.hasDiscriminator { reads.read("_entity", of: destination.table) }
        switch try storage(of: relationship, from: source) {
        case .inverseColumn(let inverse, let position):
            reads.read([inverse] + (position.map { [$0] } ?? []), of: destination.table)
        case .joinTable(let table, let sourceColumn, let destinationColumn, let position):
            reads.read([sourceColumn, destinationColumn] + (position.map { [$0] } ?? []), of: table)
        }
    }

    /// Records what a prefetched relationship reads (see ``PrefetchRequest``), reached from
    /// `parent` through to-one `hops`: the hops' columns, the relationship's link and every column
    /// of its destination, which it returns.
    func collectReads(
        ofIncluded name: String, through hops: [String], from parent: EntityLayout, into reads: inout ReadSet
    ) throws -> EntityLayout {
        let last = try follow(hops, from: parent, into: &reads)
        let (relationship, destination) = try self.destination(of: name, from: last)
        if relationship.cardinality == .toOne {
            reads.read(last.columnName(name), of: last.table)
        } else {
            try collectReads(of: relationship, from: last, to: destination, into: &reads)
        }
        reads.read(["id"] + destination.columns.map(\.name), of: destination.table)
        if destination.hasDiscriminator { reads.read("_entity", of: destination.table) }
        return destination
    }

    private func follow(_ hops: [String], from entity: EntityLayout, into reads: inout ReadSet) throws -> EntityLayout {
        var current = entity
        for hop in hops {
            reads.read(current.columnName(hop), of: current.table)
            current = try destination(of: hop, from: current).1
            reads.read("id", of: current.table)
            if current.hasDiscriminator { reads.read("_entity", of: current.table) }
        }
        return current
    }
}

/// The columns a condition reads: each leaf's column or relationship, reached from the entity its
/// quantifiers put it on. Operators do not matter, only paths, so every leaf is read alike.
private struct ConditionReads: UniformLeafVisitor {
    typealias Output = Void
    typealias Scope = EntityLayout
    typealias Frame = Void
    typealias Failure = any Error

    let layout: SchemaLayout
    var reads: ReadSet

    mutating func leaf(_ leaf: Condition, in entity: EntityLayout) throws {
        switch leaf.testedPath {
        case .column(let path): try layout.collectReads(of: path, from: entity, into: &reads)
        case .relationship(let path): try layout.collectReads(of: path, from: entity, into: &reads)
        case nil: break
        }
    }

    mutating func not(_ operand: Void, in entity: EntityLayout) {}
    mutating func and(_ operands: [Void], in entity: EntityLayout) {}
    mutating func or(_ operands: [Void], in entity: EntityLayout) {}

    mutating func enter(_ path: RelationshipPath, in entity: EntityLayout) throws -> (scope: EntityLayout, frame: Void)
    {
        (try layout.collectReads(of: path, from: entity, into: &reads), ())
    }

    mutating func quantified(_ quantifier: Quantifier, _ operand: Void, frame: Void, in entity: EntityLayout) {}
}
