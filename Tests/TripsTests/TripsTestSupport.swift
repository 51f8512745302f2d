import Foundation
import Modelwright
import Trips

/// SplitMix64: a seeded generator, so every generated-case test draws the same cases on every run.
struct SeededGenerator: RandomNumberGenerator {
    /// The generator's state, which is also its seed.
    var state: UInt64

    /// The next 64 random bits.
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// A user with a unique handle and the given names.
func makeTripsUser(_ username: String, familyName: String, rating: Int16 = 0) -> User {
    User(username: username, givenName: username.capitalized, familyName: familyName, rating: rating)
}

/// A trip of `owner` starting on day `day` of 2024.
func makeTrip(_ title: String, owner: User.ID, day: Int) -> Trip {
    Trip(
        identifier: UUID(), title: title, startsOn: Date(timeIntervalSince1970: 1_704_067_200 + Double(day) * 86_400),
        ownerID: owner)
}

/// A fresh path for a store file in the temporary folder.
func temporaryTripsStoreURL() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("trips-\(UUID().uuidString).sqlite")
}

/// Removes a store file and its write-ahead-log companions.
func removeTripsStore(at url: URL) {
    for suffix in ["", "-wal", "-shm"] {
        try? FileManager.default.removeItem(atPath: url.path + suffix)
    }
}
