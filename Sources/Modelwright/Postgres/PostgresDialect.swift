import Foundation

// Over 900 lines: three parts, marked below, each its own file when split (values and dates;
// `+Schema`, the DDL that creates a schema and its names; `+SQLDialect`, the statements the store
// issues). The parts share file-private helpers (name lengths and digests, literals), which the
// split opens to the module; and the PostgreSQL branches of a wave edit this file in parallel, so
// the move (no change of logic) comes first after a wave's merge, as `Migrator.swift`'s does.

/// PostgreSQL's spelling of a store: the column type of each attribute type, how a `Date` becomes
/// microseconds, and the DDL that creates a schema (issue 27).
///
/// It lives in the runtime because the runtime owns all SQL and the layout (``SchemaLayout``
/// names every table and column; this file only spells them for PostgreSQL), and it is `package`
/// because only `ModelwrightPostgres` calls it. It needs no libpq: rendering SQL is plain Swift.
///
/// A value of it is the runtime's ``SQLDialect`` for PostgreSQL (see "SQLDialect" below): every
/// statement the store issues, spelled for that engine. Where PostgreSQL has no equivalent of
/// something SQLite offers (a row number, `data_version`, a foreign-key check query), the
/// requirement throws ``SQLDialectError/unsupported(_:)`` saying what stands in for it.
package struct PostgresDialect: Sendable {
    /// The dialect value a PostgreSQL connection hands the runtime.
    package init() {}

    /// The PostgreSQL column types a store uses, each chosen so a value round-trips exactly.
    package enum ColumnType: String, Sendable, CaseIterable {
        case boolean
        case smallint
        case integer
        case bigint
        case doublePrecision = "double precision"
        case real
        case numeric
        case text
        case timestamptz
        case bytea
        case uuid
        case jsonb
    }

    /// The column type of an attribute type; `nil` stands for a record ID (the `id` column and
    /// to-one relationships), which is a `uuid`.
    package static func columnType(of type: AttributeType?) -> ColumnType {
        guard let type else { return .uuid }
        // A composite is one column per field; one nested inside another is stored as the runtime
        // encodes it, as text, kept byte for byte.
        if case .composite = type { return .text }
        return switch SchemaLayout.storage(of: type) {
        case .boolean: .boolean
        case .integer16: .smallint
        case .integer32: .integer
        case .integer64: .bigint
        case .double: .doublePrecision
        case .float: .real
        case .decimal: .numeric
        case .text: .text
        case .timestamp: .timestamptz
        case .bytes: .bytea
        case .uuid: .uuid
        case .json: .jsonb
        }
    }

    // MARK: - Dates

    /// Seconds from PostgreSQL's epoch (2000-01-01) to `Date`'s reference date (2001-01-01).
    private static let epochOffset: Int64 = 31_622_400
    /// The first and last microsecond PostgreSQL's `timestamptz` holds (4713 BC to 294276 AD);
    /// `Int64.min` and `Int64.max` themselves stand for `-infinity` and `infinity`.
    package static let microsecondRange: ClosedRange<Int64> = -211_813_488_000_000_000...9_223_371_331_199_999_999

    /// A `Date` (seconds since 2001-01-01) as PostgreSQL's `timestamptz`: microseconds since
    /// 2000-01-01, rounded to the nearest microsecond, halfway cases to even, computed exactly
    /// (never through a rounded product). Infinities become PostgreSQL's `infinity` and
    /// `-infinity`. Throws for NaN and for dates outside 4713 BC … 294276 AD.
    package static func microseconds(sinceReferenceDate seconds: Double) throws -> Int64 {
        guard !seconds.isNaN else { throw PostgresValueError("a NaN date cannot be stored") }
        if seconds.isInfinite { return seconds < 0 ? .min : .max }
        guard let rounded = microsecondsRoundedToEven(seconds), let shifted = addingEpoch(rounded),
            microsecondRange.contains(shifted)
        else {
            throw PostgresValueError(
                "the date \(seconds) seconds after 2001-01-01 is outside PostgreSQL's timestamptz range "
                    + "(4713 BC to 294276 AD)")
        }
        return shifted
    }

    /// The `Date` interval (seconds since 2001-01-01) nearest to `microseconds` since 2000-01-01.
    /// A date read back equals the date written whenever that date is a whole number of
    /// microseconds or lies more than about 272 years from 2001 (where `Double` spacing is at
    /// least a microsecond); otherwise it is the nearest `Double` to the rounded microsecond.
    package static func secondsSinceReferenceDate(microseconds: Int64) -> Double {
        if microseconds == .max { return .infinity }
        if microseconds == .min { return -.infinity }
        let value = microseconds - epochOffset * 1_000_000
        // Both operands exact, so one correctly rounded division.
        if value.magnitude <= 1 << 53 { return Double(value) / 1_000_000 }
        let (whole, rest) = value.quotientAndRemainder(dividingBy: 1_000_000)
        return Double(whole) + Double(rest) / 1_000_000
    }

    private static func addingEpoch(_ value: Int64) -> Int64? {
        let (sum, overflow) = value.addingReportingOverflow(epochOffset * 1_000_000)
        return overflow ? nil : sum
    }

    /// `seconds × 10⁶` rounded half to even, in exact integer arithmetic on the double's
    /// significand; `nil` when it does not fit in 64 bits.
    private static func microsecondsRoundedToEven(_ seconds: Double) -> Int64? {
        if seconds == 0 { return 0 }
        // |seconds| = significand × 2^exponent, exactly.
        let significand =
            seconds.isNormal
            ? seconds.significandBitPattern | (1 << UInt64(Double.significandBitCount))
            : seconds.significandBitPattern
        let exponent =
            (seconds.isNormal ? Int(seconds.exponent) : Int(Double.leastNormalMagnitude.exponent))
            - Double.significandBitCount
        let (high, low) = significand.multipliedFullWidth(by: 1_000_000)  // below 2^73
        var magnitude: UInt64
        if exponent >= 0 {
            guard high == 0, exponent < 63, low >> UInt64(63 - exponent) == 0 else { return nil }
            magnitude = low << UInt64(exponent)
        } else if -exponent >= 74 {
            magnitude = 0  // the product is below 2^73, less than half of 2^shift
        } else {
            let shift = -exponent
            // The quotient and the remainder of (high, low) ÷ 2^shift, and half of 2^shift.
            let remainder: (high: UInt64, low: UInt64)
            let half: (high: UInt64, low: UInt64)
            if shift >= 64 {
                magnitude = high >> UInt64(shift - 64)
                remainder = (high & ((1 << UInt64(shift - 64)) &- 1), low)
                half = shift == 64 ? (0, 1 << 63) : (1 << UInt64(shift - 65), 0)
            } else {
                magnitude = low >> UInt64(shift) | high << UInt64(64 - shift)
                remainder = (0, low & ((1 << UInt64(shift)) &- 1))
                half = (0, 1 << UInt64(shift - 1))
            }
            let isAboveHalf = remainder.high != half.high ? remainder.high > half.high : remainder.low > half.low
            let isHalf = remainder == half
            if isAboveHalf || (isHalf && magnitude & 1 == 1) { magnitude += 1 }
        }
        guard magnitude <= UInt64(Int64.max) else { return nil }
        return seconds < 0 ? -Int64(magnitude) : Int64(magnitude)
    }

    /// The microsecond as PostgreSQL's text input reads it: `2001-01-01 00:00:00.000000+00`,
    /// with ` BC` for years before 1 AD; `infinity` and `-infinity` for the two ends.
    package static func timestampText(microseconds: Int64) -> String {
        if microseconds == .max { return "infinity" }
        if microseconds == .min { return "-infinity" }
        let perDay: Int64 = 86_400_000_000
        let (days, inDay) = (microseconds.floorDivided(by: perDay), microseconds.floorModulo(by: perDay))
        // Days since 2000-01-01, which is 10,957 days after 1970-01-01.
        let (year, month, day) = Day.civil(daysSince1970: days + 10_957)
        func padded(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let seconds = inDay / 1_000_000
        let time =
            "\(padded(seconds / 3_600, 2)):\(padded(seconds / 60 % 60, 2)):\(padded(seconds % 60, 2))"
            + ".\(padded(inDay % 1_000_000, 6))+00"
        // PostgreSQL has no year 0: astronomical year 0 is 1 BC.
        let suffix = year > 0 ? "" : " BC"
        return "\(padded(year > 0 ? year : 1 - year, 4))-\(padded(month, 2))-\(padded(day, 2)) \(time)\(suffix)"
    }
}

extension PostgresDialect {
    /// The microsecond a `timestamptz` in PostgreSQL's ISO text output stands for
    /// (`2001-01-01 00:00:00.000001+00`, any offset such as `+05:30` or `-00:53:28`, ` BC`,
    /// `infinity`): the inverse of ``timestampText(microseconds:)``; `nil` for other text.
    package static func microseconds(timestampText text: String) -> Int64? {
        if text == "infinity" { return .max }
        if text == "-infinity" { return .min }
        var rest = Substring(text)
        let isBC = rest.hasSuffix(" BC")
        if isBC { rest = rest.dropLast(3) }
        let parts = rest.split(separator: " ")
        guard parts.count == 2 else { return nil }
        let date = parts[0].split(separator: "-", omittingEmptySubsequences: false)
        guard date.count == 3, let year = Int64(date[0]), let month = Int64(date[1]), let day = Int64(date[2]),
            (1...12).contains(month), (1...31).contains(day), year >= 1
        else { return nil }
        var time = parts[1]
        guard let signIndex = time.lastIndex(where: { $0 == "+" || $0 == "-" }) else { return nil }
        let offsetParts = time[time.index(after: signIndex)...].split(separator: ":").map { Int64($0) }
        guard (1...3).contains(offsetParts.count), offsetParts.allSatisfy({ $0 != nil }) else { return nil }
        let offsetSeconds =
            zip(offsetParts.compactMap { $0 }, [3_600, 60, 1] as [Int64]).map(*).reduce(0, +)
            * (time[signIndex] == "-" ? -1 : 1)
        time = time[..<signIndex]
        let clock = time.split(separator: ":")
        guard clock.count == 3, let hours = Int64(clock[0]), let minutes = Int64(clock[1]) else { return nil }
        let secondParts = clock[2].split(separator: ".", omittingEmptySubsequences: false)
        guard let seconds = Int64(secondParts[0]), secondParts.count <= 2 else { return nil }
        var fraction: Int64 = 0
        if secondParts.count == 2 {
            let digits = secondParts[1]
            guard (1...6).contains(digits.count), let value = Int64(digits) else { return nil }
            fraction = value * [1, 100_000, 10_000, 1_000, 100, 10, 1][digits.count]
        }
        // Howard Hinnant's days_from_civil, for the astronomical year (1 BC is year 0).
        let astronomical = isBC ? 1 - year : year
        let shiftedYear = month <= 2 ? astronomical - 1 : astronomical
        let era = shiftedYear.floorDivided(by: 400)
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468 - 10_957  // since 2000-01-01
        let (total, overflow) = days.multipliedReportingOverflow(by: 86_400_000_000)
        guard !overflow else { return nil }
        return total + ((hours * 60 + minutes) * 60 + seconds - offsetSeconds) * 1_000_000 + fraction
    }
}

/// Why a value cannot be stored in PostgreSQL exactly (a string holding NUL, a date out of range).
package struct PostgresValueError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong, in the user's terms.
    package let message: String

    /// An error saying `message`.
    package init(_ message: String) {
        self.message = message
    }

    /// The message.
    package var description: String { message }
}

extension Int64 {
    fileprivate func floorDivided(by divisor: Int64) -> Int64 {
        let (quotient, remainder) = quotientAndRemainder(dividingBy: divisor)
        return remainder < 0 ? quotient - 1 : quotient
    }

    fileprivate func floorModulo(by divisor: Int64) -> Int64 {
        let remainder = self % divisor
        return remainder < 0 ? remainder + divisor : remainder
    }
}

// MARK: - Schema

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
    /// the indexes.
    ///
    /// Throws a ``PostgresValueError`` naming the entity when a table or column name is longer
    /// than PostgreSQL keeps (63 bytes); index names, which are the runtime's own, are shortened
    /// with a digest instead.
    package static func createStatements(for schema: SchemaDescription) throws -> [String] {
        if schema.entities.contains(where: { !$0.searchableAttributes.isEmpty }) { throw searchUnsupported }
        let tables = try tableDefinitions(for: schema)
        let creates = tables.map { table in
            "CREATE TABLE \(table.quotedName) (\((table.columns.map(\.definition) + table.constraints).joined(separator: ", ")))"
        }
        let foreignKeys = tables.flatMap { $0.foreignKeys.map(\.statement) }
        let indexes = tables.flatMap { $0.indexes.map(\.statement) }
        return [createMetadata] + creates + foreignKeys + indexes
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
    private static func leadingBytes(of text: String, count: Int) -> String {
        var result = ""
        for character in text.unicodeScalars {
            guard result.utf8.count + String(character).utf8.count <= count else { break }
            result.unicodeScalars.append(character)
        }
        return result
    }

    /// `text` when PostgreSQL keeps it whole, else its first bytes (on a character boundary) and a
    /// digest of the whole, 63 bytes at most.
    fileprivate static func shortened(_ text: String) -> String {
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

// MARK: - SQLDialect

extension PostgresDialect: SQLDialect {
    package func identifier(_ name: String) -> String {
        SQLSyntax.identifier(name)
    }

    /// PostgreSQL keeps 63 bytes of a name: a longer one becomes its first bytes and a digest of
    /// the whole, so two long names that share their first 63 bytes stay apart instead of the
    /// second `CREATE INDEX` failing on the first's cut name.
    package func indexName(_ name: String) -> String {
        Self.shortened(name)
    }

    /// `CASCADE`: a step drops the tables it removes one by one before it alters the tables it
    /// keeps, and PostgreSQL refuses to drop a table another one's foreign key still names (SQLite,
    /// with foreign keys off for the stage, does not look). The keys it drops with the table are
    /// those of removed tables, or of kept columns the stage drops or points elsewhere: the stage's
    /// alterations drop a key only if it is still there (``dropForeignKey(_:of:)``) and add the
    /// destination's, and its final comparison with a fresh store fails on any key left missing.
    package func dropTable(_ table: String) -> String {
        "DROP TABLE \(identifier(table)) CASCADE"
    }

    /// A standard string literal (`standard_conforming_strings` is on by default since 9.1, so a
    /// backslash is an ordinary character, as in SQLite).
    package func string(_ text: String) -> String {
        SQLSyntax.string(text)
    }

    /// `quote_nullable`, which writes a value of any type as a literal (a `bytea` as `'\x00ff'`).
    package func literal(of expression: String) -> String {
        "quote_nullable(\(expression))"
    }

    /// `?`, as the runtime writes every marker; the connection numbers them `$1`, `$2` … when it
    /// prepares a statement (see ``SQLDialect``), since fragments with their own markers compose.
    package var parameter: String { "?" }

    package func parameters(_ count: Int) -> String {
        Array(repeating: parameter, count: count).joined(separator: ", ")
    }

    /// `$n`, which a statement may use more than once.
    package func parameter(_ number: Int) -> String {
        "$\(number)"
    }

    /// `E'…'` escapes, dollar quotes and nested comments; a statement starts with `SELECT`, `WITH`,
    /// `VALUES`, `INSERT`, `UPDATE`, `DELETE` or a parenthesis, so nothing that changes the session
    /// or the schema (`SET`, `DECLARE … WITH HOLD`, `CREATE TEMP VIEW`, `ALTER ROLE` …) runs. The
    /// functions whose effect outlives the transaction that the store knows of are refused by
    /// name; Runtime.md says what stays possible. An interpolated name longer than PostgreSQL keeps
    /// (``maximumNameLength``) and more values than libpq can have described (``parameterLimit``)
    /// are refused before anything is sent. Each value's marker is numbered, `$1`, `$2` …, and the connection
    /// runs the text as written, without numbering `?`s of its own.
    package var handWritten: HandWrittenSQLRules {
        var rules = HandWrittenSQLRules(statementWords: ["SELECT", "WITH", "VALUES", "INSERT", "UPDATE", "DELETE", "("])
        rules.refusedFunctions = [
            "pg_advisory_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock", "pg_try_advisory_lock_shared",
            "pg_advisory_unlock", "pg_advisory_unlock_shared", "pg_advisory_unlock_all", "set_config", "pg_notify",
            "lo_import", "lo_export", "lo_from_bytea", "lo_create", "lo_creat", "lo_unlink", "lo_put", "lo_truncate",
            "lo_truncate64", "lowrite", "dblink", "dblink_exec", "pg_terminate_backend", "pg_cancel_backend",
            "pg_reload_conf",
        ]
        rules.nameByteLimit = Self.maximumNameLength
        rules.parameterLimit = Self.parameterLimit
        rules.escapeStrings = true
        rules.dollarQuotes = true
        rules.nestedComments = true
        rules.numberedMarkers = true
        return rules
    }

    package func columnType(_ storage: ColumnStorage) -> String {
        switch storage {
        case .boolean: ColumnType.boolean.rawValue
        case .integer16: ColumnType.smallint.rawValue
        case .integer32: ColumnType.integer.rawValue
        case .integer64: ColumnType.bigint.rawValue
        case .double: ColumnType.doublePrecision.rawValue
        case .float: ColumnType.real.rawValue
        case .timestamp: ColumnType.timestamptz.rawValue
        case .decimal: ColumnType.numeric.rawValue
        case .text: ColumnType.text.rawValue
        case .json: ColumnType.jsonb.rawValue
        case .bytes: ColumnType.bytea.rawValue
        case .uuid: ColumnType.uuid.rawValue
        }
    }

    package func cast(_ expression: String, to storage: ColumnStorage) -> String {
        "CAST(\(expression) AS \(columnType(storage)))"
    }

    /// PostgreSQL stores every table as a heap; a primary key is an index beside it, so
    /// `clustered` changes nothing (`CLUSTER` orders a table once, not as it is written).
    /// `CAST(? AS type)`: PostgreSQL reads an untyped parameter in a `SELECT` list as text.
    package func parameter(typed storage: ColumnStorage) -> String {
        cast(parameter, to: storage)
    }

    /// True: a list of 8,000 values as 8,000 parameters passes ``parameterLimit`` and loses the
    /// connection (issue 27), so every list is one array parameter, whatever its length.
    package var bindsListsAsArrays: Bool { true }

    /// `CAST(? AS type[])`, the column's own type, so each element converts exactly as a single
    /// parameter of that column would (`ModelwrightPostgres`'s `PostgresTypeMap` binds it). A decimal
    /// list travels as `text[]` and the server reads each element as `numeric`: numeric's binary
    /// form is not one the runtime writes, and its text is exact.
    package func arrayParameter(of storage: ColumnStorage) -> String {
        guard storage != .decimal else { return "CAST(CAST(\(parameter) AS text[]) AS numeric[])" }
        return "CAST(\(parameter) AS \(columnType(storage))[])"
    }

    /// `numeric`: decimal columns are exact here, and so are their comparisons and sorts.
    package var decimalComparison: ColumnStorage { .decimal }

    /// `TRUE`/`FALSE`: a condition here is a boolean, never an integer.
    package func truth(_ value: Bool) -> String {
        value ? "TRUE" : "FALSE"
    }

    /// `COLLATE "C"`: byte order of UTF-8, which is code point order, whatever the database's
    /// locale (an ICU `en-US` database would sort `a` before `B`).
    package func byCodePoint(_ text: String) -> String {
        "(\(text) COLLATE \"C\")"
    }

    /// `true`: PostgreSQL checks that a referenced table exists when it creates the reference.
    package var referencesNeedTheirTable: Bool { true }

    /// The layout's literal in this engine's type: `true`/`false` for a boolean, `to_timestamp` of
    /// the seconds for a date (microseconds, as every stored date), a UUID's or bytes' hex as
    /// `uuid` or `bytea`, and a cast for any other value (text to `numeric` or `jsonb` is exact).
    package func defaultExpression(_ literal: String, for storage: ColumnStorage) -> String {
        let hex: String? =
            literal.hasPrefix("X'") && literal.hasSuffix("'") ? String(literal.dropFirst(2).dropLast()) : nil
        switch storage {
        case .boolean:
            return literal == "0" ? "false" : "true"
        case .timestamp:
            return "to_timestamp(\(literal) + 978307200)"
        case .uuid where hex != nil:
            return "CAST('\(hex ?? "")' AS uuid)"
        case .bytes where hex != nil:
            return "decode('\(hex ?? "")', 'hex')"
        default:
            return cast(literal, to: storage)
        }
    }

    package func tableBody(_ definitions: [String], clustered: Bool) -> String {
        "(\(definitions.joined(separator: ", ")))"
    }

    package func createHistoryTables(transactions: String, changes: String) -> [String] {
        [
            // An identity column never hands out a number twice, even after the last rows are purged.
            "CREATE TABLE IF NOT EXISTS \(identifier(transactions)) (\"token\" bigint GENERATED ALWAYS AS IDENTITY "
                + "PRIMARY KEY, \"timestamp\" double precision NOT NULL, \"author\" text NOT NULL)",
            "CREATE TABLE IF NOT EXISTS \(identifier(changes)) (\"token\" bigint NOT NULL, \"seq\" bigint NOT NULL, "
                + "\"entity\" text NOT NULL, \"recordIDs\" bytea NOT NULL, \"kind\" bigint NOT NULL, "
                + "\"changedAttributes\" text NOT NULL, PRIMARY KEY (\"token\", \"seq\"))",
        ]
    }

    package func insertIgnoringConflicts(into table: String, columns: [String], _ source: String) -> String {
        "INSERT INTO \(table) (\(columns.joined(separator: ", "))) \(source) ON CONFLICT DO NOTHING"
    }

    /// `ON CONFLICT (key) DO UPDATE` of every other column. PostgreSQL names the columns to set,
    /// so `columns` must be given: with `nil` (every column, in order) the statement has no
    /// assignments and only skips the conflicting row; the runtime passes columns wherever it
    /// replaces on this engine.
    package func insertReplacing(into table: String, columns: [String]?, key: [String], _ source: String) -> String {
        let list = columns.map { " (\($0.joined(separator: ", ")))" } ?? ""
        let assignments = (columns ?? []).filter { !key.contains($0) }.map { "\($0) = EXCLUDED.\($0)" }
        let action = assignments.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + assignments.joined(separator: ", ")
        return "INSERT INTO \(table)\(list) \(source) ON CONFLICT (\(key.joined(separator: ", "))) \(action)"
    }

    package func limit(_ limit: String, offset: String) -> String {
        " LIMIT \(limit) OFFSET \(offset)"
    }

    package var noLimit: SQLValue { .null }

    package func differs(_ lhs: String, _ rhs: String) -> String {
        "\(lhs) IS DISTINCT FROM \(rhs)"
    }

    package func returning(_ columns: [String]) -> String {
        " RETURNING " + columns.joined(separator: ", ")
    }

    /// A string operator in SQL PostgreSQL runs itself, folding as Foundation does where the two
    /// agree: `caseInsensitive` is ICU's `lower()` (the `und-x-icu` collation, whatever the
    /// database's locale) and `diacriticInsensitive` is the `unaccent` extension (installed with
    /// the schema), applied to both sides; the comparison itself is by code point (`"C"`).
    ///
    /// What stays different from SQLite's `mw_string` (Swift's `String`, pinned in
    /// `StringOperatorPropertyTests`): Swift compares characters (grapheme clusters, canonically
    /// equivalent), PostgreSQL code points, so a decomposed `e` + U+0301 is no `é` here and `?` of
    /// `like` matches one code point; and `unaccent` also replaces letters that are not accented
    /// forms (`ø` → `o`, `æ` → `ae`, `ß` → `ss`), which Foundation keeps. `matches` is refused:
    /// PostgreSQL's regular expressions are not ICU's.
    package func stringTest(
        _ operation: StringOperation, options: StringComparisonOptions, value: String, needle: String
    ) throws -> String {
        func folded(_ text: String) -> String {
            var text = text
            if options.contains(.diacriticInsensitive) { text = "unaccent(\(text))" }
            if options.contains(.caseInsensitive) { text = "lower((\(text))::text COLLATE \"und-x-icu\")" }
            return "((\(text))::text COLLATE \"C\")"
        }
        let value = folded(value)
        let needle = folded(needle)
        switch operation {
        case .hasPrefix: return "starts_with(\(value), \(needle))"
        case .hasSuffix: return "starts_with(reverse(\(value)), reverse(\(needle)))"
        case .contains: return "(strpos(\(value), \(needle)) > 0)"
        case .equals: return "(\(value) = \(needle))"
        case .like:
            // NSPredicate's wildcards become LIKE's; LIKE's own and its escape are literal.
            var pattern = needle
            for (character, replacement) in [("\\", "\\\\"), ("%", "\\%"), ("_", "\\_"), ("*", "%"), ("?", "_")] {
                pattern = "replace(\(pattern), '\(character)', '\(replacement)')"
            }
            return "(\(value) LIKE \(pattern) ESCAPE '\\')"
        case .matches:
            throw SQLDialectError.unsupported(
                "PostgreSQL's regular expressions are not ICU's (NSPredicate's MATCHES); "
                    + "use like, contains or hasPrefix, or the SQLite engine for matches")
        }
    }

    /// SQLite's NULL order, which PostgreSQL reverses by default; a term that cannot be NULL stays
    /// plain, so an index on the column still orders the rows.
    package func sortTerm(_ value: String, ascending: Bool, mayBeNull: Bool) -> String {
        let term = "\(value) \(ascending ? "ASC" : "DESC")"
        guard mayBeNull else { return term }
        return term + (ascending ? " NULLS FIRST" : " NULLS LAST")
    }

    /// Full-text search (`@searchable`) is SQLite's FTS5 today; PostgreSQL's equivalent, a
    /// `tsvector` column with a GIN index, is not built yet, so a search is refused rather than
    /// answered differently.
    package func searchTest(row: String, index: String, column: String, query: String) throws -> String {
        throw Self.searchUnsupported
    }

    package func rankedSearch(
        index: String, column: String, position: Int, query: String, candidates: String,
        marks: (open: String, close: String, ellipsis: String, words: String)
    ) throws -> String {
        throw Self.searchUnsupported
    }

    package func createSearchIndex(
        _ index: String, of table: String, columns: [String], uniqueKeys: [[String]]
    ) throws -> [String] {
        throw Self.searchUnsupported
    }

    package func synchronizeSearchIndex(_ index: String, of table: String, columns: [String]) throws -> [String] {
        throw Self.searchUnsupported
    }

    package func dropSearchIndex(_ index: String, of table: String) throws -> [String] {
        throw Self.searchUnsupported
    }

    package func searchIndexChecks(_ index: String, of table: String, columns: [String]) throws -> [String] {
        throw Self.searchUnsupported
    }

    /// What every full-text requirement throws.
    package static let searchUnsupported = SQLDialectError.unsupported(
        "PostgreSQL stores have no full-text index yet (@searchable is SQLite's FTS5): remove @searchable, "
            + "or use the SQLite engine for full-text search")

    /// A deferred transaction is PostgreSQL's default; an immediate one takes the serialisable
    /// level, since PostgreSQL takes no database-wide write lock at `BEGIN` and a writer that must
    /// not see its reads change is told so at commit instead.
    package func begin(_ kind: TransactionKind) -> String {
        switch kind {
        case .deferred: "BEGIN"
        case .immediate: "BEGIN ISOLATION LEVEL SERIALIZABLE"
        }
    }

    /// Foreign keys are always enforced (the runtime declares them `DEFERRABLE INITIALLY DEFERRED`),
    /// so a connection starts with nothing to set.
    package var writerSettings: [String] { [] }

    /// `nil`: PostgreSQL's DDL is transactional and its foreign keys are checked at commit, so a
    /// migration's rebuilds need no switch around them.
    package var foreignKeysOff: String? { nil }

    /// See ``foreignKeysOff``.
    package var foreignKeysOn: String? { nil }

    /// PostgreSQL has no query for rows breaking a foreign key: it never stores one (a deferred
    /// check fails the commit with SQLSTATE 23503, whose detail names the constraint).
    package func foreignKeyViolations(in table: String?) throws -> String {
        throw SQLDialectError.unsupported(
            "PostgreSQL stores no row that breaks a foreign key; read the constraint from the commit's error (SQLSTATE 23503)"
        )
    }

    /// See ``foreignKeyViolations(in:)``.
    package var foreignKeyColumns: String {
        get throws {
            throw SQLDialectError.unsupported(
                "PostgreSQL numbers no foreign keys; read the constraint from the commit's error (SQLSTATE 23503)")
        }
    }

    /// PostgreSQL has no counter of other connections' commits: a connection hears of them through
    /// `LISTEN`/`NOTIFY` (a trigger on the store's tables notifies), not by polling.
    package var dataVersion: String {
        get throws {
            throw SQLDialectError.unsupported(
                "PostgreSQL has no data_version; other connections' commits arrive through LISTEN/NOTIFY")
        }
    }

    /// PostgreSQL keeps no schema cookie; an event trigger on DDL would stand in for it.
    package var schemaVersion: String {
        get throws {
            throw SQLDialectError.unsupported(
                "PostgreSQL has no schema version counter; an event trigger on DDL stands in for it")
        }
    }

    package var pageCount: String {
        "SELECT pg_database_size(current_database()) / current_setting('block_size')::bigint"
    }

    /// PostgreSQL's log is the server's, not the connection's: there is nothing to empty at close.
    package var checkpoint: String {
        get throws {
            throw SQLDialectError.unsupported(
                "PostgreSQL's write-ahead log belongs to the server; a client does not checkpoint it")
        }
    }

    /// PostgreSQL has no stable row number (`ctid` moves with every update): a results controller
    /// breaks ties by `"id"` on this engine, so records that sort equal come in ID order, not in
    /// the order they were inserted as on SQLite (pinned in `PostgresStoreTests`).
    package var rowNumberColumn: String { identifier("id") }

    package var tableNames: String {
        "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()"
    }

    package var tableExists: String {
        "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = \(parameter)"
    }

    package var tableCount: String {
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema() AND table_name = \(parameter)"
    }

    package var columnNames: String {
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
            + "AND table_name = \(parameter) ORDER BY ordinal_position"
    }

    /// The four queries over `information_schema` and `pg_catalog`, each in the row shape
    /// ``SchemaIntrospection`` fixes; the tables query's second column is empty, since no table
    /// is clustered here.
    package var schemaIntrospection: SchemaIntrospection {
        let own = "substr(c.relname, 1, 12) <> '_mw_history_'"
        return SchemaIntrospection(
            tables:
                "SELECT c.relname, '' FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE n.nspname = current_schema() AND c.relkind = 'r' AND \(own)",
            columns:
                "SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod), CAST(a.attnotnull AS integer), "
                + "pg_get_expr(d.adbin, d.adrelid), COALESCE(array_position(k.conkey, a.attnum), 0) "
                + "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
                + "LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum "
                + "LEFT JOIN pg_constraint k ON k.conrelid = c.oid AND k.contype = 'p' "
                + "WHERE n.nspname = current_schema() AND c.relkind = 'r' AND \(own)",
            indexes:
                "SELECT c.relname, i.relname, CAST(x.indisunique AS integer), s.place - 1, a.attname "
                + "FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid "
                + "JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS s(attnum, place) "
                + "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = s.attnum "
                + "WHERE n.nspname = current_schema() AND NOT x.indisprimary AND \(own)",
            foreignKeys:
                "SELECT c.relname, a.attname, r.relname, CASE k.confdeltype WHEN 'c' THEN 'CASCADE' "
                + "WHEN 'n' THEN 'SET NULL' WHEN 'r' THEN 'RESTRICT' ELSE 'NO ACTION' END "
                + "FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class r ON r.oid = k.confrelid "
                + "JOIN pg_namespace n ON n.oid = c.relnamespace "
                + "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.conkey[1] "
                + "WHERE n.nspname = current_schema() AND k.contype = 'f' AND \(own)"
        )
    }

    /// No table is clustered on PostgreSQL (see ``tableBody(_:clustered:)``).
    package func isClustered(definition: String) -> Bool {
        false
    }

    // MARK: - Migrations

    /// `true`: a migration alters a table's columns and foreign keys in place, since dropping a
    /// table would drop the foreign keys of the tables that reference it, and the step's one
    /// transaction already makes the alterations all or nothing.
    package var altersTablesInPlace: Bool { true }

    /// Deferred foreign-key checks the transaction's writes queued run first: PostgreSQL refuses to
    /// alter a table with checks pending (SQLSTATE 55006); they are deferred again after.
    package var alterationsBracket: (before: [String], after: [String]) {
        (["SET CONSTRAINTS ALL IMMEDIATE"], ["SET CONSTRAINTS ALL DEFERRED"])
    }

    /// A block that renames the table and its primary key: PostgreSQL names a table's primary key
    /// (and its index) after the table when it creates it, `<table>_pkey`, with the table's part cut
    /// to fit 63 bytes, and a rename keeps the old name. Renamed with the table, a migrated table
    /// holds the key a fresh store's holds, and a table created later under the old name (a removed
    /// table moved aside, a swap) finds that name free.
    package func renameTable(_ table: String, to name: String) -> String {
        let key = Self.leadingBytes(of: name, count: Self.maximumNameLength - "_pkey".utf8.count) + "_pkey"
        return "DO $mw$ DECLARE found text; BEGIN ALTER TABLE \(identifier(table)) RENAME TO \(identifier(name)); "
            + "SELECT k.conname INTO found FROM pg_constraint k "
            + "WHERE k.conrelid = to_regclass(\(string(identifier(name)))) AND k.contype = 'p'; "
            + "IF found IS NOT NULL AND found <> \(string(key)) THEN "
            + "EXECUTE format('ALTER TABLE %I RENAME CONSTRAINT %I TO %I', \(string(name)), found, \(string(key))); "
            + "END IF; END $mw$"
    }

    /// A block that finds the constraint's name in the catalog (a renamed table or column keeps
    /// the name it was created with) and drops it; nothing when there is none.
    package func dropForeignKey(_ column: String, of table: String) -> String {
        "DO $mw$ DECLARE found text; BEGIN SELECT k.conname INTO found FROM pg_constraint k "
            + "JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = k.conkey[1] "
            + "WHERE k.conrelid = to_regclass(\(string(identifier(table)))) AND k.contype = 'f' "
            + "AND a.attname = \(string(column)); IF found IS NOT NULL THEN "
            + "EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', \(string(table)), found); END IF; END $mw$"
    }

    /// A schema of its own, first and alone on the search path until the transaction leaves it
    /// (the path before it is kept in a setting of the transaction), then dropped with its tables.
    package var scratchNamespace: (enter: [String], leave: [String])? {
        (
            enter: [
                // DROP SCHEMA … CASCADE would list every table it drops on standard error.
                "SELECT set_config('client_min_messages', 'warning', true)",
                "CREATE SCHEMA \"_mw_fresh\"",
                "SELECT set_config('modelwright.search_path', current_setting('search_path'), true)",
                "SELECT set_config('search_path', '\"_mw_fresh\"', true)",
            ],
            leave: [
                "SELECT set_config('search_path', current_setting('modelwright.search_path'), true)",
                "DROP SCHEMA \"_mw_fresh\" CASCADE",
            ]
        )
    }

    /// `TRUE`: a typed column holds only values of its type, which the record reads (an enum's
    /// cases and what Swift parses beyond the type, a URL's text, are checked by the caller and by
    /// the decoding of every row at the last stage).
    package func decodes(_ column: String, as type: AttributeType?) -> String {
        "TRUE"
    }
}
