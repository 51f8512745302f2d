extension SchemaLayout {
    /// The columns a request reads (see ``ReadSet``), plus those reached by `extraKeys`, such as a
    /// results controller's section key.
    func reads<Target: Record>(of request: FetchRequest<Target>, extraKeys: [ColumnPath] = []) throws -> ReadSet {
        let entity = try self.entity(Target.entityName)
        var reads = ReadSet()
        reads.read(["id"] + entity.columns.map(\.name), of: entity.table)
        if entity.hasDiscriminator { reads.read("_entity", of: entity.table) }
        if let condition = request.condition {
            try collectReads(of: condition, from: entity, into: &reads)
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

    private func collectReads(of condition: Condition, from entity: EntityLayout, into reads: inout ReadSet) throws {
        switch condition {
        case .constant: break
        case .comparison(let path, _, _), .inList(let path, _), .between(let path, _, _), .string(let path, _, _, _):
            try collectReads(of: path, from: entity, into: &reads)
        case .not(let operand):
            try collectReads(of: operand, from: entity, into: &reads)
        case .and(let operands), .or(let operands):
            for operand in operands { try collectReads(of: operand, from: entity, into: &reads) }
        case .quantified(let path, _, let operand):
            let destination = try collectReads(of: path, from: entity, into: &reads)
            try collectReads(of: operand, from: destination, into: &reads)
        case .count(let path, _, _):
            try collectReads(of: path, from: entity, into: &reads)
        }
    }

    /// Records a column reached through to-one hops: each hop's own column, and each destination's ID.
    private func collectReads(of path: ColumnPath, from entity: EntityLayout, into reads: inout ReadSet) throws {
        let last = try follow(path.hops, from: entity, into: &reads)
        reads.read(last.columnName(path.column), of: last.table)
    }

    /// Records a to-many relationship reached through to-one hops; returns its destination.
    @discardableResult
    private func collectReads(
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
