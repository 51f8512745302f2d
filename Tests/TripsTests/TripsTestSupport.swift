import Foundation
import Modelwright
import Trips

/// A user with a unique handle and the given names, joined at a whole second, which every engine
/// stores exactly (PostgreSQL keeps microseconds).
func makeTripsUser(_ username: String, familyName: String, rating: Int16 = 0) -> User {
    User(
        username: username, givenName: username.capitalized, familyName: familyName, rating: rating,
        joinedAt: Date(timeIntervalSinceReferenceDate: 790_000_000))
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
