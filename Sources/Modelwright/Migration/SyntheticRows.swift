import Foundation

/// Rows that give every column of a version a value, extreme ones first, so that the migration
/// check tools run before any store exists (the "shadow" stage) tests values, not only tables: a
/// step that would leave a value the next version cannot read fails there, at generation time.
///
/// Each concrete entity gets two rows: one with every column set to an extreme of its type
/// (the least integer, a string of quotes and line ends, a required relationship's target), and
/// one with every optional column `NULL` and every required one a different value. Rows that a
/// uniqueness constraint refuses are left out. Join tables link every row of their owner to
/// every row of the destination.
enum SyntheticRows {
    static func insert(for layout: SchemaLayout, into connection: some DatabaseConnection) throws {
        let entities = layout.schema.entities.compactMap { layout.entities[$0.name] }.filter { !$0.isAbstract }
        // The first row of each concrete entity is what a required relationship to it points at.
        var firstRow: [String: SQLValue] = [:]
        for (number, entity) in entities.enumerated() {
            firstRow[entity.name] = ScalarType.syntheticID(number, 0)
        }
        for (number, entity) in entities.enumerated() {
            for row in 0..<2 {
                var names = ["\"id\""]
                var values = [ScalarType.syntheticID(number, row)]
                if entity.hasDiscriminator {
                    names.append("\"_entity\"")
                    values.append(.text(entity.name))
                }
                for column in entity.columns {
                    names.append(quoted(column.name))
                    values.append(
                        value(for: column, row: row, number: number, entity: entity, layout: layout, firstRow: firstRow)
                    )
                }
                for position in entity.positionColumns {
                    names.append(quoted(position))
                    values.append(.integer(Int64(row)))
                }
                let dialect = connection.dialect
                let statement = try connection.prepare(
                    dialect.insertIgnoringConflicts(
                        into: quoted(entity.table), columns: names, "VALUES (\(dialect.parameters(values.count)))"))
                for (index, value) in values.enumerated() { statement.bind(value, Int32(index + 1)) }
                try statement.run()
            }
        }
        try link(layout, connection)
    }

    /// Fills every join table (many-to-many relationships, to-many ones without an inverse),
    /// from the side that owns it: each row of the entity (its sub-entities' rows included)
    /// links every row of the destination, in ID order where the relationship is ordered.
    private static func link(_ layout: SchemaLayout, _ connection: some DatabaseConnection) throws {
        for entity in layout.schema.entities {
            guard let source = layout.entities[entity.name] else { continue }
            for relationship in entity.relationships where relationship.cardinality == .toMany {
                guard
                    case .joinTable(let table, "source", _, let position)? = try? layout.storage(
                        of: relationship, from: source),
                    let destination = layout.entities[relationship.destination]
                else { continue }
                let conditions = [source.discriminatorSQL(alias: "s"), destination.discriminatorSQL(alias: "d")]
                    .compactMap { $0 }
                let filter = conditions.isEmpty ? "" : " WHERE " + conditions.joined(separator: " AND ")
                let place =
                    position == nil ? "" : ", row_number() OVER (PARTITION BY s.\"id\" ORDER BY d.\"id\") - 1"
                try connection.execute(
                    connection.dialect.insertIgnoringConflicts(
                        into: quoted(table),
                        columns: ["\"source\"", "\"destination\""] + (position == nil ? [] : ["\"position\""]),
                        "SELECT s.\"id\", d.\"id\"\(place) FROM \(quoted(source.table)) AS s, \(quoted(destination.table)) AS d\(filter)"
                    ))
            }
        }
    }

    /// What a stub of the app's code gives `column` of the `row`th row of `entity`, found during a
    /// custom stage: what an app may return, so that a step the stubs get through never fails on
    /// the app's values. Rows take turns: an extreme of the column's type, an ordinary value, and
    /// `NULL` where the column is optional (else another ordinary value); each differs from row to
    /// row (so a uniqueness constraint holds). A to-one relationship gets the ID of a row of its
    /// destination; a required one whose destination has no row yet (an entity split off into a
    /// new one) gets a new destination row for each row, as the app's stage would create it.
    static func stub(
        for column: ColumnLayout, row: Int, of entity: EntityLayout, in layout: SchemaLayout,
        connection: some DatabaseConnection, depth: Int = 0
    ) throws -> SQLValue {
        guard let type = column.type else {
            let destination = entity.relationships.first { $0.name == column.property }
                .flatMap { layout.entities[$0.destination] }
            guard let destination, !(column.isOptional && row % 3 == 2) else { return .null }
            let filter = destination.discriminatorSQL(alias: "t0").map { " WHERE " + $0 } ?? ""
            let statement = try connection.prepare(
                "SELECT t0.\"id\" FROM \(quoted(destination.table)) AS t0\(filter) ORDER BY t0.\"id\" LIMIT 1")
            if try statement.step() { return statement.value(0) }
            guard !column.isOptional else { return .null }
            return try newRow(of: destination, row: row, in: layout, connection: connection, depth: depth)
        }
        if column.isOptional && row % 3 == 2 { return .null }
        let extreme = row % 3 == 0
        let tag = "\(entity.name) stub \(row)"
        switch type.kind {
        case .scalar(let scalar): return scalar.synthetic(row, extreme, tag, true)
        case .enumeration(let description) where !description.cases.isEmpty:
            let enumCase = description.cases[row % description.cases.count]
            return description.rawType == .int
                ? Int64(enumCase.rawValue).map(SQLValue.integer) ?? .text(enumCase.rawValue) : .text(enumCase.rawValue)
        default:
            return value(
                for: column, row: extreme ? 0 : 1, number: row, entity: entity, layout: layout, firstRow: [:],
                allowsNull: false)
        }
    }

    /// Inserts a row of a concrete entity of `destination` with stub values (its own required
    /// to-ones pointing at rows that exist, or at new ones, a few levels deep) and returns its ID;
    /// `NULL` when no row can be made.
    private static func newRow(
        of destination: EntityLayout, row: Int, in layout: SchemaLayout, connection: some DatabaseConnection, depth: Int
    ) throws -> SQLValue {
        let concrete = destination.entityNames.lazy.compactMap { layout.entities[$0] }.first { !$0.isAbstract }
        guard let concrete, depth < 4 else { return .null }
        // An ID no synthetic row has (theirs have zeros between the entity's number and the row):
        // a marker byte, the row and the depth.
        var bytes = [UInt8](repeating: 0, count: 16)
        withUnsafeBytes(of: UInt64(truncatingIfNeeded: row).bigEndian) { bytes.replaceSubrange(7..<15, with: $0) }
        bytes[0] = 0xFF
        bytes[15] = UInt8(depth)
        let id = SQLValue.blob(Data(bytes))
        var names = ["\"id\""]
        var values = [id]
        if concrete.hasDiscriminator {
            names.append("\"_entity\"")
            values.append(.text(concrete.name))
        }
        for column in concrete.columns {
            names.append(quoted(column.name))
            values.append(
                try stub(for: column, row: row, of: concrete, in: layout, connection: connection, depth: depth + 1))
        }
        let statement = try connection.prepare(
            "INSERT INTO \(quoted(concrete.table)) (\(names.joined(separator: ", "))) "
                + "VALUES (\(connection.dialect.parameters(values.count)))")
        for (index, value) in values.enumerated() { statement.bind(value, Int32(index + 1)) }
        try statement.run()
        return id
    }

    private static func value(
        for column: ColumnLayout, row: Int, number: Int, entity: EntityLayout, layout: SchemaLayout,
        firstRow: [String: SQLValue], allowsNull: Bool = true
    ) -> SQLValue {
        if allowsNull && column.isOptional && row == 1 { return .null }
        guard let type = column.type else {
            // A to-one relationship: the first row of a concrete entity of its destination.
            let destination = entity.relationships.first { $0.name == column.property }?.destination
            let family = destination.flatMap { layout.entities[$0]?.entityNames } ?? []
            return family.lazy.compactMap { firstRow[$0] }.first ?? .null
        }
        let tag = "\(entity.name)\(row)"
        let extreme = row == 0
        switch type.kind {
        case .scalar(let scalar): return scalar.synthetic(number, extreme, tag, false)
        case .codable(let typeName): return .text(json(for: typeName))
        case .composite: return .text(tag)
        case .enumeration(let description):
            guard let enumCase = extreme ? description.cases.first : description.cases.last else { return .null }
            return description.rawType == .int
                ? Int64(enumCase.rawValue).map(SQLValue.integer) ?? .text(enumCase.rawValue) : .text(enumCase.rawValue)
        }
    }

    /// JSON that a value of the Swift type `typeName` decodes from, for the standard types; `null`
    /// (which only an optional decodes) for the app's own types.
    static func json(for typeName: String) -> String {
        let name = typeName.filter { $0 != " " }
        if name.hasPrefix("[") { return name.contains(":") ? "{}" : "[]" }
        if name.hasPrefix("Set<") || name.hasPrefix("Array<") { return "[]" }
        if name.hasPrefix("Dictionary<") { return "{}" }
        switch name {
        case "String": return "\"\""
        case "Bool": return "false"
        case "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Double", "Float",
            "Date", "Decimal":
            return "0"
        case "Data": return "\"\""
        case "URL": return "\"https://example.com\""
        case "UUID": return "\"00000000-0000-0000-0000-000000000000\""
        default: return "null"
        }
    }
}
