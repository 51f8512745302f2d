import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// Every built-in attribute type's table entry (``ScalarType``) is used consistently: the values
/// its synthetic rule makes are values its decoding reads, the store writes and reads them back
/// unchanged in a column of the type its storage class declares, the archive and the checksum
/// tell every type apart, and the conversion rule is the same both ways it is asked.
struct ScalarTypeTableTests {
    /// A record of one attribute, `value`, of any column type.
    struct One<Value: ColumnValue & Hashable>: Record {
        typealias ID = RecordID<One>
        static var entityName: String { "One" }
        let id: ID
        var value: Value

        init(id: ID = ID(), value: Value) {
            self.id = id
            self.value = value
        }

        func encode(to row: inout RowEncoder) throws { try row.encode(value) }

        init(id: ID, row: inout RowDecoder) throws {
            self.id = id
            value = try row.decode()
        }

        struct Fields: RecordFields {
            typealias Target = One
            let path: FieldPath
        }
    }

    /// The values the table's synthetic rule makes for a type: ordinary, extreme and stub values of
    /// several rows.
    static func samples(of scalar: ScalarType) -> [SQLValue] {
        (0..<12).flatMap { number in
            [false, true].flatMap { extreme in
                [false, true].map { stub in scalar.synthetic(number, extreme, "E\(number)", stub) }
            }
        }
    }

    static func schema(_ type: AttributeType) -> SchemaDescription {
        SchemaDescription(
            modelName: "M", version: 1,
            entities: [EntityDescription(name: "One", attributes: [AttributeDescription(name: "value", type: type)])])
    }

    @Test func theTableListsEachTypeOnceAndMapsBothWays() {
        #expect(Set(ScalarType.all.map(\.name)).count == ScalarType.all.count)
        #expect(Set(ScalarType.all.map(\.schemaSpelling)).count == ScalarType.all.count)
        for scalar in ScalarType.all {
            let type = AttributeType(scalar)
            #expect(type.scalar == scalar, "\(scalar)")
            #expect(type.schemaSpelling == scalar.schemaSpelling)
            #expect(ScalarType.byName[scalar.name] == scalar)
            #expect(ScalarType.bySchemaSpelling[scalar.schemaSpelling] == scalar)
            #expect(String(describing: scalar.valueType) == scalar.swiftType, "\(scalar)")
        }
    }

    @Test(arguments: ScalarType.all)
    func syntheticValuesDecodeAndRoundTripThroughTheSwiftType(scalar: ScalarType) throws {
        for value in Self.samples(of: scalar) {
            #expect(scalar.decodes(value), "\(scalar) does not decode its own synthetic \(value)")
            let decoded = try scalar.valueType.init(sqlValue: value)
            #expect(try decoded.sqlValue == value, "\(scalar): \(value) does not encode back as itself")
            #expect(scalar.fixture(.null) == nil || scalar.fixture(.null) == .null)
        }
    }

    @Test(arguments: ScalarType.all)
    func theDecodingCheckInSQLAgreesWithTheTable(scalar: ScalarType) throws {
        let connection = try SQLiteConnection(path: ":memory:")
        let kind = DecodingFunction.Kind(AttributeType(scalar))
        #expect(kind.scalar == scalar)
        for value in Self.samples(of: scalar) + DecodingRuleTests.values() {
            let statement = try SQLiteStatement(
                connection: connection, sql: "WITH v(x) AS (SELECT ?) SELECT (\(kind.test("x"))) FROM v")
            statement.bind(value, 1)
            _ = try statement.step()
            #expect((statement.int64(0) == 1) == scalar.decodes(value), "\(scalar) on \(value)")
        }
    }

    @Test(arguments: ScalarType.all)
    func everyValueRoundTripsThroughTheStore(scalar: ScalarType) async throws {
        let value = try scalar.valueType.init(sqlValue: scalar.synthetic(3, true, "tag", false))
        guard let hashable = value as? any (ColumnValue & Hashable) else {
            Issue.record("\(scalar.swiftType) is not Hashable")
            return
        }
        try await Self.roundTrip(hashable, as: AttributeType(scalar))
    }

    private static func roundTrip<Value: ColumnValue & Hashable>(_ value: Value, as type: AttributeType) async throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("scalar-\(UUID().uuidString).sqlite")
        defer {
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + suffix) }
        }
        let store = try Store(url: url, schema: schema(type))
        let record = One(value: value)
        try await store.performAndSave { try $0.insert(record) }
        let read = try await store.performQuery { try $0.existing(record.id) }
        #expect(read == record, "\(type.schemaSpelling)")
        // The column is declared as its column storage says, and holds the value as the type encodes it.
        let connection = try SQLiteConnection(path: url.path)
        let statement = try SQLiteStatement(
            connection: connection,
            sql: "SELECT (SELECT type FROM pragma_table_info('One') WHERE name = 'value'), \"value\" FROM \"One\"")
        #expect(try statement.step())
        #expect(
            statement.value(0) == .text(type.scalar.map { SQLiteDialect().columnType($0.columnStorage) } ?? "?"),
            "\(type.schemaSpelling)")
        #expect(try statement.value(1) == value.sqlValue, "\(type.schemaSpelling)")
    }

    @Test func theArchiveAndTheChecksumTellEveryTypeApart() throws {
        var checksums: Set<String> = []
        for scalar in ScalarType.all {
            let schema = Self.schema(AttributeType(scalar))
            let decoded = try SchemaDescription(archive: schema.archive)
            #expect(decoded == schema, "\(scalar)")
            #expect(decoded.checksum == schema.checksum)
            checksums.insert("\(schema.checksum)")
        }
        #expect(checksums.count == ScalarType.all.count)
    }

    @Test func theConversionRuleIsTheSameForThePlannerAndTheMigrator() {
        for old in ScalarType.all {
            for new in ScalarType.all {
                let conversion = old.conversion(to: new)
                let sql = TableMapping.conversion(
                    from: AttributeType(old), to: AttributeType(new), column: "c", dialect: SQLiteDialect())
                #expect((sql != nil) == (conversion?.cast != nil), "\(old) → \(new)")
                if old == new { #expect(conversion == nil) }
                // A cast always rewrites; a lossless conversion from a number never needs a stage.
                if conversion?.cast != nil { #expect(conversion?.rewritesValues == true) }
            }
        }
    }

    /// A conversion to text the migrator runs keeps every value: integers become their exact text
    /// (checked at the extremes through SQLite's own `CAST`), while a floating-point number, whose
    /// text SQL cuts to 15 digits and whose magnitude a `Decimal` may not hold, needs a custom stage.
    @Test func onlyIntegersBecomeTextWithoutAStage() throws {
        let connection = try SQLiteConnection(path: nil)
        for old in ScalarType.all where old.number != nil {
            for new in ScalarType.all where new.takesNumbersAsText {
                let conversion = old.conversion(to: new)
                guard case .integer? = old.number else {
                    #expect(conversion == nil, "\(old) → \(new) needs a stage")
                    continue
                }
                let cast = try #require(conversion?.cast, "\(old) → \(new)")
                for value in [old.integerRange?.lowerBound, old.integerRange?.upperBound].compactMap({ $0 }) {
                    let statement = try SQLiteStatement(
                        connection: connection, sql: "SELECT " + SQLiteDialect().cast("?", to: cast))
                    statement.bind(.integer(value), 1)
                    #expect(try statement.step())
                    #expect(statement.value(0) == .text(String(value)), "\(old) → \(new): \(value)")
                }
            }
        }
    }
}
