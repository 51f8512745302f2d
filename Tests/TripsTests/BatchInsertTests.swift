import Foundation
import Modelwright
import ModelwrightEngineTestSupport
import Testing
import Trips

/// A batch insert stores every record as given, on every engine (``TestEngine``), through the record
/// type's own loop (`insertRecords(_:with:)`, generated): an entity with a discriminator, optional
/// values present and missing, an empty string, records from an array or from any other sequence (over several of its chunks); and
/// a batch with a failing record leaves none of its records behind.
@Suite
struct BatchInsertTests {
    /// A date of whole seconds, which both engines store exactly (PostgreSQL keeps microseconds).
    static let written = Date(timeIntervalSinceReferenceDate: 790_000_000)

    @Test(arguments: TestEngine.available)
    func batchesReadBackAsInsertedAndAFailingBatchLeavesNothing(engine: TestEngine) async throws {
        try await engine.withStore(schema: Trips.schema) { store in
            let ada = User(username: "ada", givenName: "Ada", familyName: "Lovelace", joinedAt: Self.written)
            // Note shares Item's table, so each row also binds the `_entity` discriminator.
            // More than one chunk of a sequence that is not an array (taken 1,000 at a time).
            let notes = (0..<2_025).map { index in
                Note(
                    title: "Note \(index)", createdAt: Self.written.addingTimeInterval(Double(index)),
                    body: index.isMultiple(of: 3) ? "" : "Body \(index), longer than fifteen bytes",
                    authorID: index.isMultiple(of: 2) ? ada.id : nil)
            }
            let inserted = try await store.performAndSave { context in
                // An array, then a sequence that is not one (taken in chunks).
                try context.batchInsert([ada]) + context.batchInsert(notes.lazy.map { $0 })
            }
            #expect(inserted == 2_026)
            #expect(Set(try await store.performQuery { try $0.fetch(Note.request()) }) == Set(notes))
            #expect(try await store.performQuery { try $0.fetch(User.request()) } == [ada])

            // The third record repeats a stored ID: the batch fails and its first two are undone.
            let failing = [Note(title: "A", body: "a"), Note(title: "B", body: "b"), notes[4]]
            let count = try await store.performAndSave { context in
                #expect(throws: StoreError.self) { try context.batchInsert(failing) }
                return try context.count(Note.request())
            }
            #expect(count == notes.count)
        }
    }
}
