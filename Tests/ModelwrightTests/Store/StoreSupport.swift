import Foundation
import Modelwright

/// A fresh file path in the temporary folder, for stores that need a real file (WAL, readers).
func temporaryStoreURL() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("modelwright-\(UUID().uuidString).sqlite")
}

/// Removes a store file and its WAL companions.
func removeStore(at url: URL) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        try? FileManager.default.removeItem(atPath: url.path + suffix)
    }
}

func makeUser(_ username: String, _ given: String = "Ada", _ family: String? = nil, rating: Int16 = 0) -> User {
    User(username: username, givenName: given, familyName: family ?? username.capitalized, rating: rating)
}
