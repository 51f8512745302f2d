import Foundation

/// One way of storing people: the raw C API, Modelwright, GRDB with `Codable` records, GRDB with
/// hand-written records. Each instance owns one database file, created empty (with the `Person`
/// table and its index on `age`) by `init`.
///
/// Everything a contender needs is prepared in `init` (records built from the seeds, the table
/// created), so the timed methods measure only the work an app would do. Contenders live on the
/// main actor, where the benchmark runs: no work overlaps another's.
@MainActor
protocol Contender: AnyObject, Sendable {
    /// The column heading.
    nonisolated static var name: String { get }
    /// Creates the database at `url` and turns `seeds` into this contender's records.
    init(creatingAt url: URL, seeds: [PersonSeed]) async throws
    /// Inserts every seed in one transaction.
    func insertAll() async throws
    /// Fetches every person into structs. `records` holds the fetched array, so that freeing it
    /// happens after the clock stops.
    func fetchAll() async throws -> (digest: Digest, records: Any)
    /// Fetches the people of each age in turn, in one read transaction.
    func fetch(ages: [Int]) async throws -> Digest
    /// Fetches, for each age in turn, the `Workload.sortedLimit` most recently created people of
    /// that age, newest first (filtered, sorted, limited), in one read transaction.
    func fetchNewest(ages: [Int]) async throws -> Digest
    /// Looks up each person by ID, one query per ID, in one read transaction.
    func lookUp(ids: [UUID]) async throws -> Digest
    /// Counts the people at least `minimumAge` old, `times` times, in one read transaction.
    func count(minimumAge: Int, times: Int) async throws -> Int
    /// Closes the database; the file may be deleted afterwards.
    func close() async throws
}

/// A contender type as the benchmark runs it: its name and how to open a new database with it.
struct Entrant {
    let name: String
    let open: @MainActor (URL, [PersonSeed]) async throws -> any Contender

    init<Database: Contender>(_ type: Database.Type) {
        name = Database.name
        open = { url, seeds in try await Database(creatingAt: url, seeds: seeds) }
    }

    /// The name as a file name and a command-line word: `GRDB Codable` as `grdb-codable`.
    var slug: String { name.lowercased().replacingOccurrences(of: " ", with: "-") }
}
