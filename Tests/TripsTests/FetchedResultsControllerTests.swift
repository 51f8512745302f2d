import Foundation
import Modelwright
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing
import Trips

/// A sectioned list of trips, by their owner's family name, driven through inserts, moves between
/// sections, updates and deletes, on every engine (``TestEngine``).
@Suite(.ownThread)
struct FetchedResultsControllerTests {
    private typealias Update = ResultsUpdate<Trip>
    private typealias Change = ResultsRecordChange<Trip.ID>

    private static func path(_ section: Int, _ item: Int) -> IndexPath {
        IndexPath(indexes: [section, item])
    }

    private static func controller(_ store: Store) -> FetchedResultsController<Trip> {
        FetchedResultsController(
            store: store, request: Trip.request().sorted { [$0.title.ascending] }, sectionedBy: { $0.owner.familyName },
            batchSize: 2)
    }

    @Test(.timeLimit(.minutes(1)), arguments: TestEngine.available)
    func exactChangeSetsForInsertsMovesUpdatesAndDeletes(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            let ada = makeTripsUser("ada", familyName: "Lovelace")
            let grace = makeTripsUser("grace", familyName: "Hopper")
            let lisbon = makeTrip("Lisbon", owner: ada.id, day: 1)
            let porto = makeTrip("Porto", owner: ada.id, day: 2)
            let rome = makeTrip("Rome", owner: grace.id, day: 3)
            try await store.performAndSave { context in
                try context.batchInsert([ada, grace])
                try context.batchInsert([lisbon, porto, rome])
            }
            var updates = Self.controller(store).makeAsyncIterator()
            let first = try #require(try await updates.next())
            #expect(first.changes == nil)
            #expect(first.snapshot.sections.map(\.name) == ["Hopper", "Lovelace"])
            #expect(first.snapshot.sections.map(\.count) == [1, 2])
            #expect(first.snapshot.sectionIndexTitles == ["H", "L"])
            #expect(try first.snapshot.record(at: Self.path(1, 1)) == porto)

            // An insert in the middle of a section.
            let madrid = makeTrip("Madrid", owner: ada.id, day: 4)
            try await store.performAndSave { try $0.insert(madrid) }
            var changes = try #require(try await updates.next()?.changes)
            #expect(changes == ResultsChanges(insertedRecords: [Change(id: madrid.id, from: nil, to: Self.path(1, 1))]))

            // A new owner and their trip: a new section.
            let emmy = makeTripsUser("emmy", familyName: "Noether")
            let oslo = makeTrip("Oslo", owner: emmy.id, day: 5)
            try await store.performAndSave { context in
                try context.insert(emmy)
                try context.insert(oslo)
            }
            changes = try #require(try await updates.next()?.changes)
            #expect(
                changes
                    == ResultsChanges(
                        insertedSections: [2], insertedRecords: [Change(id: oslo.id, from: nil, to: Self.path(2, 0))]))

            // Writes that change nothing the list shows deliver nothing: the same values, a column
            // the request does not read, a batch update that matches no row.
            try await store.performAndSave { context in
                try context.update(porto)
                try context.update(ada.with(rating: 5))
                try context.batchUpdate(Trip.request().filter { $0.title == "Nowhere" }) { [try $0.title.set(to: "X")] }
            }

            // Porto changes owner: it moves to Hopper's section, and is marked as having new values.
            try await store.performAndSave { try $0.update(porto.with(ownerID: grace.id)) }
            let moved = try #require(try await updates.next())
            let portoMove = Change(id: porto.id, from: Self.path(1, 2), to: Self.path(0, 0))
            #expect(moved.changes == ResultsChanges(movedRecords: [portoMove], movedRecordsWithNewValues: [portoMove]))
            #expect(moved.changes?.recordsWithNewValues == [portoMove])
            #expect(moved.snapshot.sections.map(\.count) == [2, 2, 1])
            #expect(try moved.snapshot.record(at: Self.path(0, 0)).ownerID == grace.id)

            // A new title that keeps its place is an update; one that passes its neighbours is a move.
            try await store.performAndSave { try $0.update(rome.with(title: "Roma")) }
            let renamed = try #require(try await updates.next())
            #expect(
                renamed.changes
                    == ResultsChanges(updatedRecords: [Change(id: rome.id, from: Self.path(0, 1), to: Self.path(0, 1))])
            )
            #expect(try renamed.snapshot.record(at: Self.path(0, 1)).title == "Roma")
            try await store.performAndSave { try $0.update(lisbon.with(title: "Zaragoza")) }
            changes = try #require(try await updates.next()?.changes)
            let lisbonMove = Change(id: lisbon.id, from: Self.path(1, 0), to: Self.path(1, 1))
            #expect(changes == ResultsChanges(movedRecords: [lisbonMove], movedRecordsWithNewValues: [lisbonMove]))

            // An owner's new family name moves the whole section: deleted, inserted, records moved.
            try await store.performAndSave { try $0.update(emmy.with(familyName: "Ada")) }
            changes = try #require(try await updates.next()?.changes)
            #expect(
                changes
                    == ResultsChanges(
                        deletedSections: [2], insertedSections: [0],
                        movedRecords: [Change(id: oslo.id, from: Self.path(2, 0), to: Self.path(0, 0))]))

            // Deleting a section's last record deletes the section.
            try await store.performAndSave { try $0.delete(oslo) }
            changes = try #require(try await updates.next()?.changes)
            #expect(
                changes
                    == ResultsChanges(
                        deletedSections: [0], deletedRecords: [Change(id: oslo.id, from: Self.path(0, 0), to: nil)]))
        }
    }

    /// Random commits against an in-memory model of the list: every change set, applied to the
    /// previous snapshot, gives the new one, and commits that leave the list as it was deliver nothing.
    @Test(.timeLimit(.minutes(5)), arguments: TestEngine.available, 0..<6)
    func changeSetsTurnEachSnapshotIntoTheNext(engine: TestEngine, seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        var model = ListModel()
        try await engine.withStore(schema: Trips.schema) { store in
            for index in 0..<4 {
                let user = makeTripsUser("user\(index)", familyName: ListModel.families.randomElement(using: &random)!)
                model.users[user.id] = user
            }
            _ = try await store.performAndSave { [users = Array(model.users.values)] in try $0.batchInsert(users) }
            var updates = Self.controller(store).makeAsyncIterator()
            var shown = try #require(try await updates.next()).snapshot
            #expect(ListModel.sections(of: shown) == model.sections())
            for step in 0..<80 {
                let before = model
                let write = model.randomWrite(using: &random)
                try await store.performAndSave { try write($0) }
                guard model.sections() != before.sections() || !model.changedTrips(since: before).isEmpty else {
                    continue
                }
                let update = try #require(try await updates.next())
                let changes = try #require(update.changes)
                var applied = ListModel.sections(of: shown)
                ListModel.apply(changes, to: &applied, newNames: update.snapshot.sections.map(\.name))
                #expect(applied == model.sections(), "step \(step)")
                #expect(ListModel.sections(of: update.snapshot) == model.sections(), "step \(step)")
                // Every trip whose values changed is marked, moved or not, and only those.
                let updated = Set(changes.recordsWithNewValues.map(\.id))
                #expect(model.changedTrips(since: before).isSubset(of: updated), "step \(step)")
                #expect(
                    Set(changes.movedRecordsWithNewValues.map(\.id)).isSubset(of: Set(changes.movedRecords.map(\.id))),
                    "step \(step)")
                for change in changes.updatedRecords + changes.insertedRecords {
                    #expect(try update.snapshot.record(at: try #require(change.to)) == model.trips[change.id])
                }
                shown = update.snapshot
            }
        }
    }
}

/// The list the controller should show, computed in memory: trips by owner's family name, then
/// title, then the order they were inserted in.
private struct ListModel {
    static let families = ["Hopper", "Lovelace", "Noether", "Curie", "Turing"]
    var users: [User.ID: User] = [:]
    var trips: [Trip.ID: Trip] = [:]
    var insertionOrder: [Trip.ID: Int] = [:]

    /// Section names with their trips' IDs, in order.
    func sections() -> [Section] {
        let sorted = trips.values.sorted { left, right in
            let (a, b) = (users[left.ownerID]!.familyName, users[right.ownerID]!.familyName)
            if a != b { return a < b }
            if left.title != right.title { return left.title < right.title }
            return insertionOrder[left.id]! < insertionOrder[right.id]!
        }
        var sections: [Section] = []
        for trip in sorted {
            let name = users[trip.ownerID]!.familyName
            if sections.last?.name != name { sections.append(Section(name: name, ids: [])) }
            sections[sections.count - 1].ids.append(trip.id)
        }
        return sections
    }

    /// Trips in both models whose values differ.
    func changedTrips(since before: ListModel) -> Set<Trip.ID> {
        Set(trips.values.filter { trip in before.trips[trip.id].map { $0 != trip } ?? false }.map(\.id))
    }

    struct Section: Equatable {
        var name: String
        var ids: [Trip.ID]
    }

    static func sections(of snapshot: ResultsSnapshot<Trip>) -> [Section] {
        snapshot.sections.map { Section(name: $0.name, ids: Array(snapshot.ids[$0.range])) }
    }

    /// Applies a change set as a table view's batch update does: deletions by old index paths,
    /// last first, then insertions by new index paths, first first.
    static func apply(_ changes: ResultsChanges<Trip.ID>, to sections: inout [Section], newNames: [String]) {
        let removals = (changes.deletedRecords + changes.movedRecords).map { $0.from! }.sorted(by: >)
        for path in removals { sections[path[0]].ids.remove(at: path[1]) }
        for index in changes.deletedSections.reversed() { sections.remove(at: index) }
        for index in changes.insertedSections { sections.insert(Section(name: newNames[index], ids: []), at: index) }
        let insertions = (changes.insertedRecords + changes.movedRecords).sorted { $0.to! < $1.to! }
        for change in insertions { sections[change.to![0]].ids.insert(change.id, at: change.to![1]) }
    }

    /// Picks a random write, applies it to the model, and returns it for the store.
    mutating func randomWrite(using random: inout SplitMix64) -> @Sendable (WriteContext) throws -> Void {
        let titles = ["Lisbon", "Porto", "Rome", "Oslo", "Madrid", "Lyon"]
        let userIDs = users.keys.sorted { $0.uuid.uuidString < $1.uuid.uuidString }
        let tripIDs = trips.keys.sorted { $0.uuid.uuidString < $1.uuid.uuidString }
        let owner = userIDs.randomElement(using: &random)!
        guard let tripID = tripIDs.randomElement(using: &random), Int.random(in: 0..<5, using: &random) > 0 else {
            let trip = makeTrip(titles.randomElement(using: &random)!, owner: owner, day: 1)
            trips[trip.id] = trip
            insertionOrder[trip.id] = insertionOrder.count
            return { try $0.insert(trip) }
        }
        let trip = trips[tripID]!
        switch Int.random(in: 0..<7, using: &random) {
        case 0:
            trips[tripID] = nil
            return { try $0.delete(trip) }
        case 1:
            let moved = trip.with(ownerID: owner)
            trips[tripID] = moved
            return { try $0.update(moved) }
        case 2, 3:
            let renamed = trip.with(title: titles.randomElement(using: &random)!)
            trips[tripID] = renamed
            return { try $0.update(renamed) }
        case 4:
            let user = users[owner]!.with(familyName: Self.families.randomElement(using: &random)!)
            users[owner] = user
            return { try $0.update(user) }
        case 5:
            let user = users[owner]!.with(rating: Int16.random(in: 0...5, using: &random))
            users[owner] = user
            return { try $0.update(user) }
        default:
            return { try $0.update(trip) }
        }
    }
}
