import BenchmarkSupport
import Foundation

/// One way of running the four workloads against the cluster's "Person" table, which the
/// Modelwright store created (with its change-feed triggers, which fire for every contender).
/// Each read returns the records it built, so their construction is timed and their release and
/// the check of what they hold are not.
@MainActor protocol PostgresContender: AnyObject {
    /// The column heading.
    var name: String { get }
    /// Inserts the run's people (given when the contender was made, in the contender's own form)
    /// in one transaction.
    func insert() async throws
    /// Reads every row into records.
    func fetchAll() async throws -> any FetchedPeople
    /// Reads each of `ids` by its primary key, in one read transaction.
    func lookUp(_ ids: [UUID]) async throws -> any FetchedPeople
    /// Reads the people of at least `minimumAge`, by last name.
    func fetchFiltered(minimumAge: Int) async throws -> any FetchedPeople
}

/// Records a contender read, in its own form.
protocol FetchedPeople {
    /// What they hold.
    var digest: Digest { get }
}

extension Array: FetchedPeople where Element == Person {
    var digest: Digest { Digest(self) }
}

/// What the workloads read, the same for every contender when they read the same rows in the
/// same order: a check that they did the same work, computed outside the timing.
struct Digest: Equatable, CustomStringConvertible {
    private var hasher = Hasher()
    private(set) var rows = 0
    private var value: Int { hasher.finalize() }

    init(_ people: [Person]) {
        for person in people {
            hasher.combine(person.id.uuid)
            hasher.combine(person.firstName)
            hasher.combine(person.lastName)
            hasher.combine(person.age)
            hasher.combine(person.createdAt)
            hasher.combine(person.nickname)
        }
        rows = people.count
    }

    static func == (left: Digest, right: Digest) -> Bool { left.rows == right.rows && left.value == right.value }

    var description: String { "\(rows) rows, hash \(value)" }
}

/// The rows every contender inserts: the same values each time, text long enough to need a heap
/// buffer for the last name, whole seconds for the dates (every client reads them back exactly),
/// a nickname on two rows of three.
func makePeople(count: Int) -> [Person] {
    var generator = SystemRandomNumberGenerator()
    let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
    return (0..<count).map { index in
        Person(
            id: Person.ID(UUID()), firstName: ["Ada", "Grace", "Edsger", "Barbara"][index % 4],
            lastName: "Lastname-\(String(format: "%07d", index))-\(generator.next() % 1_000)", age: index % 100,
            createdAt: start.addingTimeInterval(Double(index)), nickname: index % 3 == 0 ? nil : "nick \(index)")
    }
}
