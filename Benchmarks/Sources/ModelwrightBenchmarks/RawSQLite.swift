import CSQLiteBench
import Foundation

/// The baseline: SQLite's C API called directly, as a careful hand-written data layer would.
/// One connection, one prepared statement per workload, bind/step/reset, no wrapper types.
/// Strings and blobs are bound with `SQLITE_TRANSIENT` (SQLite copies them), as any Swift code
/// must do unless it nests every bind inside the `withUTF8` closures of the values it binds.
final class RawSQLite: Contender {
    nonisolated static let name = "raw C"

    /// The table, identical for the raw C and GRDB contenders and to the one Modelwright creates.
    nonisolated static let createTable = """
        CREATE TABLE "Person" ("id" BLOB PRIMARY KEY NOT NULL, "firstName" TEXT NOT NULL, \
        "lastName" TEXT NOT NULL, "age" INTEGER NOT NULL, "createdAt" REAL NOT NULL, "nickname" TEXT)
        """
    /// The index on `age`, named as Modelwright names it.
    nonisolated static let createIndex = #"CREATE INDEX "Person_index_age" ON "Person" ("age")"#

    private static let columns = #""id", "firstName", "lastName", "age", "createdAt", "nickname""#

    private let handle: OpaquePointer
    private let seeds: [PersonSeed]

    init(creatingAt url: URL, seeds: [PersonSeed]) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(url.path, &handle, flags, nil) == SQLITE_OK, let handle else {
            throw BenchmarkError("cannot open \(url.path)")
        }
        self.handle = handle
        self.seeds = seeds
        try execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL")
        try execute(Self.createTable)
        try execute(Self.createIndex)
    }

    func insertAll() throws {
        try execute("BEGIN IMMEDIATE")
        let statement = try prepare("INSERT INTO \"Person\" (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?)")
        defer { sqlite3_finalize(statement) }
        for seed in seeds {
            var uuid = seed.id.uuid
            withUnsafeBytes(of: &uuid) { bytes in
                _ = sqlite3_bind_blob(statement, 1, bytes.baseAddress, 16, transient)
            }
            bindText(statement, 2, seed.firstName)
            bindText(statement, 3, seed.lastName)
            sqlite3_bind_int64(statement, 4, Int64(seed.age))
            sqlite3_bind_double(statement, 5, seed.createdAt.timeIntervalSinceReferenceDate)
            if let nickname = seed.nickname {
                bindText(statement, 6, nickname)
            } else {
                sqlite3_bind_null(statement, 6)
            }
            guard sqlite3_step(statement) == SQLITE_DONE else { throw error("insert") }
            sqlite3_reset(statement)
        }
        try execute("COMMIT")
    }

    func fetchAll() throws -> (digest: Digest, records: Any) {
        let people = try inRead("SELECT \(Self.columns) FROM \"Person\"") { statement in rows(statement) }
        var digest = Digest()
        for person in people {
            digest.add(person)
        }
        return (digest, people)
    }

    func fetch(ages: [Int]) throws -> Digest {
        try inRead("SELECT \(Self.columns) FROM \"Person\" WHERE \"age\" = ?") { statement in
            var digest = Digest()
            for age in ages {
                sqlite3_bind_int64(statement, 1, Int64(age))
                for person in rows(statement) {
                    digest.add(person)
                }
            }
            return digest
        }
    }

    func fetchNewest(ages: [Int]) throws -> Digest {
        let sql = "SELECT \(Self.columns) FROM \"Person\" WHERE \"age\" = ? ORDER BY \"createdAt\" DESC LIMIT ?"
        return try inRead(sql) { statement in
            var digest = Digest()
            for age in ages {
                sqlite3_bind_int64(statement, 1, Int64(age))
                sqlite3_bind_int64(statement, 2, Int64(Workload.sortedLimit))
                for person in rows(statement) {
                    digest.add(person)
                }
            }
            return digest
        }
    }

    func lookUp(ids: [UUID]) throws -> Digest {
        try inRead("SELECT \(Self.columns) FROM \"Person\" WHERE \"id\" = ?") { statement in
            var digest = Digest()
            for id in ids {
                var uuid = id.uuid
                withUnsafeBytes(of: &uuid) { bytes in
                    _ = sqlite3_bind_blob(statement, 1, bytes.baseAddress, 16, transient)
                }
                if sqlite3_step(statement) == SQLITE_ROW {
                    digest.add(person(statement))
                }
                sqlite3_reset(statement)
            }
            return digest
        }
    }

    func count(minimumAge: Int, times: Int) throws -> Int {
        try execute("BEGIN DEFERRED")
        let statement = try prepare("SELECT COUNT(*) FROM \"Person\" WHERE \"age\" >= ?")
        var total = 0
        for _ in 0..<times {
            sqlite3_bind_int64(statement, 1, Int64(minimumAge))
            guard sqlite3_step(statement) == SQLITE_ROW else { throw error("count") }
            total += Int(sqlite3_column_int64(statement, 0))
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        try execute("COMMIT")
        return total
    }

    func close() {
        sqlite3_close_v2(handle)
    }

    // MARK: - C API helpers

    /// Runs `body` with `sql` prepared, inside one read transaction.
    private func inRead<Result>(_ sql: String, _ body: (OpaquePointer) throws -> Result) throws -> Result {
        try execute("BEGIN DEFERRED")
        let statement = try prepare(sql)
        let result = try body(statement)
        sqlite3_finalize(statement)
        try execute("COMMIT")
        return result
    }

    /// Every row of the bound statement, decoded; the statement is reset after, ready to bind again.
    private func rows(_ statement: OpaquePointer) -> [PersonSeed] {
        var people: [PersonSeed] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            people.append(person(statement))
        }
        sqlite3_reset(statement)
        return people
    }

    private func person(_ statement: OpaquePointer) -> PersonSeed {
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        if sqlite3_column_bytes(statement, 0) == 16, let bytes = sqlite3_column_blob(statement, 0) {
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: 16)) }
        }
        return PersonSeed(
            id: UUID(uuid: uuid),
            firstName: text(statement, 1),
            lastName: text(statement, 2),
            age: Int(sqlite3_column_int64(statement, 3)),
            createdAt: Date(timeIntervalSinceReferenceDate: sqlite3_column_double(statement, 4)),
            nickname: sqlite3_column_type(statement, 5) == SQLITE_NULL ? nil : text(statement, 5)
        )
    }

    private func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    private func bindText(_ statement: OpaquePointer, _ index: Int32, _ value: String) {
        var value = value
        value.withUTF8 { bytes in
            guard let base = bytes.baseAddress, !bytes.isEmpty else {
                // An empty string must stay text: a nil pointer would bind NULL.
                sqlite3_bind_text(statement, index, "", 0, transient)
                return
            }
            base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { chars in
                _ = sqlite3_bind_text(statement, index, chars, Int32(bytes.count), transient)
            }
        }
    }

    private func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw error(sql)
        }
        return statement
    }

    private func execute(_ sql: String) throws {
        guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else { throw error(sql) }
    }

    private func error(_ context: String) -> BenchmarkError {
        BenchmarkError("\(context): \(String(cString: sqlite3_errmsg(handle)))")
    }
}

/// Tells SQLite to copy bound bytes, since Swift's buffers do not outlive the call.
private let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A failure of the benchmark itself (a database that cannot be opened, results that disagree).
struct BenchmarkError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
