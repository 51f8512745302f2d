import Foundation
import ModelwrightTestSupport
import Testing
import Trips

@testable import Modelwright

/// Observing a keyset page and a prefetching request delivers a new value when a row of the page
/// or a related row changes, and nothing for a write to a table neither reads; an observed
/// aggregate that is NaN is not delivered again after every commit.
@Suite(.heavy)
struct ObservedPageAndPrefetchTests {
    /// Collects every value `stream` delivers, until the returned task is cancelled.
    private static func collect<Element: Sendable>(
        _ stream: AsyncThrowingStream<Element, Error>
    ) -> (Locked<[Element]>, Task<Void, Error>) {
        let received = Locked<[Element]>([])
        let task = Task {
            for try await value in stream { received.withLock { $0.append(value) } }
        }
        return (received, task)
    }

    /// Waits up to five seconds for `count` values.
    private static func waitFor<Element>(_ count: Int, in received: Locked<[Element]>) async throws {
        for _ in 0..<500 where received.withLock({ $0.count }) < count {
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// A quiet moment in which an observer that a commit woke would have delivered.
    private static func settle() async throws { try await Task.sleep(for: .milliseconds(300)) }

    @Test func anObservedKeysetPageFollowsItsRowsOnly() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        let owner = makeTripsUser("ada", familyName: "Lovelace")
        let trips = (0..<9).map { makeTrip("T\($0)", owner: owner.id, day: $0) }
        try await store.performAndSave { context in
            try context.insert(owner)
            for trip in trips { try context.insert(trip) }
        }
        let sorted = Trip.request().sorted { [$0.title.ascending] }
        let first = try await store.performQuery { try $0.fetch(sorted.after(nil).limit(3)) }
        let (received, task) = Self.collect(store.observe(sorted.after(first.last).limit(3)))
        defer { task.cancel() }
        try await Self.waitFor(1, in: received)
        #expect(received.withLock { $0.last?.map(\.title) } == ["T3", "T4", "T5"])

        // A row of the page changes: a new value.
        try await store.performAndSave { try $0.update(trips[4].with(travellers: 7)) }
        try await Self.waitFor(2, in: received)
        #expect(received.withLock { $0.last?.map(\.travellers) }?[1] == 7)

        // A table the page does not read: nothing.
        try await store.performAndSave { try $0.insert(Note(title: "N", body: "b", authorID: owner.id)) }
        try await Self.settle()
        #expect(received.withLock { $0.count } == 2)

        // A row enters the page (a title sorted into it): a new value.
        try await store.performAndSave { try $0.update(trips[8].with(title: "T35")) }
        try await Self.waitFor(3, in: received)
        #expect(received.withLock { $0.last?.map(\.title) } == ["T3", "T35", "T4"])
    }

    @Test func anObservedPrefetchFollowsItsRecordsAndTheirRelatedRecordsOnly() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        let organization = Organization(name: "Club")
        let ada = makeTripsUser("ada", familyName: "Lovelace").with(organizationID: organization.id)
        let trip = makeTrip("Lisbon", owner: ada.id, day: 1)
        try await store.performAndSave { context in
            try context.insert(organization)
            try context.insert(ada)
            try context.insert(trip)
        }
        let request = User.request().including { $0.trips }.including { $0.organization.members }
        let (received, task) = Self.collect(store.observe(request))
        defer { task.cancel() }
        try await Self.waitFor(1, in: received)
        func tripTitles() -> [String] {
            received.withLock { $0.last?.first.map { (try? $0.destinations { $0.trips }.map(\.record.title)) ?? [] } }
                ?? []
        }
        #expect(tripTitles() == ["Lisbon"])

        // A related row changes: a new value.
        try await store.performAndSave { try $0.update(trip.with(title: "Porto")) }
        try await Self.waitFor(2, in: received)
        #expect(tripTitles() == ["Porto"])

        // A row reached through the hop arrives (a colleague): a new value.
        let grace = makeTripsUser("grace", familyName: "Hopper").with(organizationID: organization.id)
        try await store.performAndSave { try $0.insert(grace) }
        try await Self.waitFor(3, in: received)
        let colleagues = received.withLock { $0.last?.first.map { try? $0.destinations { $0.organization.members } } }
        #expect(colleagues??.count == 2)

        // A table neither the users nor their included relationships read (the stops): nothing.
        try await store.performAndSave { try $0.insert(Stop(name: "S", tripID: trip.id)) }
        try await Self.settle()
        #expect(received.withLock { $0.count } == 3)
    }

    @Test func anObservedNaNAggregateIsNotDeliveredAgainAfterEveryCommit() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        let owner = makeTripsUser("ada", familyName: "Lovelace")
        let trips = [Double.infinity, -.infinity, 0.5].enumerated().map { day, distance in
            makeTrip("T\(day)", owner: owner.id, day: day).with(distanceKm: distance)
        }
        try await store.performAndSave { context in
            try context.insert(owner)
            for trip in trips { try context.insert(trip) }
        }
        let (received, task) = Self.collect(store.observe(Trip.request().sum { $0.distanceKm }))
        defer { task.cancel() }
        try await Self.waitFor(1, in: received)
        #expect(received.withLock { $0.first?.isNaN } == true)

        // Commits the sum reads, after which it is still NaN: nothing new.
        for distance in [0.7, 0.9] {
            try await store.performAndSave { try $0.update(trips[2].with(distanceKm: distance)) }
            try await Self.settle()
        }
        #expect(received.withLock { $0.count } == 1, "\(received.withLock { $0 })")

        // A commit that makes it a number: delivered.
        try await store.performAndSave { try $0.update(trips[1].with(distanceKm: 1)) }
        try await Self.waitFor(2, in: received)
        #expect(received.withLock { $0.last } == .infinity)
    }
}
