import Foundation

// The DDL that creates a PostgreSQL store's schema, and its names (see `PostgresDialect`).

extension PostgresDialect {
    /// PostgreSQL keeps the first 63 bytes of a name and silently drops the rest.
    package static let maximumNameLength = 63

    /// The most parameters a statement the store describes may have. The protocol counts them in 16
    /// bits (65,535), but libpq (15.18 measured) takes a message of another kind than rows and
    /// errors over 30,000 bytes as lost synchronization and drops the connection: the server's
    /// description of a statement's parameters takes 6 bytes plus 4 a parameter, so a statement of
    /// 7,499 or more loses the connection as it is described. Refused before anything is sent.
    package static let parameterLimit = (30_000 - 6) / 4

    /// Every statement that creates `schema` in an empty PostgreSQL schema, in order: the metadata
    /// table, a table per hierarchy and per join table (named and laid out by ``SchemaLayout``
    /// and ``SchemaSQL``, as on SQLite), then foreign keys (deferred to commit, as on SQLite; added
    /// after every table exists, since PostgreSQL resolves a reference when it is declared), then
    /// the indexes, the full-text indexes last (see `PostgresDialect+Search.swift`).
    ///
    /// Throws a ``PostgresValueError`` naming the entity when a table or column name is longer
    /// than PostgreSQL keeps (63 bytes); index names, which are the runtime's own, are shortened
    /// with a digest instead.
    package static func createStatements(for schema: SchemaDescription) throws -> [String] {
        let tables = try tableDefinitions(for: schema)
        let creates = tables.map { table in
            "CREATE TABLE \(table.quotedName) (\((table.columns.map(\.definition) + table.constraints).joined(separator: ", ")))"
        }
        let foreignKeys = tables.flatMap { $0.foreignKeys.map(\.statement) }
        let indexes = tables.flatMap { $0.indexes.map(\.statement) }
        let search = try SchemaSQL.searchIndexes(for: SchemaLayout(schema)).flatMap {
            try $0.create(in: PostgresDialect())
        }
        return [createMetadata] + creates + foreignKeys + indexes + search
    }

    /// The statement that creates the metadata table (version and checksum).
    package static let createMetadata =
        "CREATE TABLE \(SQLSyntax.identifier(SchemaSQL.metadataTable)) (\"key\" text PRIMARY KEY NOT NULL, \"value\" text NOT NULL)"

    /// One table of a schema as PostgreSQL spells it: each column's definition by name, the
    /// table constraints, and the foreign keys and indexes added after every table exists. The
    /// one owner of these spellings: ``createStatements(for:)`` and the migration renderer
    /// (``migrationStatements(from:to:operations:)``) both read them.
    package struct TableDefinition: Sendable {
        /// The table's name, unquoted.
        package let name: String
        /// The table's name, quoted.
        package let quotedName: String
        /// Each column, in `CREATE TABLE` order: its name and its definition.
        package var columns: [(name: String, definition: String)] = []
        /// Table constraints after the columns (a join table's primary key).
        package var constraints: [String] = []
        /// Each foreign key: the column it constrains, the constraint's name
        /// (``foreignKeyName(table:column:)``) and the `ALTER TABLE … ADD CONSTRAINT … FOREIGN KEY`.
        package var foreignKeys: [(column: String, name: String, statement: String)] = []
        /// Each index: its name and its `CREATE INDEX`.
        package var indexes: [(name: String, statement: String)] = []
    }

    /// Every table of `schema` (not the metadata table), in ``SchemaSQL``'s order.
    package static func tableDefinitions(for schema: SchemaDescription) throws -> [TableDefinition] {
        let layout = try SchemaLayout(schema)
        // Only the tables' names, column names and indexes are read here; the definitions are
        // spelled below, with the defaults and deferred foreign keys this engine needs.
        let tables = SchemaSQL.tables(for: layout, in: PostgresDialect())
        let attributes = attributesByColumn(schema)
        // Each table's columns, in SchemaSQL's order: the hierarchy's entities as the schema
        // lists them, each column once, then the position columns.
        var columns: [String: [ColumnLayout]] = [:]
        var positions: [String: [String]] = [:]
        for entity in schema.entities {
            guard let entityLayout = layout.entities[entity.name] else { continue }
            for column in entityLayout.columns
            where !(columns[entityLayout.table] ?? []).contains(where: { $0.name == column.name }) {
                columns[entityLayout.table, default: []].append(column)
            }
            for column in entityLayout.positionColumns where !(positions[entityLayout.table] ?? []).contains(column) {
                positions[entityLayout.table, default: []].append(column)
            }
        }
        _ = try name(SchemaSQL.metadataTable)
        var result: [TableDefinition] = []
        var indexNames: Set<String> = []
        for table in tables {
            let tableName = try name(table.name)
            var definition = TableDefinition(name: table.name, quotedName: tableName)
            if let relationship = table.relationship, let entity = relationship.split(separator: ".").first {
                let source = layout.entities[String(entity)]
                let destination = schema.entities.first { $0.name == String(entity) }?.relationships
                    .first { "\(entity).\($0.name)" == relationship }
                    .flatMap { layout.entities[$0.destination] }
                definition.columns.append(("source", "\"source\" uuid NOT NULL"))
                definition.columns.append(("destination", "\"destination\" uuid NOT NULL"))
                if table.columns["position"] != nil {
                    definition.columns.append(("position", "\"position\" bigint NOT NULL DEFAULT 0"))
                }
                definition.constraints.append("PRIMARY KEY (\"source\", \"destination\")")
                for (column, target) in [("source", source), ("destination", destination)] {
                    guard let target else { continue }
                    let key = foreignKeyName(table: table.name, column: column)
                    definition.foreignKeys.append(
                        (
                            column, key,
                            "ALTER TABLE \(tableName) ADD CONSTRAINT \(SQLSyntax.identifier(key)) "
                                + "FOREIGN KEY (\"\(column)\") REFERENCES \(try name(target.table))(\"id\") ON DELETE CASCADE"
                        ))
                }
            } else {
                let rootColumns = Set((layout.entities[table.name]?.columns ?? []).map(\.name))
                definition.columns.append(("id", "\"id\" uuid PRIMARY KEY NOT NULL"))
                if table.columns["_entity"] != nil {
                    definition.columns.append(("_entity", "\"_entity\" text NOT NULL"))
                }
                for column in columns[table.name] ?? [] {
                    let columnName = try name(column.name, of: table.name)
                    var text = "\(columnName) \(columnType(of: column.type).rawValue)"
                    // Only the root's own columns hold a value in every row of the table.
                    if rootColumns.contains(column.name) && !column.isOptional { text += " NOT NULL" }
                    if let attribute = attributes[ColumnKey(entity: column.declaringEntity, key: column.key)],
                        let value = attribute.defaultValue
                    {
                        if let literal = try literal(value, for: attribute.type, attribute: attribute.name) {
                            text += " DEFAULT " + literal
                        }
                    }
                    if let target = column.references {
                        let key = foreignKeyName(table: table.name, column: column.name)
                        definition.foreignKeys.append(
                            (
                                column.name, key,
                                "ALTER TABLE \(tableName) ADD CONSTRAINT \(SQLSyntax.identifier(key)) "
                                    + "FOREIGN KEY (\(columnName)) REFERENCES \(try name(target))(\"id\") "
                                    + "DEFERRABLE INITIALLY DEFERRED"
                            ))
                    }
                    definition.columns.append((column.name, text))
                }
                for column in positions[table.name] ?? [] {
                    definition.columns.append((column, "\(try name(column, of: table.name)) bigint"))
                }
            }
            for index in table.indexes {
                let indexName = shortened(index.name, avoiding: &indexNames)
                let list = try index.columns.map { try name($0, of: table.name) }.joined(separator: ", ")
                definition.indexes.append(
                    (
                        indexName,
                        "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(SQLSyntax.identifier(indexName)) "
                            + "ON \(tableName) (\(list))"
                    ))
            }
            result.append(definition)
        }
        return result
    }

    /// The attribute (or composite field, with its own type and default) behind each column.
    private struct ColumnKey: Hashable {
        let entity: String
        let key: String
    }

    private static func attributesByColumn(_ schema: SchemaDescription) -> [ColumnKey: AttributeDescription] {
        var result: [ColumnKey: AttributeDescription] = [:]
        for entity in schema.entities {
            for attribute in entity.attributes {
                if case .composite(let composite) = attribute.type {
                    for field in composite.fields {
                        let key = SchemaLayout.compositeColumn(attribute: attribute.name, field: field.name)
                        result[ColumnKey(entity: entity.name, key: key)] = field
                    }
                } else {
                    result[ColumnKey(entity: entity.name, key: attribute.name)] = attribute
                }
            }
        }
        return result
    }

    /// A table or column name, quoted; throws when PostgreSQL could not keep it whole or hold it.
    private static func name(_ text: String, of owner: String? = nil) throws -> String {
        guard !text.utf8.contains(0) else {
            throw PostgresValueError("the name '\(text.debugDescription)' holds a NUL byte, which PostgreSQL refuses")
        }
        guard text.utf8.count <= maximumNameLength else {
            let place = owner.map { " in '\($0)'" } ?? ""
            throw PostgresValueError(
                "the name '\(text)'\(place) is \(text.utf8.count) bytes long; PostgreSQL keeps only the first "
                    + "\(maximumNameLength): rename it (keeping its data with @renamed) to at most \(maximumNameLength) bytes"
            )
        }
        return SQLSyntax.identifier(text)
    }

    /// An index name PostgreSQL keeps whole: a longer one becomes its first bytes and a digest of
    /// the whole, so two long names that share a beginning stay apart.
    /// The name of the foreign key on `column` of `table`: PostgreSQL's own `<table>_<column>_fkey`
    /// when it fits in 63 bytes, which PostgreSQL would otherwise cut where it likes; else the
    /// first bytes of it (on a character boundary) and a digest of the table and column, so two
    /// long names never meet. It depends on the table and column alone, so the migration renderer
    /// finds the name a key was created with from the version that created it.
    package static func foreignKeyName(table: String, column: String) -> String {
        let full = "\(table)_\(column)_fkey"
        guard full.utf8.count > maximumNameLength else { return full }
        let digest = String(SHA256.hexDigest(of: Array("\(table)\u{0}\(column)".utf8)).prefix(12))
        return leadingBytes(of: full, count: maximumNameLength - 18) + "_" + digest + "_fkey"
    }

    /// The longest start of `text` of at most `count` UTF-8 bytes that ends on a character boundary.
    static func leadingBytes(of text: String, count: Int) -> String {
        var result = ""
        for character in text.unicodeScalars {
            guard result.utf8.count + String(character).utf8.count <= count else { break }
            result.unicodeScalars.append(character)
        }
        return result
    }

    /// `text` when PostgreSQL keeps it whole, else its first bytes (on a character boundary) and a
    /// digest of the whole, 63 bytes at most.
    static func shortened(_ text: String) -> String {
        guard text.utf8.count > maximumNameLength else { return text }
        let digest = String(SHA256.hexDigest(of: Array(text.utf8)).prefix(12))
        return leadingBytes(of: text, count: maximumNameLength - 13) + "_" + digest
    }

    private static func shortened(_ text: String, avoiding taken: inout Set<String>) -> String {
        var result = shortened(text)
        var suffix = 2
        let base = result
        while !taken.insert(result).inserted {
            result = "\(base.prefix(maximumNameLength - 4))_\(suffix)"
            suffix += 1
        }
        return result
    }

    /// A default value as a PostgreSQL constant of the column's type, or `nil` for `now`, which
    /// the runtime fills in as on SQLite.
    package static func literal(_ value: DefaultValue, for type: AttributeType, attribute: String) throws -> String? {
        func text(_ string: String) throws -> String {
            guard !string.utf8.contains(0) else {
                throw PostgresValueError("the default of '\(attribute)' holds a NUL byte, which PostgreSQL text cannot")
            }
            return SQLSyntax.string(string)
        }
        switch value {
        case .now:
            return nil
        case .bool(let flag):
            return flag ? "true" : "false"
        case .integer(let integer):
            switch type {
            case .double, .float: return try floatingPoint(Double(integer), for: type)
            case .decimal: return "\(integer)::numeric"
            default: return String(integer)
            }
        case .floatingPoint(let double):
            return try floatingPoint(double, for: type)
        case .decimal(let string):
            guard let decimal = Decimal(string: string, locale: Locale(identifier: "en_US_POSIX")), !decimal.isNaN
            else {
                throw PostgresValueError("the default of '\(attribute)' is not a decimal number: \(string)")
            }
            return "\(try text("\(decimal)"))::numeric"
        case .string(let string):
            switch type {
            case .uuid:
                guard let uuid = UUID(uuidString: string) else { return try text(string) }
                return "'\(uuid.uuidString.lowercased())'::uuid"
            case .data:
                return "'\\x" + string.utf8.map { String(format: "%02x", $0) }.joined() + "'::bytea"
            default:
                return try text(string)
            }
        case .date(let secondsSince1970):
            let microseconds = try microseconds(
                sinceReferenceDate: secondsSince1970 - Date.timeIntervalBetween1970AndReferenceDate)
            return "'\(timestampText(microseconds: microseconds))'::timestamptz"
        case .enumCase(let name):
            guard case .enumeration(let description) = type,
                let match = description.cases.first(where: { $0.name == name })
            else { return try text(name) }
            guard description.rawType == .int else { return try text(match.rawValue) }
            guard let raw = Int64(match.rawValue) else {
                throw PostgresValueError("the raw value of '\(name)' is not an integer: \(match.rawValue)")
            }
            return String(raw)
        }
    }

    private static func floatingPoint(_ value: Double, for type: AttributeType) throws -> String {
        guard !value.isNaN else { throw PostgresValueError("a NaN default cannot be stored") }
        if value.isInfinite { return value < 0 ? "'-Infinity'" : "'Infinity'" }
        // Swift prints the shortest text that reads back as the same value; PostgreSQL reads it
        // with strtod, exactly. A Float is printed as a Float, so `real` gets that value.
        let text = type == .float ? "\(Float(value))" : "\(value)"
        return "'\(text)'::\(columnType(of: type).rawValue)"
    }
}
