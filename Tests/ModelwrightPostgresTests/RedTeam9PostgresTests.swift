import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright
@testable import ModelwrightPostgres

/// Red team 9: PostgreSQL reads (cells read in place, ASCII checked eight bytes at a time, UUIDs
/// loaded whole, request SQL numbered once per connection and shape). A failing test is a break.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct RedTeam9PostgresTests {
    static let schema = SchemaDescription(
        modelName: "RedTeam9",
        version: 1,
        entities: [
            EntityDescription(
                name: "Note",
                attributes: [
                    AttributeDescription(name: "title", type: .string, isOptional: true),
                    AttributeDescription(name: "link", type: .url, isOptional: true),
                    AttributeDescription(name: "count", type: .int32, isOptional: true),
                    AttributeDescription(name: "token", type: .uuid, isOptional: true),
                    AttributeDescription(name: "body", type: .string),
                ]
            )
        ]
    )

    struct Note: Record, Hashable {
        typealias ID = RecordID<Note>
        static let entityName = "Note"
        let id: ID
        var title: String?
        var link: URL?
        var count: Int32?
        var token: UUID?
        var body: String

        init(
            id: ID = ID(), title: String? = nil, link: URL? = nil, count: Int32? = nil, token: UUID? = nil,
            body: String = ""
        ) {
            self.id = id
            self.title = title
            self.link = link
            self.count = count
            self.token = token
            self.body = body
        }

        func encode(to row: inout RowEncoder) throws {
            try row.encode(title)
            try row.encode(link)
            try row.encode(count)
            try row.encode(token)
            try row.encode(body)
        }

        init(id: ID, row: inout RowDecoder) throws {
            self.id = id
            title = try row.decode()
            link = try row.decode()
            count = try row.decode()
            token = try row.decode()
            body = try row.decode()
        }

        struct Fields: RecordFields {
            typealias Target = Note
            let path: FieldPath
        }
    }

    /// A fresh database of `encoding` on the shared cluster.
    static func database(encoding: String? = nil) async throws -> PostgresConfiguration {
        guard let encoding else { return try await makeDatabase() }
        let cluster = try #require(PostgresCluster.shared)
        let name = "mw_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        let admin = try await PostgresConnection(PostgresConfiguration(cluster.connectionString()))
        try await admin.execute(
            "CREATE DATABASE \(name) ENCODING '\(encoding)' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
        await admin.close()
        return PostgresConfiguration(cluster.connectionString(database: name))
    }

    static func request(_ condition: Condition? = nil) -> FetchRequest<Note> {
        FetchRequest<Note>(condition: condition)
    }

    /// A hostile writer stores bytes that are not UTF-8 in a `URL?` column of a SQL_ASCII database
    /// (which takes any bytes). "Text from the server that is not UTF-8 is an error": the fetch
    /// must throw, as it does for a `String?` column, never read the value as nil.
    @Test func invalidUTF8InAnOptionalURLIsAnErrorNotNil() async throws {
        let configuration = try await Self.database(encoding: "SQL_ASCII")
        let store = try Store(postgres: configuration, schema: Self.schema, readers: 1)
        let note = Note(title: "t", link: URL(string: "https://example.com/a"), body: "b")
        try await store.performAndSave { [note] in try $0.insert(note) }
        let table = try store.layout.entity("Note").table
        let raw = try await PostgresConnection(configuration)
        let changed = try await raw.execute(
            "UPDATE \"\(table)\" SET \"link\" = E'https://x/\\xff'")
        #expect(changed == 1)
        await raw.close()
        var outcome = "no error"
        do {
            let notes = try await store.performQuery { try $0.fetch(Self.request()) }
            outcome = "read \(notes.map { String(describing: $0.link) })"
            #expect(notes.first?.link != nil, "a URL? holding bytes that are not UTF-8 read as nil, silently")
        } catch {
            outcome = "\(error)"
        }
        print("invalid UTF-8 URL?: \(outcome)")
        try store.close()
    }

    /// The same for the title (`String?`): an error, never nil nor repaired text.
    @Test func invalidUTF8InAnOptionalStringIsAnError() async throws {
        let configuration = try await Self.database(encoding: "SQL_ASCII")
        let store = try Store(postgres: configuration, schema: Self.schema, readers: 1)
        try await store.performAndSave { try $0.insert(Note(title: "t", body: "b")) }
        let table = try store.layout.entity("Note").table
        let raw = try await PostgresConnection(configuration)
        for offset in [0, 7, 8, 9, 15, 16, 17] {
            let prefix = String(repeating: "a", count: offset)
            _ = try await raw.execute(
                "UPDATE \"\(table)\" SET \"title\" = E'\(prefix)\\xc3'")
            await #expect(throws: (any Error).self, "offset \(offset)") {
                let notes = try await store.performQuery { try $0.fetch(Self.request()) }
                print("offset \(offset): read \(notes.map { String(describing: $0.title) })")
            }
        }
        await raw.close()
        try store.close()
    }

    /// Text with a non-ASCII scalar at every byte offset 0 through 17 (around the 8-byte words the
    /// ASCII check reads), empty text and long text, written and read back through a store, and
    /// found again by equality.
    @Test func textWithNonASCIIAtEveryOffsetRoundTrips() async throws {
        let configuration = try await Self.database()
        let store = try Store(postgres: configuration, schema: Self.schema, readers: 2)
        var notes: [Note] = []
        for wide in ["é", "€", "🙂", "\u{7F}", "\u{80}", "\u{10FFFF}", "\u{1}"] {
            for length in 0...17 {
                for offset in 0...length {
                    var scalars = Array(repeating: "x", count: length)
                    scalars.insert(wide, at: offset)
                    notes.append(Note(title: scalars.joined(), body: scalars.joined()))
                }
            }
        }
        notes.append(Note(title: "", body: ""))
        notes.append(
            Note(title: String(repeating: "ab", count: 600_000) + "é", body: String(repeating: "€", count: 100_000)))
        try await store.performAndSave { [notes] context in for note in notes { try context.insert(note) } }
        let read = try await store.performQuery { try $0.fetch(Self.request()) }
        let byID = Dictionary(uniqueKeysWithValues: read.map { ($0.id, $0) })
        var wrong: [String] = []
        for note in notes where byID[note.id] != note {
            wrong.append("\(note.title?.unicodeScalars.map { String($0.value, radix: 16) } ?? [])")
        }
        #expect(wrong.isEmpty, "\(wrong.count) wrong: \(wrong.prefix(5))")
        for note in notes.prefix(300) {
            let found = try await store.performQuery {
                try $0.fetch(Self.request(.comparison(ColumnPath(column: "title"), .equal, .text(note.title ?? ""))))
            }
            #expect(found.map(\.id) == [note.id] || note.title == "", "\(note.title ?? "")")
        }
        try store.close()
    }

    /// NULL in every column position, UUIDs of every byte pattern, Int32 extremes.
    @Test func nullsAndUUIDPatternsAndExtremesRoundTrip() async throws {
        let configuration = try await Self.database()
        let store = try Store(postgres: configuration, schema: Self.schema, readers: 1)
        var notes: [Note] = []
        let patterns: [UInt8] = [0x00, 0xFF, 0x80, 0x7F, 0x01, 0xFE]
        for byte in patterns {
            let uuid = UUID(
                uuid: (byte, byte, byte, byte, byte, byte, byte, byte, byte, byte, byte, byte, byte, byte, byte, byte))
            notes.append(Note(token: uuid, body: "p\(byte)"))
        }
        for position in 0..<16 {
            var bytes = [UInt8](repeating: 0, count: 16)
            bytes[position] = 0xFF
            let uuid = bytes.withUnsafeBytes { UUID(uuid: $0.loadUnaligned(as: uuid_t.self)) }
            notes.append(Note(token: uuid, body: "one \(position)"))
        }
        for mask in 0..<16 {
            notes.append(
                Note(
                    title: mask & 1 == 0 ? nil : "t", link: mask & 2 == 0 ? nil : URL(string: "https://e.x"),
                    count: mask & 4 == 0 ? nil : (mask & 8 == 0 ? Int32.min : Int32.max),
                    token: mask & 8 == 0 ? nil : UUID(), body: ""))
        }
        try await store.performAndSave { [notes] context in for note in notes { try context.insert(note) } }
        let read = try await store.performQuery { try $0.fetch(Self.request()) }
        #expect(Set(read) == Set(notes))
        for note in notes where note.token != nil {
            let found = try await store.performQuery {
                try $0.fetch(
                    Self.request(
                        .comparison(
                            ColumnPath(column: "token"), .equal,
                            .blob(withUnsafeBytes(of: note.token!.uuid) { Data($0) }))))
            }
            #expect(found.map(\.id) == [note.id], "\(note.token!)")
        }
        try store.close()
    }

    /// Requests of one shape with different values, and shapes that differ only in an IN list's
    /// length, interleaved across tasks and reader connections: each answer is its own request's.
    @Test func interleavedShapesAnswerTheirOwnRequest() async throws {
        let configuration = try await Self.database()
        let store = try Store(postgres: configuration, schema: Self.schema, readers: 3)
        let notes = (0..<60).map { Note(title: "n\($0)", count: Int32($0), body: "b\($0 % 7)") }
        try await store.performAndSave { context in for note in notes { try context.insert(note) } }
        let failures = try await withThrowingTaskGroup(of: [String].self) { group in
            for task in 0..<8 {
                group.addTask {
                    var random = SplitMix64(seed: UInt64(task + 1))
                    var failures: [String] = []
                    for _ in 0..<60 {
                        let size = random.size(in: 0...6)
                        let picked = (0..<size).map { _ in Int(random.next(below: 60)) }
                        var values: [SQLValue] = picked.map { .integer(Int64($0)) }
                        if random.chance(0.2) { values.append(.null) }
                        let condition: Condition =
                            random.chance(0.5)
                            ? .inList(ColumnPath(column: "count"), values)
                            : .comparison(ColumnPath(column: "title"), .equal, .text("n\(picked.first ?? 0)"))
                        let limit = random.chance(0.3) ? 2 : nil
                        let request = FetchRequest<Note>(
                            condition: condition,
                            sortKeys: [SortKey(path: ColumnPath(column: "count"), ascending: true)], fetchLimit: limit)
                        let expected: [Int] = {
                            switch condition {
                            case .inList: return Array(Set(picked)).sorted()
                            default: return [picked.first ?? 0]
                            }
                        }()
                        let got = try await store.performQuery { try $0.fetch(request) }.compactMap {
                            $0.count.map(Int.init)
                        }
                        let want = limit.map { Array(expected.prefix($0)) } ?? expected
                        if got != want {
                            failures.append("\(condition) limit \(String(describing: limit)): \(got) != \(want)")
                        }
                    }
                    return failures
                }
            }
            var all: [String] = []
            for try await failures in group { all += failures }
            return all
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
        try store.close()
    }

    /// Another process retypes `count` to bigint behind the open store's back and writes a value
    /// an Int32 cannot hold: the store's cached statement is re-prepared, and the read is an
    /// error, never a truncated number; a value that fits reads right.
    @Test func aColumnRetypedBehindTheStoresBackIsReadRightOrRefused() async throws {
        let configuration = try await Self.database()
        let store = try Store(postgres: configuration, schema: Self.schema, readers: 1)
        let note = Note(title: "t", count: 5, body: "b")
        try await store.performAndSave { [note] in try $0.insert(note) }
        _ = try await store.performQuery { try $0.fetch(Self.request()) }
        _ = try await store.performQuery { try $0.existing(note.id) }
        let table = try store.layout.entity("Note").table
        let raw = try await PostgresConnection(configuration)
        _ = try await raw.execute("ALTER TABLE \"\(table)\" ALTER COLUMN \"count\" TYPE bigint")
        _ = try await raw.execute("ALTER TABLE \"\(table)\" ALTER COLUMN \"title\" TYPE varchar(100)")
        // The first read after the change, then a second: PostgreSQL answers the cached plan with
        // 0A000 once per connection; the connection re-prepares outside a transaction only.
        var firstErrors: [String] = []
        var fits: Note?
        for _ in 0..<3 {
            do {
                fits = try await store.performQuery { [id = note.id] in try $0.existing(id) }
                break
            } catch {
                firstErrors.append("\(error)")
            }
        }
        #expect(firstErrors.isEmpty, "a compatible retype by another process fails reads: \(firstErrors)")
        #expect(fits?.count == 5 && fits?.title == "t", "\(String(describing: fits))")
        _ = try await raw.execute("UPDATE \"\(table)\" SET \"count\" = 4294967301")
        var outcomes: [String] = []
        for _ in 0..<3 {
            do {
                let read = try await store.performQuery { try $0.fetch(Self.request()) }
                outcomes.append("read \(read.map(\.count))")
            } catch {
                outcomes.append("\(error)")
            }
        }
        print("retyped: \(outcomes)")
        #expect(!outcomes.contains { $0.hasPrefix("read") }, "an Int32 read a bigint it cannot hold: \(outcomes)")
        await raw.close()
        try store.close()
    }

    static let extremesSchema = SchemaDescription(
        modelName: "RedTeam9Extremes",
        version: 1,
        entities: [
            EntityDescription(
                name: "Ext",
                attributes: [
                    AttributeDescription(name: "d", type: .decimal, isOptional: true),
                    AttributeDescription(name: "x", type: .double, isOptional: true),
                    AttributeDescription(name: "f", type: .float, isOptional: true),
                    AttributeDescription(name: "t", type: .date, isOptional: true),
                    AttributeDescription(name: "s", type: .int16, isOptional: true),
                    AttributeDescription(name: "b", type: .data, isOptional: true),
                ]
            )
        ]
    )

    struct Ext: Record, Hashable {
        typealias ID = RecordID<Ext>
        static let entityName = "Ext"
        let id: ID
        var d: Decimal?
        var x: Double?
        var f: Float?
        var t: Date?
        var s: Int16?
        var b: Data?

        init(d: Decimal? = nil, x: Double? = nil, f: Float? = nil, t: Date? = nil, s: Int16? = nil, b: Data? = nil) {
            id = ID()
            (self.d, self.x, self.f, self.t, self.s, self.b) = (d, x, f, t, s, b)
        }

        func encode(to row: inout RowEncoder) throws {
            try row.encode(d)
            try row.encode(x)
            try row.encode(f)
            try row.encode(t)
            try row.encode(s)
            try row.encode(b)
        }

        init(id: ID, row: inout RowDecoder) throws {
            self.id = id
            d = try row.decode()
            x = try row.decode()
            f = try row.decode()
            t = try row.decode()
            s = try row.decode()
            b = try row.decode()
        }

        struct Fields: RecordFields {
            typealias Target = Ext
            let path: FieldPath
        }
    }

    /// Every attribute type's extremes beyond the shared lists, written and read back through a
    /// store: Decimal's largest and smallest magnitudes, Float subnormals and -0.0, Date's
    /// infinities and distant past, Int16's ends, bytes with zeros and 0xFF. Each comes back equal
    /// (bit for bit for the floating-point ones), or the write is refused; never a different value.
    @Test func attributeExtremesRoundTripThroughAStore() async throws {
        let configuration = try await Self.database()
        let store = try Store(postgres: configuration, schema: Self.extremesSchema, readers: 1)
        let decimals: [Decimal] = [
            .greatestFiniteMagnitude, .leastFiniteMagnitude, .leastNonzeroMagnitude, -.leastNonzeroMagnitude,
            Decimal(string: "1e100")!, Decimal(string: "-12345678901234567890123456789012345678e-50")!, 0,
        ]
        let floats: [Float] = [
            .leastNonzeroMagnitude, -0.0, .greatestFiniteMagnitude, .infinity, -.leastNormalMagnitude,
        ]
        let dates: [Date] = [
            .distantPast, .distantFuture, Date(timeIntervalSinceReferenceDate: .infinity),
            Date(timeIntervalSinceReferenceDate: -.infinity), Date(timeIntervalSinceReferenceDate: -63_113_904_000),
        ]
        var rows: [Ext] = []
        for value in decimals { rows.append(Ext(d: value)) }
        for value in floats { rows.append(Ext(f: value)) }
        for value in dates { rows.append(Ext(t: value)) }
        for value in [Int16.min, .max, 0, -1] { rows.append(Ext(s: value)) }
        for value in [Double.leastNonzeroMagnitude, -0.0, .greatestFiniteMagnitude] { rows.append(Ext(x: value)) }
        rows.append(Ext(b: Data([0, 0xFF, 0, 0x80])))
        rows.append(Ext(b: Data()))
        var refused: [String] = []
        var written: [Ext] = []
        for row in rows {
            do {
                try await store.performAndSave { try $0.insert(row) }
                written.append(row)
            } catch {
                refused.append("\(row): \(error)")
            }
        }
        print("extremes refused: \(refused)")
        let read = try await store.performQuery { try $0.fetch(FetchRequest<Ext>()) }
        let byID = Dictionary(uniqueKeysWithValues: read.map { ($0.id, $0) })
        var wrong: [String] = []
        for row in written {
            guard let back = byID[row.id] else {
                wrong.append("missing \(row)")
                continue
            }
            let same =
                back.d == row.d && back.s == row.s && back.b == row.b
                && back.x?.bitPattern == row.x?.bitPattern && back.f?.bitPattern == row.f?.bitPattern
                && back.t?.timeIntervalSinceReferenceDate.bitPattern == row.t?.timeIntervalSinceReferenceDate.bitPattern
            if !same { wrong.append("\(row) came back \(back)") }
        }
        #expect(wrong.isEmpty, "\(wrong)")
        try store.close()
    }

    /// Reads cancelled at drawn moments (before, while and after the server answers) on a store of
    /// one reader, each followed by a read of another value: every read that completes answers
    /// its own request, never rows left over from the cancelled one.
    @Test func cancelledReadsLeaveNoRowsForTheNext() async throws {
        let configuration = try await Self.database()
        let store = try Store(postgres: configuration, schema: Self.schema, readers: 1)
        let notes = (0..<200).map {
            Note(title: "n\($0)", count: Int32($0), body: String(repeating: "b", count: $0 * 50))
        }
        try await store.performAndSave { context in for note in notes { try context.insert(note) } }
        var random = SplitMix64(seed: 9_009)
        var wrong: [String] = []
        var cancelled = 0
        for round in 0..<150 {
            let wide = random.chance(0.5)
            let victim = Task {
                try await store.performQuery { context in
                    try context.fetch(
                        FetchRequest<Note>(
                            condition: wide ? nil : .comparison(ColumnPath(column: "count"), .greater, .integer(100))))
                }
            }
            let delay = random.chance(0.5) ? 0 : random.next(below: 400)
            if delay > 0 { try await Task.sleep(nanoseconds: UInt64(delay) * 1_000) }
            victim.cancel()
            if case .failure = await victim.result { cancelled += 1 }
            let target = Int(random.next(below: 200))
            do {
                let read = try await store.performQuery { context in
                    try context.fetch(
                        FetchRequest<Note>(
                            condition: .comparison(ColumnPath(column: "count"), .equal, .integer(Int64(target)))))
                }
                if read.map(\.count) != [Int32(target)] {
                    wrong.append("round \(round): \(read.map(\.count)) for \(target)")
                }
            } catch {
                wrong.append("round \(round): \(error)")
            }
        }
        print("cancelled reads: \(cancelled) of 150")
        #expect(wrong.isEmpty, "\(wrong.prefix(5))")
        try store.close()
    }
}
