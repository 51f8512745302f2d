import BenchmarkSupport
import Foundation
import LibPQBench

/// The same workloads in C on raw libpq (`Sources/LibPQBench`): one connection opened before any
/// timing, prepared statements, binary parameters and results, rows copied into C structs.
@MainActor final class LibPQContender: PostgresContender {
    let name = "raw libpq (C)"
    private let connection: OpaquePointer
    private let people: UnsafeMutableBufferPointer<libpq_bench_person>

    /// The 2000-01-01 epoch of `timestamptz`, in seconds since 2001-01-01.
    nonisolated static let postgresEpoch: Double = -31_622_400

    init(conninfo: String, people: [Person]) throws {
        guard let connection = libpq_bench_connect(conninfo) else { throw Failure(description: "libpq connect") }
        self.connection = connection
        self.people = .allocate(capacity: people.count)
        for (index, person) in people.enumerated() {
            var row = libpq_bench_person()
            withUnsafeMutableBytes(of: &row.id) {
                $0.copyBytes(from: withUnsafeBytes(of: person.id.uuid.uuid) { Array($0) })
            }
            row.first_name = strdup(person.firstName)
            row.last_name = strdup(person.lastName)
            row.age = Int64(person.age)
            row.created_at = Int64(
                ((person.createdAt.timeIntervalSinceReferenceDate - Self.postgresEpoch) * 1_000_000).rounded())
            row.nickname = person.nickname.map { strdup($0) } ?? nil
            self.people[index] = row
        }
    }

    isolated deinit {
        for row in people {
            free(row.first_name)
            free(row.last_name)
            free(row.nickname)
        }
        people.deallocate()
        libpq_bench_finish(connection)
    }

    func insert() async throws {
        guard libpq_bench_insert(connection, Int32(people.count), people.baseAddress) == 0 else {
            throw Failure(description: "libpq insert")
        }
    }

    func fetchAll() async throws -> any FetchedPeople {
        try fetch(SQL.fetchAll, parameter: nil)
    }

    func lookUp(_ ids: [UUID]) async throws -> any FetchedPeople {
        let bytes = ids.flatMap { id in withUnsafeBytes(of: id.uuid) { Array($0) } }
        var rows: UnsafeMutablePointer<libpq_bench_person>?
        let count = libpq_bench_lookups(connection, SQL.lookUp, Int32(ids.count), bytes, &rows)
        guard count >= 0, let rows else { throw Failure(description: "libpq lookups") }
        return CPeople(rows: rows, count: count)
    }

    func fetchFiltered(minimumAge: Int) async throws -> any FetchedPeople {
        try fetch(SQL.fetchFiltered, parameter: Int64(minimumAge))
    }

    private func fetch(_ sql: String, parameter: Int64?) throws -> CPeople {
        var rows: UnsafeMutablePointer<libpq_bench_person>?
        let count = libpq_bench_fetch(connection, sql, parameter == nil ? 0 : 1, parameter ?? 0, &rows)
        guard count >= 0, let rows else { throw Failure(description: "libpq fetch") }
        return CPeople(rows: rows, count: count)
    }
}

/// People C read, released with their owner; turned into records only to check them.
final class CPeople: FetchedPeople {
    private let rows: UnsafeMutablePointer<libpq_bench_person>
    private let count: Int

    init(rows: UnsafeMutablePointer<libpq_bench_person>, count: Int) {
        self.rows = rows
        self.count = count
    }

    deinit { libpq_bench_free(rows, count) }

    var digest: Digest {
        Digest(
            (0..<count).map { index in
                let row = rows[index]
                var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                withUnsafeMutableBytes(of: &uuid) { target in withUnsafeBytes(of: row.id) { target.copyBytes(from: $0) }
                }
                return Person(
                    id: Person.ID(UUID(uuid: uuid)), firstName: String(cString: row.first_name),
                    lastName: String(cString: row.last_name), age: Int(row.age),
                    createdAt: Date(
                        timeIntervalSinceReferenceDate: LibPQContender.postgresEpoch + Double(row.created_at)
                            / 1_000_000),
                    nickname: row.nickname.map { String(cString: $0) })
            })
    }
}
