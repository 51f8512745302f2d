import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// When SQLite rolls back a whole transaction (a full disk, a trigger's `RAISE(ROLLBACK)`), the
/// transaction is over: the operations after it in the same closure throw, nothing of it commits,
/// no history records it, and `performAndSave` throws. The faults are real: `PRAGMA max_page_count`
/// on the writer's connection fills the disk, and a trigger raises. Each case draws its row
/// counts, page limit and the position of the failing operation; the closure is a best-effort
/// import that catches each operation's error and goes on. `MODELWRIGHT_LARGE=1` runs 20 times
/// as many cases.
@Suite(.serialized)
struct AbortedTransactionTests {
    private static let isLarge = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"

    private enum Fault: CaseIterable {
        case fullDisk, raiseRollback
    }

    /// The records a case writes: users (unique constraints, foreign keys) and tags (neither, so
    /// SQLite may answer a full disk by rolling back the whole transaction rather than the statement).
    private struct Snapshot: Equatable {
        var users: [UUID: User] = [:]
        var tags: [UUID: Tag] = [:]
    }

    /// What the closure saw, kept outside it, since a closure whose transaction fails returns nothing.
    private final class Journal: @unchecked Sendable {
        /// The records the store should hold if the transaction commits.
        var expected = Snapshot()
        /// Each operation's error, `nil` for one that succeeded, in order.
        var outcomes: [Error?] = []
    }

    private static func snapshot(_ store: Store) async throws -> Snapshot {
        let (users, tags) = try await store.performQuery { try ($0.fetch(User.request()), $0.fetch(Tag.request())) }
        return Snapshot(
            users: Dictionary(uniqueKeysWithValues: users.map { ($0.id.uuid, $0) }),
            tags: Dictionary(uniqueKeysWithValues: tags.map { ($0.id.uuid, $0) }))
    }

    private static func onWriter(_ store: Store, _ sql: String) throws {
        try store.writerQueue.sync { try store.writerConnection.execute(sql) }
    }

    private static func pageCount(_ store: Store) throws -> Int64 {
        try store.writerQueue.sync {
            let statement = try store.writerConnection.statement("PRAGMA page_count")
            defer { statement.reset() }
            return try statement.step() ? statement.int64(0) : 0
        }
    }

    /// An abort, whose engine-neutral cause names SQLite and its extended code (what a user reads
    /// without importing SQLite's types).
    private static func isAborted(_ error: Error?) -> Bool {
        guard let error = error as? StoreError, case .transactionAborted(let cause) = error else { return false }
        let neutral = EngineFailure(engine: "SQLite", code: String(cause.extendedCode), message: cause.message)
        return error.abortCause == neutral
    }

    /// A user whose free-text fields take room, so a few hundred fill pages.
    private static func user(_ name: String, using random: inout SplitMix64) -> User {
        User(
            username: name, givenName: String(repeating: "g", count: 20 + random.next(below: 600)), familyName: name,
            namePrefix: String(repeating: "p", count: random.next(below: 200)), rating: Int16(random.next(below: 100)))
    }

    private static func tag(_ name: String, using random: inout SplitMix64) -> Tag {
        Tag(name: name + String(repeating: "t", count: random.next(below: 1_000)))
    }

    @Test("a transaction SQLite rolled back commits nothing, records no history, and performAndSave throws")
    func abortedTransactionCommitsNothing() async throws {
        var counts: [String: Int] = [:]
        var random = SplitMix64(seed: 0x2430)
        for index in 0..<(Self.isLarge ? 1_200 : 60) {
            let fault = Fault.allCases[index % 2]
            let history = random.next(below: 2) == 0
            let url = temporaryStoreURL()
            defer { removeStore(at: url) }
            let store = try Store(
                url: url, schema: Fixture.schema, history: history ? .enabled(author: "app") : .disabled)
            defer { try? store.close() }
            // A temporary trigger, the writer connection's own: one in the store's schema is
            // another program's change, which the store refuses (StoreVerificationTests).
            try Self.onWriter(
                store,
                "CREATE TEMP TRIGGER \"poison\" BEFORE INSERT ON main.\"User\" WHEN NEW.\"username\" LIKE 'poison%' "
                    + "BEGIN SELECT RAISE(ROLLBACK, 'poisoned row'); END")
            let outcome = try await Self.runCase(
                store, fault: fault, history: history, name: "\(index)", using: &random)
            counts["\(fault) \(outcome)", default: 0] += 1
        }
        // The case generator must reach what it tests: transactions SQLite rolled back, by both faults.
        #expect(counts["fullDisk aborted", default: 0] > 0, "\(counts)")
        #expect(counts["raiseRollback aborted", default: 0] > 0, "\(counts)")
        print("aborted-transaction cases: \(counts.sorted { $0.key < $1.key })")
    }

    /// One best-effort import into `store`; returns whether it `committed`, was `aborted` or failed otherwise.
    private static func runCase(
        _ store: Store, fault: Fault, history: Bool, name: String, using random: inout SplitMix64
    ) async throws -> String {
        // A few records to start from, so that "nothing changed" is not "the store is empty".
        let seedUsers = (0..<1 + random.next(below: 5)).map { user("seed\(name)-\($0)", using: &random) }
        let seedTags = (0..<random.next(below: 5)).map { tag("seed\(name)-\($0)", using: &random) }
        try await store.performAndSave { context in
            try context.batchInsert(seedUsers)
            try context.batchInsert(seedTags)
        }
        let before = try await snapshot(store)
        let tokenBefore = try await store.lastHistoryToken()
        let operations = 3 + random.next(below: 60)
        let poisonAt = random.next(below: operations)
        if fault == .fullDisk {
            try onWriter(store, "PRAGMA max_page_count = \(try pageCount(store) + Int64(random.next(below: 6)))")
        }
        // The operations are drawn here, so the closure is the same on every run of the case.
        var plan: [(kind: Int, users: [User], tags: [Tag], pick: Int)] = []
        for step in 0..<operations {
            let kind = step == poisonAt ? 0 : random.next(below: 11)
            let count = kind >= 9 ? 2 + random.next(below: 3) : 1
            let prefix = fault == .raiseRollback && step == poisonAt ? "poison" : "u"
            let users = (0..<count).map { user("\(prefix)\(name)-\(step)-\($0)", using: &random) }
            let tags = (0..<count).map { tag("\(name)-\(step)-\($0)", using: &random) }
            plan.append((kind, users, tags, random.next(below: 1_000)))
        }
        let journal = Journal()
        journal.expected = before
        let steps = plan
        let result: Result<Void, Error>
        do {
            try await store.performAndSave { context in
                for (kind, users, tags, pick) in steps {
                    let ids = journal.expected.users.keys.sorted { $0.uuidString < $1.uuidString }
                    do {
                        switch kind {
                        case 0...2:
                            try context.insert(users[0])
                            journal.expected.users[users[0].id.uuid] = users[0]
                        case 3...5:
                            try context.insert(tags[0])
                            journal.expected.tags[tags[0].id.uuid] = tags[0]
                        case 6...7:
                            guard !ids.isEmpty else { continue }
                            var changed = journal.expected.users[ids[pick % ids.count]] ?? users[0]
                            changed.rating = users[0].rating
                            changed.namePrefix = users[0].namePrefix
                            try context.update(changed)
                            journal.expected.users[changed.id.uuid] = changed
                        case 8:
                            guard !ids.isEmpty else { continue }
                            let id = ids[pick % ids.count]
                            try context.delete(RecordID<User>(id))
                            journal.expected.users[id] = nil
                        case 9:
                            try context.batchInsert(users)
                            for user in users { journal.expected.users[user.id.uuid] = user }
                        default:
                            try context.batchInsert(tags)
                            for tag in tags { journal.expected.tags[tag.id.uuid] = tag }
                        }
                        journal.outcomes.append(nil)
                    } catch {
                        journal.outcomes.append(error)
                    }
                }
            }
            result = .success(())
        } catch {
            result = .failure(error)
        }
        try onWriter(store, "PRAGMA max_page_count = 1073741823")

        let after = try await snapshot(store)
        let tokenAfter = try await store.lastHistoryToken()
        let firstAbort = journal.outcomes.firstIndex { isAborted($0) }
        let context =
            "case \(name), \(fault), \(operations) operations, outcomes \(journal.outcomes.map { $0.map { "\($0)" } ?? "ok" })"
        if let firstAbort {
            // The operation whose error ended the transaction is the one before the first abort;
            // every operation after it threw without running.
            #expect(journal.outcomes[firstAbort...].allSatisfy(isAborted), "\(context)")
            #expect(firstAbort > 0 && journal.outcomes[firstAbort - 1] != nil, "\(context)")
        }
        switch result {
        case .success:
            #expect(firstAbort == nil, "\(context)")
            #expect(after == journal.expected, "\(context)")
            if history, after != before {
                #expect(tokenAfter != tokenBefore, "\(context)")
            }
        case .failure(let error):
            // Nothing of the transaction is visible, and history did not record it.
            #expect(after == before, "\(context): \(error)")
            #expect(tokenAfter == tokenBefore, "\(context): \(error)")
            let isFull = (error as? SQLiteError)?.code == 13  // SQLITE_FULL on COMMIT itself
            #expect(isAborted(error) || isFull, "\(context): \(error)")
        }
        // The store writes again as soon as the cause is gone.
        let next = user("next\(name)", using: &random)
        try await store.performAndSave { try $0.insert(next) }
        #expect(try await snapshot(store).users[next.id.uuid] == next, "\(context)")
        switch result {
        case .success: return journal.outcomes.contains { $0 != nil } ? "committed after errors" : "committed"
        case .failure: return firstAbort == nil ? "failed at commit" : "aborted"
        }
    }

    // MARK: - Migration stages

    private static let v1 = SchemaDescription(
        modelName: "Abort", version: 1,
        entities: [
            EntityDescription(
                name: "Entry",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "price", type: .double),
                    AttributeDescription(name: "note", type: .string, isOptional: true),
                ])
        ])
    /// Drops `note` (a table rebuild) and adds `tag`.
    private static let v2 = SchemaDescription(
        modelName: "Abort", version: 2,
        entities: [
            EntityDescription(
                name: "Entry",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "price", type: .double),
                    AttributeDescription(name: "tag", type: .string, isOptional: true),
                ])
        ])

    /// A plan whose one stage doubles every price and fills `tag`, row by row, catching each
    /// row's error (a best-effort step); with a fault, the disk fills `slack` pages on, or a
    /// trigger rolls back the transaction at row `poisonAt`.
    private static func plan(fault: Fault?, slack: Int, poisonAt: Int) -> MigrationPlan {
        let step = MigrationStage.CustomStep(
            name: "double", label: "Double every price",
            willMigrate: { context in
                switch fault {
                case .fullDisk?:
                    let pages = try context.query("PRAGMA page_count").first?["page_count"] ?? .integer(0)
                    guard case .integer(let count) = pages else { return }
                    try context.execute("PRAGMA max_page_count = \(count + Int64(slack))")
                case .raiseRollback?:
                    try context.execute(
                        "CREATE TEMP TRIGGER \"poison\" BEFORE UPDATE ON main.\"Entry\" "
                            + "WHEN NEW.\"name\" = 'entry \(poisonAt)' BEGIN SELECT RAISE(ROLLBACK, 'poisoned row'); END"
                    )
                case nil:
                    break
                }
            },
            didMigrate: { context in
                for row in try context.rows(of: "Entry") {
                    guard case .real(let price) = row["price"] else { continue }
                    try? context.update(
                        "Entry", id: row.id,
                        set: ["price": .real(price * 2), "tag": .text(String(repeating: "t", count: 200))])
                }
            })
        return MigrationPlan(current: v2, stages: [.custom(from: v1, to: v2, steps: [step])])
    }

    private static func query(_ url: URL, _ sql: String) throws -> String {
        let connection = try SQLiteConnection(path: url.path, readOnly: true)
        let statement = try SQLiteStatement(connection: connection, sql: sql)
        return try statement.step() ? statement.string(0) : ""
    }

    @Test("a stage SQLite rolled back leaves the old store intact, and it migrates once the cause is gone")
    func abortedStageLeavesTheOldStore() throws {
        var random = SplitMix64(seed: 0x2440)
        var failed = 0
        let cases = Self.isLarge ? 400 : 16
        for index in 0..<cases {
            let fault = Fault.allCases[index % 2]
            let history = random.next(below: 2) == 0
            let tracking: HistoryTracking = history ? .enabled(author: "app") : .disabled
            let url = temporaryStoreURL()
            defer { removeStore(at: url) }
            let rows = 1 + random.next(below: 400)
            try Store(url: url, schema: Self.v1, history: tracking).close()
            try SQLiteConnection(path: url.path).execute(
                "WITH RECURSIVE n(value) AS (SELECT 0 UNION ALL SELECT value + 1 FROM n WHERE value < \(rows - 1)) "
                    + "INSERT INTO \"Entry\" (\"id\", \"name\", \"price\", \"note\") "
                    + "SELECT randomblob(16), 'entry ' || value, value + 0.5, substr(hex(randomblob(100)), 1, value % 150) FROM n"
            )
            let content =
                "SELECT count(*) || ':' || total(price) || ':' || group_concat(name || '=' || price || '=' || ifnull(note, '-'), ',') FROM (SELECT * FROM Entry ORDER BY name)"
            let before = try Self.query(url, content)
            let historyBefore = history ? try Self.query(url, "SELECT count(*) FROM _mw_history_transactions") : ""

            let slack = random.next(below: 40)
            let poisonAt = random.next(below: rows)
            let context =
                "case \(index): \(fault), \(rows) rows, slack \(slack), poison at \(poisonAt), history \(history)"
            do {
                try Store(
                    url: url, migrationPlan: Self.plan(fault: fault, slack: slack, poisonAt: poisonAt),
                    history: tracking
                )
                .close()
                // A full disk with room enough to migrate: the stage ran once.
                #expect(fault == .fullDisk, "\(context)")
            } catch {
                failed += 1
                #expect(try Self.query(url, "SELECT value FROM _modelwright_metadata WHERE key = 'version'") == "1")
                #expect(try Self.query(url, content) == before, "\(context): \(error)")
                if history {
                    #expect(try Self.query(url, "SELECT count(*) FROM _mw_history_transactions") == historyBefore)
                }
                #expect(try Self.query(url, "PRAGMA integrity_check") == "ok", "\(context)")
                try Store(url: url, migrationPlan: Self.plan(fault: nil, slack: 0, poisonAt: 0), history: tracking)
                    .close()
            }
            #expect(try Self.query(url, "SELECT value FROM _modelwright_metadata WHERE key = 'version'") == "2")
            let wrong = try Self.query(
                url, "SELECT count(*) FROM Entry WHERE price <> 2 * (CAST(substr(name, 7) AS INTEGER) + 0.5)")
            #expect(wrong == "0", "\(context)")
            #expect(try Self.query(url, "SELECT count(*) FROM Entry") == String(rows), "\(context)")
        }
        // Every poisoned stage fails, and most full disks: the generator reaches what it tests.
        #expect(failed > cases / 2, "\(failed) of \(cases) stages failed")
    }

    /// The errors a custom step's statements met, kept outside the step.
    private final class Errors: @unchecked Sendable {
        var errors: [Error] = []
    }

    @Test(
        "a custom step cannot end the stage's transaction: BEGIN, COMMIT and ROLLBACK are refused",
        arguments: [
            "COMMIT", "END", "ROLLBACK", "BEGIN", "BEGIN IMMEDIATE", "commit transaction", " Rollback Transaction ",
        ])
    func stepCannotEndTheTransaction(statement: String) throws {
        let url = temporaryStoreURL()
        defer { removeStore(at: url) }
        try Store(url: url, schema: Self.v1).close()
        try SQLiteConnection(path: url.path).execute(
            "INSERT INTO \"Entry\" (\"id\", \"name\", \"price\") VALUES (randomblob(16), 'entry 3', 3.5)")
        let seen = Errors()
        let step = MigrationStage.CustomStep(
            name: "double", label: "Double every price",
            willMigrate: { context in
                do {
                    try context.execute(statement)
                } catch {
                    seen.errors.append(error)
                }
                // Savepoints nest inside the stage's transaction, and stay allowed.
                try context.execute("SAVEPOINT \"mine\"")
                try context.execute("RELEASE \"mine\"")
            },
            didMigrate: { context in try context.execute("UPDATE \"Entry\" SET \"price\" = \"price\" * 2") })
        try Store(
            url: url,
            migrationPlan: MigrationPlan(current: Self.v2, stages: [.custom(from: Self.v1, to: Self.v2, steps: [step])])
        )
        .close()
        let refusal = seen.errors.first as? SQLiteError
        #expect(seen.errors.count == 1 && refusal?.code == 23, "\(seen.errors)")  // SQLITE_AUTH
        #expect(refusal?.message.contains("BEGIN, COMMIT and ROLLBACK cannot run") == true)
        #expect(try Self.query(url, "SELECT value FROM _modelwright_metadata WHERE key = 'version'") == "2")
        #expect(try Self.query(url, "SELECT price FROM Entry") == "7.0")
    }
}
