#if canImport(PostgresNIO)
    import BenchmarkSupport
    import Foundation
    import PostgresNIO

    /// The same workloads through PostgresNIO (vapor/postgres-nio), as a Vapor or Hummingbird server
    /// would run them: prepared statements for the insert and the lookups, rows decoded into the same
    /// `Person` records.
    @MainActor final class PostgresNIOContender: PostgresContender {
        let name = "PostgresNIO"
        private let connection: PostgresNIO.PostgresConnection
        private let people: [Person]
        private let logger = Logger(label: "benchmark")

        init(port: Int, people: [Person]) async throws {
            let configuration = PostgresNIO.PostgresConnection.Configuration(
                host: "127.0.0.1", port: port, username: "postgres", password: nil, database: "postgres", tls: .disable)
            connection = try await PostgresNIO.PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: 1, logger: logger
            ).get()
            self.people = people
        }

        deinit {
            let connection = connection
            Task { try? await connection.close() }
        }

        func insert() async throws {
            try await connection.withTransaction(logger: logger) { connection in
                for person in people {
                    // Drained as rows: the overload that returns the command tag trips a precondition in 1.33.2.
                    for try await _ in try await connection.execute(InsertPerson(person: person), logger: logger) {}
                }
            }
        }

        func fetchAll() async throws -> any FetchedPeople {
            try await records(PostgresQuery(unsafeSQL: SQL.fetchAll))
        }

        func lookUp(_ ids: [UUID]) async throws -> any FetchedPeople {
            try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ", logger: logger)
            var found: [Person] = []
            found.reserveCapacity(ids.count)
            for id in ids {
                for try await person in try await connection.execute(LookUpPerson(id: id), logger: logger) {
                    found.append(person)
                }
            }
            try await connection.query("COMMIT", logger: logger)
            return found
        }

        func fetchFiltered(minimumAge: Int) async throws -> any FetchedPeople {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(Int64(minimumAge))
            return try await records(PostgresQuery(unsafeSQL: SQL.fetchFiltered, binds: bindings))
        }

        private func records(_ query: PostgresQuery) async throws -> [Person] {
            var people: [Person] = []
            for try await row in try await connection.query(query, logger: logger) {
                people.append(try Self.person(row))
            }
            return people
        }

        /// A row of the columns Modelwright selects, in its order.
        nonisolated static func person(_ row: PostgresRow) throws -> Person {
            let (id, firstName, lastName, age, createdAt, nickname) = try row.decode(
                (UUID, String, String, Int, Date, String?).self)
            return Person(
                id: Person.ID(id), firstName: firstName, lastName: lastName, age: age, createdAt: createdAt,
                nickname: nickname)
        }
    }

    /// The INSERT, prepared once per connection.
    private struct InsertPerson: PostgresPreparedStatement {
        static let sql = SQL.insert
        typealias Row = ()
        let person: Person

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 6)
            bindings.append(person.id.uuid)
            bindings.append(person.firstName)
            bindings.append(person.lastName)
            bindings.append(person.age)
            bindings.append(person.createdAt)
            bindings.append(person.nickname)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws {}
    }

    /// The lookup by primary key, prepared once per connection.
    private struct LookUpPerson: PostgresPreparedStatement {
        static let sql = SQL.lookUp
        typealias Row = Person
        let id: UUID

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append(id)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Person { try PostgresNIOContender.person(row) }
    }
#endif
