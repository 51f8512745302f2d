import Foundation
import Modelwright

/// A second process on a shared store, for the persistent-history tests: it opens the store with
/// history under the author "widget" and commits random transactions over the Trips fixture.
///
///     HistoryProbe commit <store> <seed> <transactions>   commits that many transactions and exits
///     HistoryProbe loop <store> <seed>                    commits until it is killed
@main
struct HistoryProbe {
    static func main() async throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 4, let seed = UInt64(arguments[3]) else { exit(2) }
        let store = try Store(
            url: URL(fileURLWithPath: arguments[2]), schema: Fixture.schema, history: .enabled(author: "widget"))
        var random = ProbeRandom(seed: seed)
        let count = arguments[1] == "loop" ? Int.max : Int(arguments.count > 4 ? arguments[4] : "1") ?? 1
        for _ in 0..<count {
            let transactionSeed = random.next()
            try await store.performAndSave { context in
                var random = ProbeRandom(seed: transactionSeed)
                try randomTransaction(context, &random)
            }
        }
        try store.close()
    }

    /// Inserts, updates and deletes (single, batch and cascading) users and trips.
    static func randomTransaction(_ context: WriteContext, _ random: inout ProbeRandom) throws {
        var users = try context.fetch(User.request())
        for _ in 0..<(1 + random.below(4)) {
            switch random.below(7) {
            case 0, 1:
                let user = User(
                    username: "u\(random.next())", givenName: "G\(random.next())", familyName: "F\(random.below(1000))",
                    rating: Int16(random.below(5)))
                try context.insert(user)
                users.append(user)
            case 2:
                let trips = (0..<(1 + random.below(50))).map { index in
                    Trip(title: "trip \(index)", ownerID: users.randomOwner(&random) ?? User.ID())
                }
                guard !users.isEmpty else { continue }
                try context.batchInsert(trips)
            case 3:
                guard var user = users.randomElement(&random) else { continue }
                user.rating = Int16(random.below(5))
                if random.below(2) == 0 { user.familyName = "F\(random.below(1000))" }
                try context.update(user)
            case 4:
                guard let user = users.randomElement(&random) else { continue }
                try context.delete(user.id)  // cascades to the user's trips
                users.removeAll { $0.id == user.id }
            case 5:
                let rating = Int16(random.below(5))
                try context.batchUpdate(Trip.request().filter { $0.owner.rating == rating }) {
                    [try $0.title.set(to: "renamed \(rating)")]
                }
            default:
                let rating = Int16(random.below(5))
                try context.batchDelete(Trip.request().filter { $0.owner.rating == rating })
            }
        }
    }
}

/// SplitMix64: the same transactions for the same seed.
struct ProbeRandom {
    var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func below(_ bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }
}

extension Array {
    fileprivate func randomElement(_ random: inout ProbeRandom) -> Element? {
        isEmpty ? nil : self[random.below(count)]
    }
}

extension Array where Element == User {
    fileprivate func randomOwner(_ random: inout ProbeRandom) -> User.ID? {
        randomElement(&random)?.id
    }
}
