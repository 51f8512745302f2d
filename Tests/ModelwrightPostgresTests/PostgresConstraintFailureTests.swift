import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightPostgres

/// `PostgresConnection` as a `DatabaseConnection`: the server's constraint errors read as the
/// runtime's `ConstraintFailure`, so a store on PostgreSQL names the entity and attributes of a
/// broken constraint as it does on SQLite.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresConstraintFailureTests {
    /// A column name drawn from letters, digits, spaces and double quotes (never a comma, which
    /// the server's detail does not escape).
    static func columnName(_ random: inout SplitMix64) -> String {
        let alphabet = Array("abcXYZ019 \"_é")
        return String((0..<random.size(in: 1...8)).map { _ in alphabet[random.next(below: alphabet.count)] })
    }

    /// Many unique keys of one or several oddly named columns: the failure lists exactly those columns.
    @Test func aUniqueFailureNamesTheKeysColumns() async throws {
        let connection = try await makeConnection()
        var random = SplitMix64(seed: 0x23505)
        for round in 0..<25 {
            var names: [String] = []
            while names.count < random.size(in: 1...3) {
                let name = Self.columnName(&random)
                if !names.contains(name) { names.append(name) }
            }
            let quoted = names.map(connection.dialect.identifier)
            let table = connection.dialect.identifier("t\(round)")
            try engine {
                try connection.execute(
                    "CREATE TABLE \(table) (\(quoted.map { "\($0) bigint" }.joined(separator: ", ")), "
                        + "UNIQUE (\(quoted.joined(separator: ", "))))")
            }
            let insert = "INSERT INTO \(table) VALUES (\(connection.dialect.parameters(names.count)))"
            for attempt in 0..<2 {
                let statement = try connection.prepare(insert)
                for index in names.indices { statement.bind(Int64(index), Int32(index + 1)) }
                do {
                    try statement.run()
                    #expect(attempt == 0, "a duplicate of \(names) was stored")
                } catch {
                    #expect(attempt == 1)
                    #expect(connection.constraintFailure(in: error) == .unique(columns: names), "\(names)")
                }
            }
        }
    }

    /// A NULL in a NOT NULL column, and a foreign key broken at commit (deferred), in and out of
    /// a transaction; any other error is no constraint failure.
    @Test func notNullAndForeignKeyFailuresAreRecognisedAndOthersAreNot() async throws {
        let connection = try await makeConnection()
        try engine {
            try connection.execute([
                "CREATE TABLE p (id bigint PRIMARY KEY)",
                "CREATE TABLE c (v bigint NOT NULL, p bigint REFERENCES p DEFERRABLE INITIALLY DEFERRED)",
            ])
        }
        do {
            try engine { try connection.execute("INSERT INTO c VALUES (NULL, NULL)") }
            Issue.record("a NULL was stored in a NOT NULL column")
        } catch {
            guard case .notNull = connection.constraintFailure(in: error) else {
                Issue.record("not read as NOT NULL: \(error)")
                return
            }
        }
        try connection.begin(.immediate)
        try engine { try connection.execute("INSERT INTO c VALUES (1, 42)") }
        do {
            try connection.commit()
            Issue.record("a dangling reference committed")
        } catch {
            #expect(connection.constraintFailure(in: error) == .danglingReference(table: "c", column: "p"), "\(error)")
        }
        connection.rollback()
        do {
            try engine { try connection.execute("SELECT no_such_column FROM p") }
        } catch {
            #expect(connection.constraintFailure(in: error) == nil)
        }
        #expect(connection.constraintFailure(in: CocoaError(.fileNoSuchFile)) == nil)
    }
}
