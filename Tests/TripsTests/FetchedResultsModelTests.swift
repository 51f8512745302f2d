import Foundation
import Modelwright
import ModelwrightTestSupport
import Observation
import Testing
import Trips

/// The `@Observable` model of a results controller, observed as a view model observes it.
@MainActor
@Suite(.ownThread)
struct FetchedResultsModelTests {
    /// Waits until `model.snapshot` satisfies `condition`, observed with `withObservationTracking`,
    /// and returns it. The condition is checked first: a snapshot can arrive while the test awaits a
    /// commit, before it starts observing, and waiting for a change then would wait forever.
    private func waitForSnapshot(
        of model: FetchedResultsModel<Trip>, where condition: (ResultsSnapshot<Trip>?) -> Bool
    ) async -> ResultsSnapshot<Trip>? {
        while !condition(model.snapshot) {
            await withCheckedContinuation { continuation in
                withObservationTracking {
                    _ = model.snapshot
                } onChange: {
                    continuation.resume()
                }
            }
            // `onChange` runs before the new value is stored; the store happens on the main actor next.
            await Task.yield()
        }
        return model.snapshot
    }

    @Test(.timeLimit(.minutes(1))) func snapshotsArriveThroughObservationTracking() async throws {
        guard #available(macOS 14, iOS 17, tvOS 17, watchOS 10, *) else { return }
        let store = try Store.inMemory(schema: Trips.schema)
        let ada = makeTripsUser("ada", familyName: "Lovelace", rating: 4)
        let lisbon = makeTrip("Lisbon", owner: ada.id, day: 1)
        try await store.performAndSave { context in
            try context.insert(ada)
            try context.insert(lisbon)
        }
        let model = FetchedResultsModel(
            FetchedResultsController(store: store, request: Trip.request(), sectionedBy: { $0.owner.familyName }))
        var snapshot = await waitForSnapshot(of: model) { $0?.ids == [lisbon.id] }
        #expect(snapshot?.ids == [lisbon.id])
        #expect(model.sections.map(\.name) == ["Lovelace"])
        #expect(model.changes == nil)

        // The owner's rating is a column the request does not read: nothing arrives for it.
        try await store.performAndSave { try $0.update(ada.with(rating: 1)) }
        let grace = makeTripsUser("grace", familyName: "Hopper")
        let rome = makeTrip("Rome", owner: grace.id, day: 2)
        try await store.performAndSave { context in
            try context.insert(grace)
            try context.insert(rome)
        }
        snapshot = await waitForSnapshot(of: model) { $0?.ids == [rome.id, lisbon.id] }
        #expect(model.sections.map(\.name) == ["Hopper", "Lovelace"])
        #expect(snapshot?.ids == [rome.id, lisbon.id])
        #expect(
            model.changes
                == ResultsChanges(
                    insertedSections: [0],
                    insertedRecords: [ResultsRecordChange(id: rome.id, from: nil, to: IndexPath(indexes: [0, 0]))]))
        #expect(try model.record(at: IndexPath(indexes: [0, 0])) == rome)
    }
}
