import CSQLite
import Foundation
import ModelwrightTestSupport
import Testing
import Trips

@testable import Modelwright

/// Prefetched relationships agree with the random records they were made from (to-one, to-many
/// through an inverse column, an ordered to-many nested one level down, and a to-many inherited
/// destination), and SQLite runs one statement for the records plus one per included relationship,
/// however many records there are. `MODELWRIGHT_LARGE=1` draws ten times as many cases.
@Suite(.heavy)
struct PrefetchPropertyTests {
    static let cases = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 300 : 30

    struct World {
        var organizations: [Organization] = []
        var users: [User] = []
        var trips: [Trip] = []
        /// Each trip's stops, in the order they were appended.
        var stops: [Trip.ID: [Stop]] = [:]
        var notes: [Note] = []

        init(_ random: inout SplitMix64) {
            for index in 0..<random.next(below: 4) { organizations.append(Organization(name: "Org \(index)")) }
            for index in 0..<random.next(below: 25) {
                var user = makeTripsUser("u\(index)", familyName: "F\(index)", rating: Int16(random.next(below: 6)))
                if !organizations.isEmpty, random.chance(0.6) {
                    user = user.with(organizationID: random.pick(organizations).id)
                }
                users.append(user)
            }
            guard !users.isEmpty else { return }
            for index in 0..<random.next(below: 40) {
                let trip = makeTrip("T\(index)", owner: random.pick(users).id, day: index)
                trips.append(trip)
                stops[trip.id] = (0..<random.next(below: 5)).map { Stop(name: "S\(index).\($0)", tripID: trip.id) }
            }
            for index in 0..<random.next(below: 20) {
                notes.append(
                    Note(title: "N\(index)", body: "b", authorID: random.chance(0.8) ? random.pick(users).id : nil))
            }
        }

        func store() async throws -> Store {
            let store = try Store.inMemory(schema: Trips.schema)
            try await store.performAndSave { [self] context in
                for organization in organizations { try context.insert(organization) }
                for user in users { try context.insert(user) }
                for trip in trips {
                    try context.insert(trip)
                    for stop in stops[trip.id] ?? [] { try context.insert(stop) }
                }
                for note in notes { try context.insert(note) }
            }
            return store
        }
    }

    /// Runs `body` counting the statements SQLite starts on the context's connection meanwhile.
    static func countingStatements<Result>(
        on context: ReadContext, _ body: () throws -> Result
    ) throws -> (Result, Int) {
        let handle = try #require((context.connection as? SQLiteConnection)?.handle)
        let counter = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        counter.initialize(to: 0)
        defer { counter.deallocate() }
        sqlite3_trace_v2(
            handle, UInt32(SQLITE_TRACE_STMT),
            { _, context, _, _ in
                context?.assumingMemoryBound(to: Int.self).pointee += 1
                return 0
            }, counter)
        defer { sqlite3_trace_v2(handle, 0, nil, nil) }
        let result = try body()
        return (result, counter.pointee)
    }

    @Test func prefetchedRecordsMatchTheirRelationshipsInBoundedStatements() async throws {
        for index in 0..<Self.cases {
            var random = SplitMix64(seed: 51, index: index)
            let world = World(&random)
            let store = try await world.store()
            let minimum = Int16(random.next(below: 4))
            let limit = random.chance(0.3) ? random.next(below: 10) : nil
            var request = User.request().filter { $0.rating >= minimum }
            if let limit { request = request.limit(limit) }
            let prefetch = request.including { $0.organization }
                .including({ $0.trips }, with: { $0.including { $0.stops } })
                .including { $0.notes }
            let (users, statements, expectedUsers) = try await store.performQuery { [request, prefetch] context in
                let (users, statements) = try Self.countingStatements(on: context) { try context.fetch(prefetch) }
                return (users, statements, try context.fetch(request))
            }
            let label = "case \(index)"
            #expect(
                statements == (users.isEmpty ? 1 : 5),
                "\(label): the users, then one statement per included relationship (none without users)")
            #expect(users.map(\.record) == expectedUsers, "\(label): the request's records, in its order")
            for user in users {
                let organization = try user.destination { $0.organization }?.record
                #expect(organization?.id == user.record.organizationID, "\(label)")
                #expect(organization == world.organizations.first { $0.id == user.record.organizationID }, "\(label)")

                let trips = try user.destinations { $0.trips }
                #expect(
                    Set(trips.map(\.record)) == Set(world.trips.filter { $0.ownerID == user.record.id }),
                    "\(label): \(user.record.username)'s trips")
                for trip in trips {
                    #expect(
                        try trip.destinations { $0.stops }.map(\.record) == world.stops[trip.record.id] ?? [],
                        "\(label): a trip's stops in their order")
                }
                let notes = try user.destinations { $0.notes }.map(\.record)
                #expect(Set(notes) == Set(world.notes.filter { $0.authorID == user.record.id }), "\(label)")
            }
        }
    }

    /// Through a to-one hop: each user with their organization's members (the same records for
    /// every member of one organization), and those members' trips one level down. The hop's level
    /// is two statements (which organization each user reaches, then its members), the trips one.
    @Test func relationshipsThroughAToOneHopArePrefetchedInTwoStatementsPerLevel() async throws {
        for index in 0..<Self.cases {
            var random = SplitMix64(seed: 52, index: index)
            let world = World(&random)
            let store = try await world.store()
            let request = User.request().filter { $0.rating >= Int16(random.next(below: 3)) }
            let prefetch = request.including { $0.organization }
                .including({ $0.organization.members }, with: { $0.including { $0.trips } })
            let (users, statements) = try await store.performQuery { [prefetch] context in
                try Self.countingStatements(on: context) { try context.fetch(prefetch) }
            }
            let label = "case \(index)"
            #expect(
                statements == (users.isEmpty ? 1 : 5),
                "\(label): the users, one for the organization, two for the hop's members, one for their trips")
            for user in users {
                let members = try user.destinations { $0.organization.members }
                let expected = world.users.filter {
                    $0.organizationID != nil && $0.organizationID == user.record.organizationID
                }
                #expect(Set(members.map(\.record)) == Set(expected), "\(label): \(user.record.username)'s colleagues")
                #expect(members.count == expected.count, "\(label): each member once")
                for member in members {
                    #expect(
                        Set(try member.destinations { $0.trips }.map(\.record))
                            == Set(world.trips.filter { $0.ownerID == member.record.id }),
                        "\(label): a colleague's trips")
                }
            }
        }
    }

    @Test func aRelationshipNotIncludedIsAnErrorThatNamesTheFix() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        let user = makeTripsUser("ada", familyName: "Lovelace")
        try await store.performAndSave { try $0.insert(user) }
        let users = try await store.performQuery { try $0.fetch(User.request().including { $0.notes }) }
        let error = #expect(throws: StoreError.self) { try users.first?.destinations { $0.trips } }
        #expect(String(describing: error.map { $0 as Any } ?? "").contains(".including { $0.trips }"))
    }
}
