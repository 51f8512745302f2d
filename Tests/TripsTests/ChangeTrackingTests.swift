import Foundation
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing
import Trips

@testable import Modelwright

/// A commit wakes an observer only when it changed a column the observed request reads; a write
/// of the values already stored wakes no one (the first two tests on every engine, ``TestEngine``).
@Suite(.ownThread)
struct ChangeTrackingTests {
    /// Counts the commits that wake an observer of `request`; the count is final when
    /// `performAndSave` returns, because the store tells observers before it returns.
    private final class WakeCounter: Sendable {
        let wakes = Locked(0)
        let token: UUID?
        let store: Store

        init<Target: Record>(_ store: Store, _ request: FetchRequest<Target>) {
            self.store = store
            let wakes = self.wakes
            token = store.observe(
                request, changed: { _ in wakes.withLock { $0 += 1 } }, refresh: { _ in }, failure: { _ in },
                closed: {})
        }

        var count: Int { wakes.withLock { $0 } }

        deinit {
            if let token { store.observers.remove(token) }
        }
    }

    /// Random updates of random users, many of which write what is stored or change columns
    /// the request does not read; each commit is checked against the columns it really changed.
    @Test(arguments: TestEngine.available, 0..<4)
    func onlyCommitsThatChangeReadColumnsWakeAnObserver(engine: TestEngine, seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        try await engine.withStore(schema: Trips.schema) { store in
            var users = (0..<6).map { makeTripsUser("user\($0)", familyName: "Family\($0 % 2)", rating: 1) }
            let trips = users.map { makeTrip("Trip of \($0.username)", owner: $0.id, day: 1) }
            try await store.performAndSave { [users] context in
                try context.batchInsert(users)
                try context.batchInsert(trips)
            }
            // Trips whose owner's family name is "Family0": reads Trip's columns, User.id and User.familyName.
            let counter = WakeCounter(store, Trip.request().filter { $0.owner.familyName == "Family0" })
            for _ in 0..<60 {
                let index = Int.random(in: 0..<users.count, using: &random)
                let old = users[index]
                let new: User
                switch Int.random(in: 0..<4, using: &random) {
                case 0: new = old.with(rating: Int16.random(in: 0...2, using: &random))
                case 1: new = old.with(familyName: "Family\(Int.random(in: 0...1, using: &random))")
                case 2: new = old.with(givenName: ["Ada", "Grace"].randomElement(using: &random)!)
                default: new = old
                }
                users[index] = new
                let before = counter.count
                if Bool.random(using: &random) {
                    try await store.performAndSave { try $0.update(new) }
                } else {
                    _ = try await store.performAndSave { try $0.upsert(new) }
                }
                let expected = old.familyName != new.familyName ? 1 : 0
                #expect(counter.count - before == expected, "\(old) → \(new)")
            }
        }
    }

    @Test(arguments: TestEngine.available)
    func batchUpdatesAndTripWritesWakeOnlyWhenTheyChangeSomething(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            let ada = makeTripsUser("ada", familyName: "Lovelace", rating: 3)
            let trip = makeTrip("Lisbon", owner: ada.id, day: 1)
            try await store.performAndSave { context in
                try context.insert(ada)
                try context.insert(trip)
            }
            let counter = WakeCounter(store, Trip.request().filter { $0.owner.familyName == "Lovelace" })
            let users = WakeCounter(store, User.request().filter { $0.rating >= 3 })
            // Nothing matches, or every match already holds the value: no change.
            #expect(
                try await store.performAndSave {
                    try $0.batchUpdate(User.request().filter { $0.rating > 4 }) { [try $0.rating.set(to: 5)] }
                } == 0)
            #expect(
                try await store.performAndSave { try $0.batchUpdate(User.request()) { [try $0.rating.set(to: 3)] } }
                    == 0)
            try await store.performAndSave { try $0.update(trip) }
            #expect(counter.count == 0 && users.count == 0)
            // A rating change is a User column the trip request does not read.
            #expect(
                try await store.performAndSave { try $0.batchUpdate(User.request()) { [try $0.rating.set(to: 4)] } }
                    == 1)
            #expect(counter.count == 0 && users.count == 1)
            try await store.performAndSave { try $0.update(trip.with(title: "Lisboa")) }
            #expect(counter.count == 1 && users.count == 1)
            try await store.performAndSave { try $0.insert(makeTripsUser("grace", familyName: "Hopper")) }
            #expect(counter.count == 2 && users.count == 2)
        }
    }

    /// Ending an iteration, or releasing the model that iterates, removes the store's observer.
    @Test(.timeLimit(.minutes(1))) @MainActor func cancellationAndDeinitStopObserving() async throws {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return }
        let store = try Store.inMemory(schema: Trips.schema)
        let controller = FetchedResultsController(store: store, request: User.request())
        let iteration = Task {
            for try await _ in controller {}
        }
        while store.observers.count == 0 { await Task.yield() }
        iteration.cancel()
        _ = await iteration.result
        while store.observers.count > 0 { await Task.yield() }

        var model: FetchedResultsModel<User>? = FetchedResultsModel(controller)
        while model?.snapshot == nil { try await Task.sleep(for: .milliseconds(1)) }
        #expect(store.observers.count == 1)
        model = nil
        while store.observers.count > 0 { await Task.yield() }
        try await store.performAndSave { try $0.insert(makeTripsUser("ada", familyName: "Lovelace")) }
        #expect(store.observers.count == 0)
    }

    /// Random pairs of snapshots: both ways of diffing (a short edit script, and hashing when the
    /// script would be long) give change sets that turn the old snapshot into the new one.
    @Test(arguments: 0..<20) func bothDiffsTurnEachSnapshotIntoTheNext(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let store = try Store.inMemory(schema: Trips.schema)
        let loader = RecordLoader<User>(store: store, batchSize: 10)
        let universe = (0..<40).map { _ in User.ID() }
        var keys: [User.ID: Int] = [:]
        var ranks: [User.ID: Int] = [:]
        var members = Set(universe.filter { _ in Bool.random(using: &random) })
        for id in universe {
            keys[id] = Int.random(in: 0..<5, using: &random)
            ranks[id] = Int.random(in: 0..<1000, using: &random)
        }
        let old = Self.snapshot(members, keys, ranks, loader)
        var updated: Set<User.ID> = []
        for id in universe where Int.random(in: 0..<5, using: &random) == 0 {
            switch Int.random(in: 0..<4, using: &random) {
            case 0: members.formSymmetricDifference([id])
            case 1: keys[id] = Int.random(in: 0..<5, using: &random)
            case 2: ranks[id] = Int.random(in: 0..<1000, using: &random)
            default: updated.insert(id)
            }
        }
        let new = Self.snapshot(members, keys, ranks, loader)
        for maxEdits in [0, 256] {
            let changes = ResultsDiff.changes(from: old, to: new, updated: updated, maxEdits: maxEdits)
            var sections = old.sections.map { (name: $0.name, ids: Array(old.ids[$0.range])) }
            for path in (changes.deletedRecords + changes.movedRecords).map({ $0.from! }).sorted(by: >) {
                sections[path[0]].ids.remove(at: path[1])
            }
            for index in changes.deletedSections.reversed() { sections.remove(at: index) }
            for index in changes.insertedSections { sections.insert((new.sections[index].name, []), at: index) }
            for change in (changes.insertedRecords + changes.movedRecords).sorted(by: { $0.to! < $1.to! }) {
                sections[change.to![0]].ids.insert(change.id, at: change.to![1])
            }
            #expect(sections.map(\.name) == new.sections.map(\.name), "maxEdits \(maxEdits)")
            #expect(sections.map(\.ids) == new.sections.map { Array(new.ids[$0.range]) }, "maxEdits \(maxEdits)")
            let reported = Set((changes.updatedRecords + changes.movedRecords).map(\.id))
            #expect(updated.intersection(old.ids).intersection(new.ids).isSubset(of: reported))
        }
    }

    /// A snapshot of `members`, in sections by key, ordered by rank within each.
    private static func snapshot(
        _ members: Set<User.ID>, _ keys: [User.ID: Int], _ ranks: [User.ID: Int], _ loader: RecordLoader<User>
    ) -> ResultsSnapshot<User> {
        let ids = members.sorted { (keys[$0]!, ranks[$0]!, $0.description) < (keys[$1]!, ranks[$1]!, $1.description) }
        var sections: [ResultsSection] = []
        for (position, id) in ids.enumerated() {
            let key = SQLValue.integer(Int64(keys[id]!))
            if sections.last?.key == key {
                let last = sections.removeLast()
                sections.append(
                    ResultsSection(
                        name: last.name, indexTitle: last.indexTitle, range: last.range.lowerBound..<(position + 1),
                        key: key))
            } else {
                sections.append(
                    ResultsSection(name: "\(keys[id]!)", indexTitle: "", range: position..<(position + 1), key: key))
            }
        }
        return ResultsSnapshot(sections: sections, ids: ids, loader: loader)
    }
}
