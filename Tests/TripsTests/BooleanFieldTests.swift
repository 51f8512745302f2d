import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing
import Trips

/// A Boolean field reads as a condition of its own, alone, negated and combined, and selects the
/// same records as the comparison it stands for.
@Suite(.heavy)
struct BooleanFieldTests {
    @Test func aBooleanFieldSelectsWhatItsComparisonSelects() async throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<10 {
            let store = try Store.inMemory(schema: Trips.schema)
            let users = (0..<Int.random(in: 0...30, using: &generator)).map { index in
                User(
                    username: "user\(round)-\(index)", givenName: "G", familyName: "F",
                    rating: Int16.random(in: 0...5, using: &generator),
                    isVerified: Bool.random(using: &generator))
            }
            let owners = users.filter { _ in Bool.random(using: &generator) }
            try await store.performAndSave { context in
                for user in users { try context.insert(user) }
                for owner in owners {
                    try context.insert(
                        Trip(
                            identifier: UUID(), title: "Trip of \(owner.username)", startsOn: Date(), ownerID: owner.id)
                    )
                }
            }
            func names(_ request: FetchRequest<User>) async throws -> Set<String> {
                Set(try await store.performQuery { try $0.fetch(request) }.map(\.username))
            }
            func expected(_ keep: (User) -> Bool) -> Set<String> { Set(users.filter(keep).map(\.username)) }

            #expect(try await names(User.request().filter { $0.isVerified }) == expected { $0.isVerified })
            #expect(try await names(User.request().filter { !$0.isVerified }) == expected { !$0.isVerified })
            #expect(
                try await names(User.request().filter { $0.isVerified && $0.rating >= 3 })
                    == expected { $0.isVerified && $0.rating >= 3 })
            #expect(
                try await names(User.request().filter { $0.rating >= 3 || $0.isVerified })
                    == expected { $0.rating >= 3 || $0.isVerified })
            #expect(
                try await names(User.request().filter { $0.isVerified || $0.isVerified && $0.rating == 0 })
                    == expected { $0.isVerified })
            #expect(try await names(User.request().filter { $0.isVerified }.filter { !$0.isVerified }).isEmpty)
            let owning = Set(owners.map(\.username))
            let tripsOfVerified = try await store.performQuery { context in
                try context.fetch(Trip.request().filter { $0.owner.isVerified }).count
            }
            #expect(tripsOfVerified == owners.filter(\.isVerified).count)
            #expect(
                try await names(User.request().filter { $0.trips.any { $0.owner.isVerified } })
                    == expected { owning.contains($0.username) && $0.isVerified })
        }
    }

    @Test func aBooleanFieldRendersAsItsComparison() {
        let implicit = User.request().filter { $0.isVerified }
        let explicit = User.request().filter { $0.isVerified == true }
        #expect(implicit.condition == explicit.condition)
        #expect(
            User.request().filter { !$0.isVerified }.condition
                == User.request().filter { $0.isVerified == false }.condition)
    }
}
