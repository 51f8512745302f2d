import Foundation
import Modelwright
import ModelwrightTestSupport
import Testing
import Trips

/// `Store.close()` leaves one self-contained file and refuses later work with a clear error.
@Suite(.ownThread)
struct StoreCloseTests {
    @Test func closeCheckpointsIntoOneFileAndLaterCallsThrow() async throws {
        let url = temporaryTripsStoreURL()
        defer { removeTripsStore(at: url) }
        let store = try Store(url: url, schema: Trips.schema)
        let users = (0..<50).map { makeTripsUser("user\($0)", familyName: "Family\($0)") }
        _ = try await store.performAndSave { try $0.batchInsert(users) }
        #expect(try await store.performQuery { try $0.count(User.request()) } == 50)
        #expect(FileManager.default.fileExists(atPath: url.path + "-wal"))

        try store.close()
        #expect(!FileManager.default.fileExists(atPath: url.path + "-wal"))
        #expect(!FileManager.default.fileExists(atPath: url.path + "-shm"))
        await #expect(throws: StoreError.storeClosed) { try await store.performQuery { try $0.count(User.request()) } }
        await #expect(throws: StoreError.storeClosed) { try await store.performAndSave { try $0.insert(users[0]) } }
        try store.close()  // a second close does nothing

        // The single file holds every committed row.
        let reopened = try Store(url: url, schema: Trips.schema)
        #expect(try await reopened.performQuery { try $0.count(User.request()) } == 50)
        try reopened.close()
    }

    @Test(.timeLimit(.minutes(1))) func closeEndsObservations() async throws {
        let store = try Store.inMemory(schema: Trips.schema)
        let observation = Task {
            var values = 0
            for try await _ in store.observe(User.request()) { values += 1 }
            return values
        }
        try await store.performAndSave { try $0.insert(makeTripsUser("ada", familyName: "Lovelace")) }
        try store.close()
        let values = try await observation.value
        #expect(values <= 2)
    }
}
