import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

/// A statement outside a transaction whose implicit commit fails (a deferred foreign key, as every
/// store's references are) throws, through the public API and through the engine interface the
/// runtime writes with: the server sends the statement's own result, then the commit's error, and
/// the first alone said it had succeeded while the row was gone (the corpus test's synthetic rows on
/// PostgreSQL lost every row inserted before the row it points at, with no error).
///
/// Each drawn case inserts rows, some pointing at a row that exists and some at one that does not:
/// exactly the dangling ones throw (`23503`), and the table then holds exactly the others.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresAutocommitFailureTests {
    @Test(arguments: 0..<20 as Range<UInt64>)
    func aStatementWhoseImplicitCommitFailsThrows(seed: UInt64) async throws {
        var random = SplitMix64(seed: seed, index: 31)
        let configuration = try await makeDatabase()
        let connection = try await PostgresConnection(configuration)
        let target = UUID()
        for statement in [
            "CREATE TABLE target (id uuid PRIMARY KEY)",
            "CREATE TABLE pointer (id uuid PRIMARY KEY, target uuid REFERENCES target (id) DEFERRABLE INITIALLY DEFERRED)",
            "INSERT INTO target (id) VALUES ('\(target.uuidString)')",
        ] {
            try await connection.execute(statement)
        }
        let engine = try PostgresConnection(connectingNow: configuration)
        defer { engine.close() }
        var kept = 0
        for index in 0..<random.size(in: 1...6) {
            let dangles = random.next() % 2 == 0
            let pointee = dangles ? UUID() : target
            var failure: String?
            do {
                if index % 2 == 0 {
                    try await connection.execute(
                        "INSERT INTO pointer (id, target) VALUES ($1, $2) ON CONFLICT DO NOTHING",
                        [.uuid(UUID()), .uuid(pointee)])
                } else {
                    let statement = try engine.prepare("INSERT INTO pointer (id, target) VALUES (?, ?)")
                    statement.bind(UUID(), 1)
                    statement.bind(pointee, 2)
                    try statement.run()
                }
            } catch {
                failure = "\(error)"
            }
            let path = index % 2 == 0 ? "public API" : "engine interface"
            let problem = dangles ? "a dangling reference did not throw" : "a valid row threw \(failure ?? "")"
            #expect((failure != nil) == dangles, "seed \(seed), row \(index) (\(path)): \(problem)")
            if failure != nil { #expect(failure?.contains("23503") == true || failure?.contains("foreign") == true) }
            if !dangles { kept += 1 }
        }
        let count = try await connection.query("SELECT count(*) FROM pointer")
        #expect(count[0, 0] == .int64(Int64(kept)), "seed \(seed)")
        await connection.close()
    }
}
