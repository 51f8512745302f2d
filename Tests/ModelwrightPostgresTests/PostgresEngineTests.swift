import CLibPQ
import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightPostgres

/// The runtime's engine interface (`DatabaseStatement` and the connection's synchronous calls) on
/// a real server: every column type of the type map at the extremes the SQLite suites use and at
/// random values, bound as the runtime binds them (``SQLValue``) and read back by every reader;
/// statements prepared once, `changes`, both transaction kinds, the aborted-transaction rule,
/// cancellation, timeouts and a connection lost before `COMMIT`.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresEngineTests {
    static let randomCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 20_000 : 200

    /// One value bound to a column of `column`'s type, and what must come back.
    struct Case: CustomStringConvertible {
        let column: PostgresDialect.ColumnType
        let value: SQLValue
        /// `nil`: the value must be refused, with a message naming parameter $1.
        let expected: SQLValue?
        var description: String {
            let shown = "\(value)"
            return "\(column.rawValue) \(shown.prefix(80))"
        }
    }

    /// The cases: each column type at its extremes (``ExtremeValues``) and at random values.
    static func cases() -> [Case] {
        var random = SplitMix64(seed: 0xE4_61_4E)
        var cases: [Case] = []
        func add(_ column: PostgresDialect.ColumnType, _ value: SQLValue, _ expected: SQLValue?) {
            cases.append(Case(column: column, value: value, expected: expected))
        }
        let integers =
            ExtremeValues.integers
            + (0..<randomCount).map { _ in Int64(bitPattern: random.next()) >> random.next(below: 63) }
        for integer in integers {
            add(.bigint, .integer(integer), .integer(integer))
            add(.integer, .integer(integer), Int32(exactly: integer) == nil ? nil : .integer(integer))
            add(.smallint, .integer(integer), Int16(exactly: integer) == nil ? nil : .integer(integer))
        }
        add(.boolean, .integer(0), .integer(0))
        add(.boolean, .integer(1), .integer(1))
        add(.boolean, .integer(2), nil)
        var doubles = ExtremeValues.doubles
        for _ in 0..<randomCount {
            let double = Double(bitPattern: random.next())
            if !double.isNaN { doubles.append(double) }
        }
        for double in doubles {
            add(.doublePrecision, .real(double), .real(double))
            add(.real, .real(double), Float(exactly: double) == nil ? nil : .real(double))
        }
        for _ in 0..<randomCount {
            let float = Float(bitPattern: UInt32(truncatingIfNeeded: random.next()))
            if !float.isNaN { add(.real, .real(Double(float)), .real(Double(float))) }
        }
        var decimals = ExtremeValues.decimals
        for _ in 0..<randomCount {
            let digits = (0..<random.size(in: 1...38)).map { _ in String(random.next(below: 10)) }.joined()
            let point = random.next(below: digits.count)
            decimals.append(
                (random.chance(0.5) ? "-" : "") + digits.prefix(point + 1) + "." + digits.dropFirst(point + 1) + "0")
        }
        for decimal in decimals { add(.numeric, .text(decimal), .text(decimal)) }
        var strings = ExtremeValues.strings
        for _ in 0..<randomCount {
            let scalars = (0..<random.size(in: 0...40)).compactMap { _ in
                Unicode.Scalar(
                    UInt32(
                        random.pick([
                            random.next(below: 128), random.next(below: 0xD800), random.next(below: 0x11_0000),
                        ])))
            }
            strings.append(String(String.UnicodeScalarView(scalars)))
        }
        for string in strings {
            add(.text, .text(string), string.utf8.contains(0) ? nil : .text(string))
        }
        var dates = ExtremeValues.dateIntervals
        for _ in 0..<randomCount { dates.append(Double.random(in: -3e10...3e10, using: &random)) }
        for date in dates {
            // The oracle is the type map's own rule, computed without a server: microseconds,
            // rounded half to even.
            let stored = try? PostgresTypeMap.sqlValue(
                PostgresTypeMap.postgresValue(.real(date), storedAs: .date), storedAs: .date)
            add(.timestamptz, .real(date), stored)
        }
        var blobs = [Data(), Data([0, 255]), Data((0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 &* 31) })]
        for _ in 0..<randomCount {
            blobs.append(Data((0..<random.size(in: 0...64)).map { _ in UInt8(truncatingIfNeeded: random.next()) }))
        }
        for blob in blobs { add(.bytea, .blob(blob), .blob(blob)) }
        for _ in 0..<randomCount {
            let uuid = withUnsafeBytes(of: (random.next(), random.next())) { Data($0) }
            add(.uuid, .blob(uuid), .blob(uuid))
        }
        add(.uuid, .blob(Data([1, 2, 3])), nil)
        for json in ["{}", "[]", "{\"a\": [1, 2.5, \"it's\"]}", "\"é🙂\"", "{\"k\": \"a\\u0000b\"}"] {
            add(.jsonb, .text(json), json.contains("\\u0000") ? nil : .text(json))
        }
        for column in PostgresDialect.ColumnType.allCases { add(column, .null, .null) }
        return cases
    }

    /// The storage class of a value as the runtime reads it.
    static func storageClass(of value: SQLValue) -> StorageClass {
        switch value {
        case .null: .null
        case .integer: .integer
        case .real: .real
        case .text: .text
        case .blob: .blob
        }
    }

    /// Whether `read` is `expected`, bit for bit for numbers, as a number for `numeric`, as the
    /// same JSON value for `jsonb`.
    static func same(_ read: SQLValue, _ expected: SQLValue, column: PostgresDialect.ColumnType) -> Bool {
        switch (column, read, expected) {
        case (_, .real(let lhs), .real(let rhs)):
            return lhs.bitPattern == rhs.bitPattern
        case (.numeric, .text(let lhs), .text(let rhs)):
            return Decimal(string: lhs, locale: Locale(identifier: "en_US_POSIX"))
                == Decimal(string: rhs, locale: Locale(identifier: "en_US_POSIX"))
        case (.jsonb, .text(let lhs), .text(let rhs)):
            let options: JSONSerialization.ReadingOptions = [.fragmentsAllowed]
            func canonical(_ text: String) -> Data? {
                guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8), options: options) else {
                    return nil
                }
                return try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
            }
            return canonical(lhs) != nil && canonical(lhs) == canonical(rhs)
        default:
            return read == expected
        }
    }

    @Test func everyColumnTypeRoundTripsThroughTheEngineInterfaceAtItsExtremes() async throws {
        let connection = try await makeConnection()
        let cases = Self.cases()
        for column in PostgresDialect.ColumnType.allCases {
            try engine {
                try connection.execute(
                    "CREATE TABLE \"v_\(column.rawValue.replacingOccurrences(of: " ", with: "_"))\" (x \(column.rawValue))"
                )
            }
        }
        var checked = 0
        for test in cases {
            let table = "\"v_\(test.column.rawValue.replacingOccurrences(of: " ", with: "_"))\""
            let statement = try connection.statement("INSERT INTO \(table) (x) VALUES (?) RETURNING x")
            statement.bind(test.value, 1)
            guard let expected = test.expected else {
                #expect(throws: PostgresError.self, "\(test)") { _ = try statement.step() }
                do {
                    _ = try statement.step()
                } catch {
                    #expect("\(error)".contains("parameter $1"), "\(test): \(error)")
                }
                continue
            }
            #expect(try statement.step(), "\(test)")
            let read = statement.value(0)
            #expect(Self.same(read, expected, column: test.column), "\(test): read \(read)")
            // The class a row decoder asks for first, told from the column's type, is the value's.
            #expect(statement.storageClass(0) == Self.storageClass(of: read), "\(test)")
            // The typed readers agree with the value.
            switch expected {
            case .integer(let integer): #expect(statement.int64(0) == integer, "\(test)")
            case .real(let double): #expect(statement.double(0).bitPattern == double.bitPattern, "\(test)")
            case .text: #expect(Self.same(.text(statement.string(0)), expected, column: test.column), "\(test)")
            case .blob(let data):
                #expect(statement.data(0) == data, "\(test)")
                if test.column == .uuid {
                    #expect(statement.uuid(0).map { withUnsafeBytes(of: $0.uuid) { Data($0) } } == data)
                }
            case .null: #expect(statement.isNull(0))
            }
            #expect(Self.typedReadsAgree(statement), "\(test)")
            #expect(!(try statement.step()), "\(test): one row")
            statement.reset()
            checked += 1
        }
        #expect(checked > 8 * Self.randomCount)
        // Every INSERT above used one server-side statement per table, prepared once.
        let prepared = try connection.prepare(
            "SELECT count(*) FROM pg_prepared_statements WHERE statement LIKE 'INSERT%'")
        #expect(try prepared.step())
        #expect(prepared.int64(0) == Int64(PostgresDialect.ColumnType.allCases.count))
    }

    /// Whether the row decoder's typed reads of column 0 (`text`, `integer`, `number`, which a
    /// record's decoding calls and the engine answers with one look at the cell) say what the
    /// value's class followed by the read says, bit for bit.
    static func typedReadsAgree(_ statement: any DatabaseStatement) -> Bool {
        let storageClass = statement.storageClass(0)
        let number: Double? =
            switch storageClass {
            case .real, .integer: statement.double(0)
            default: nil
            }
        return statement.text(0) == (storageClass == .text ? statement.string(0) : nil)
            && statement.integer(0) == (storageClass == .integer ? statement.int64(0) : nil)
            && statement.number(0)?.bitPattern == number?.bitPattern
    }

    /// Text columns read as exactly the bytes the server holds: in a SQL_ASCII database (which
    /// stores any bytes and converts none), drawn byte strings, valid UTF-8 or not, in every column
    /// type read as text. Valid UTF-8 is read as that text, bit for bit, by every reader; anything
    /// else never reaches a reader as text with U+FFFD in it (the server refuses to send it to a
    /// UTF-8 client, 22021).
    @Test func textReadsItsBytesExactlyAndNeverRepairsThem() async throws {
        let admin = try await makeConnection()
        let name = "mw_bytes_\(UUID().uuidString.prefix(8).lowercased())"
        try await admin.execute(
            "CREATE DATABASE \(name) ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
        var configuration = try await makeDatabase()
        configuration.connectionString = configuration.connectionString.replacingOccurrences(
            of: #"dbname=mw_[0-9a-f]+"#, with: "dbname=\(name)", options: .regularExpression)
        let connection = try await PostgresConnection(configuration)
        var random = SplitMix64(seed: 0x7E_87)
        var checked = (valid: 0, invalid: 0)
        for index in 0..<Self.randomCount * 2 {
            // Mostly ASCII, some multi-byte scalars, some stray bytes (a lone continuation byte, a
            // truncated sequence, an overlong form, a surrogate's encoding).
            var bytes: [UInt8] = []
            for _ in 0..<random.size(in: 0...40) {
                switch random.next(below: 10) {
                case 0, 1: bytes += Array(random.pick(["é", "🙂", "€", "ß"]).utf8)
                case 2: bytes.append(UInt8(truncatingIfNeeded: random.next()) | 0x80)
                case 3:
                    bytes += random.pick([[0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xE2, 0x82], [0xF4, 0x90, 0x80, 0x80]])
                default: bytes.append(UInt8(1 + random.next(below: 127)))
                }
            }
            let hex = bytes.map { String(format: "%02x", $0) }.joined()
            let type = ["text", "varchar", "name", "bpchar"][index % 4]
            // `name` keeps 63 bytes: the oracle is the bytes the server holds, read as bytea.
            let statement = try connection.statement(
                "SELECT CAST(convert_from(decode('\(hex)', 'hex'), 'SQL_ASCII') AS \(type)), "
                    + "convert_to(CAST(convert_from(decode('\(hex)', 'hex'), 'SQL_ASCII') AS \(type)), 'SQL_ASCII')")
            let held: Data
            do {
                #expect(try statement.step())
                held = statement.data(1)
            } catch {
                // Refused by the server: the bytes it holds are not UTF-8.
                #expect(String(validating: bytes.prefix(type == "name" ? 63 : bytes.count), as: UTF8.self) == nil)
                #expect("\(error)".contains("22021"), "\(type) \(hex): \(error)")
                checked.invalid += 1
                statement.reset()
                try engine { try connection.execute("SELECT 1") }
                continue
            }
            let expected = try #require(String(validating: held, as: UTF8.self), "\(type) \(hex)")
            #expect(statement.text(0).map { Data($0.utf8) } == held, "\(type) \(hex)")
            #expect(statement.string(0) == expected, "\(type) \(hex)")
            #expect(statement.storageClass(0) == .text, "\(type) \(hex)")
            #expect(statement.value(0) == .text(expected), "\(type) \(hex)")
            #expect(Self.typedReadsAgree(statement), "\(type) \(hex)")
            checked.valid += 1
            statement.reset()
        }
        #expect(checked.valid > Self.randomCount / 4 && checked.invalid > Self.randomCount / 4, "\(checked)")
    }

    /// `?` markers are numbered outside literals, quoted names and comments, whatever surrounds them.
    @Test func markersAreNumberedOnlyOutsideLiteralsNamesAndComments() {
        var random = SplitMix64(seed: 0x3A4C)
        let inert = ["'?'", "'it''s ?'", "\"a?b\"", "\"q\"\"?\"", "-- ?\n", "/* ? */", "x", " ", ",", "'' "]
        for _ in 0..<2_000 {
            var sql = ""
            var expected = ""
            var markers = 0
            for _ in 0..<random.size(in: 0...12) {
                if random.chance(0.4) {
                    markers += 1
                    sql += "?"
                    expected += "$\(markers)"
                } else {
                    let piece = random.pick(inert)
                    sql += piece
                    expected += piece
                }
            }
            #expect(PostgresStatement.numberingMarkers(sql) == expected, "\(sql)")
        }
    }

    @Test func changesCountTheRowsTheLastWriteChanged() async throws {
        let connection = try await makeConnection()
        try engine { try connection.execute("CREATE TABLE t (v bigint)") }
        var random = SplitMix64(seed: 0xC4A)
        for _ in 0..<20 {
            let count = random.size(in: 0...50)
            let insert = try connection.statement("INSERT INTO t SELECT generate_series(1, ?)")
            insert.bind(Int64(count), 1)
            try insert.run()
            #expect(connection.changes == count)
            let delete = try connection.statement("DELETE FROM t WHERE v <= ?")
            delete.bind(Int64(count), 1)
            try delete.run()
            #expect(connection.changes == count)
        }
    }

    @Test func aFailedStatementAbortsTheTransactionUntilItIsRolledBack() async throws {
        let connection = try await makeConnection()
        try engine { try connection.execute("CREATE TABLE t (v bigint PRIMARY KEY)") }
        try engine { try connection.begin(.immediate) }
        #expect(connection.isInTransaction)
        try engine { try connection.execute("INSERT INTO t VALUES (1)") }
        #expect(throws: PostgresError.self) { try engine { try connection.execute("INSERT INTO t VALUES (1)") } }
        #expect {
            try engine { try connection.execute("INSERT INTO t VALUES (2)") }
        } throws: { error in
            // An abort is the engine-neutral StoreError, matched without naming PostgresError.
            guard case StoreError.transactionAbortedByEngine(let cause) = error else { return false }
            return cause.engine == "PostgreSQL" && cause.code == "23505"
                && (error as? StoreError)?.abortCause == cause
        }
        #expect {
            try connection.commit()
        } throws: { error in
            (error as? StoreError)?.abortCause?.code == "23505"
        }
        #expect(!connection.isInTransaction)
        connection.rollback()
        let count = try connection.prepare("SELECT count(*) FROM t")
        #expect(try count.step())
        #expect(count.int64(0) == 0)
    }

    /// Two writers (`immediate`) of two connections take turns: the second waits until the first
    /// commits, then reads what it wrote; a reader (`deferred`) keeps its snapshot meanwhile.
    @Test func immediateTransactionsTakeTurnsAndDeferredOnesKeepTheirSnapshot() async throws {
        let configuration = try await makeDatabase()
        let first = try await PostgresConnection(configuration)
        let second = try await PostgresConnection(configuration)
        let reader = try await PostgresConnection(configuration)
        try engine { try first.execute("CREATE TABLE t (v bigint)") }
        try engine { try reader.begin(.deferred) }
        @Sendable func count(_ connection: PostgresConnection) throws -> Int64 {
            let statement = try connection.statement("SELECT count(*) FROM t")
            _ = try statement.step()
            return statement.int64(0)
        }
        #expect(try count(reader) == 0)
        try engine { try first.begin(.immediate) }
        try engine { try first.execute("INSERT INTO t VALUES (1)") }
        let secondDone = DispatchSemaphore(value: 0)
        let seen = LockedValue<Int64?>(nil)
        Thread {
            do {
                try engine { try second.begin(.immediate) }
                seen.set(try count(second))
                try engine { try second.execute("INSERT INTO t VALUES (2)") }
                try engine { try second.commit() }
            } catch {
                seen.set(-1)
            }
            secondDone.signal()
        }.start()
        #expect(secondDone.wait(timeout: .now() + .milliseconds(500)) == .timedOut, "the second writer waits")
        try engine { try first.commit() }
        #expect(secondDone.wait(timeout: .now() + .seconds(20)) == .success)
        #expect(seen.get() == 1, "the second writer reads the first one's row")
        #expect(try count(reader) == 0, "the reader keeps its snapshot")
        try engine { try reader.commit() }
        #expect(try count(reader) == 2)
    }

    @Test func cancellingTheTaskStopsASynchronousStatement() async throws {
        let connection = try await makeConnection()
        let started = ContinuousClock.now
        let task = Task.detached { try engine { try connection.execute("SELECT pg_sleep(600)") } }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        await #expect(throws: PostgresError.cancelled) { try await task.value }
        // Far below the statement's 600 s, far above a loaded machine's delay (10.9 s was seen in CI).
        #expect(ContinuousClock.now - started < .seconds(120))
        try engine { try connection.execute("SELECT 1") }
    }

    @Test func aSynchronousStatementPastTheTimeoutSaysSo() async throws {
        var configuration = try await makeDatabase()
        configuration.statementTimeout = .milliseconds(200)
        let connection = try await PostgresConnection(configuration)
        #expect(throws: PostgresError.timedOut) { try engine { try connection.execute("SELECT pg_sleep(10)") } }
        try engine { try connection.execute("SELECT 1") }
    }

    /// The server process ends (`pg_terminate_backend`, as a restart or a failover would) while a
    /// transaction is open: `COMMIT` cannot know whether the server committed, and says so, in a
    /// message without the password.
    @Test func aConnectionLostAtCommitSaysTheOutcomeIsUnknown() async throws {
        let configuration = try await makeDatabase()
        let connection = try await PostgresConnection(configuration)
        let admin = try await PostgresConnection(configuration)
        try engine { try connection.execute("CREATE TABLE t (v bigint)") }
        try engine { try connection.begin(.immediate) }
        try engine { try connection.execute("INSERT INTO t VALUES (1)") }
        try await admin.execute("SELECT pg_terminate_backend($1)", [.int32(connection.serverProcessID)])
        #expect {
            try engine { try connection.commit() }
        } throws: { error in
            let password = PostgresCluster.shared?.password ?? "?"
            return error as? PostgresError == .commitOutcomeUnknown && !"\(error)".contains(password)
                && "\(error)".contains("may or may not have committed")
        }
        #expect(throws: PostgresError.closed) { try engine { try connection.execute("SELECT 1") } }
    }
}

/// Runs `body` in a synchronous context, where a connection's calls are the engine interface's
/// synchronous ones rather than the async API's of the same name.
func engine<T>(_ body: () throws -> T) rethrows -> T {
    try body()
}

/// A value several threads read and write.
final class LockedValue<Value: Sendable>: @unchecked Sendable {
    // @unchecked: the one field is behind `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func get() -> Value { lock.withLock { value } }

    func set(_ newValue: Value) { lock.withLock { value = newValue } }
}
