import Foundation
import Notes

/// CI's check of the example server: three devices of one user make seeded random edits (inserts,
/// updates, deletes, links and unlinks) between syncs, then must hold the same notes, tags and
/// links; a second user's device must pull none of them and be refused when it writes as the
/// first user or over the first user's note; a request with an unknown token is refused; every
/// answer comes from one server epoch.
struct Check {
    let url: URL
    let token: String
    let otherToken: String
    let seed: UInt64
    let rounds: Int
    let editsPerRound: Int

    init(options: Options) throws {
        url = try options.url()
        token = try options.string("token")
        otherToken = try options.string("other-token")
        seed = UInt64(try options.int("seed", default: 28))
        rounds = try options.int("rounds", default: 4)
        editsPerRound = try options.int("edits", default: 12)
    }

    func run() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        var random = SeededGenerator(seed: seed)
        var devices: [Device] = []
        for name in ["phone", "tablet", "laptop"] {
            devices.append(try await .open(name: name, user: "ines", token: token, url: url, in: directory))
        }

        // Edits between syncs, with devices syncing in a different order each round, so edits of
        // the same rows cross in flight.
        var edits = 0
        for _ in 0..<rounds {
            for device in devices {
                for _ in 0..<editsPerRound {
                    try await edit(device, &random)
                    edits += 1
                }
            }
            for device in devices.shuffled(using: &random) { try await device.engine.sync() }
        }
        // Quiet: two more passes bring every device everything the others pushed.
        for _ in 0..<2 {
            for device in devices { try await device.engine.sync() }
        }
        let first = try await devices[0].snapshot()
        for device in devices.dropFirst() {
            let snapshot = try await device.snapshot()
            guard snapshot == first else {
                throw Failure(
                    "\(device.name) did not converge with \(devices[0].name): \(snapshot.difference(from: first))")
            }
        }
        guard !first.notes.isEmpty else { throw Failure("the devices converged on no note: the check checked nothing") }
        print("check: \(devices.count) devices converged after \(edits) edits (seed \(seed)): \(first.summary)")

        try await checkIsolation(directory: directory, ines: devices, inesNotes: first.notes)
        try await checkOneEpoch(schema: devices[0].engine.schemaVersion)
    }

    /// The server process runs one ``SyncServer``: every answer carries the same epoch. A server
    /// made per request would begin an epoch each time and send every device back to re-push
    /// everything and pull from the beginning at each sync (which still converges, so the checks
    /// above would not notice).
    private func checkOneEpoch(schema: SyncSchemaVersion) async throws {
        let transport = URLSessionSyncTransport(url: url, credentials: token)
        let probe = SyncNodeID()
        var epochs: [SyncEpoch?] = []
        for _ in 0..<3 {
            let request = PullRequest(device: probe, schema: schema, since: nil, limit: 1)
            epochs.append(try await transport.pull(request).epoch)
        }
        guard let epoch = epochs[0], epochs.allSatisfy({ $0 == epoch }) else {
            throw Failure("the server's answers carry different epochs \(epochs): it makes a SyncServer per request")
        }
        print("check: three requests were answered in one server epoch")
    }

    /// One random edit on `device`, of its user's rows.
    private func edit(_ device: Device, _ random: inout SeededGenerator) async throws {
        let (notes, tags) = try await device.store.performQuery { context in
            (try context.fetch(Note.request()), try context.fetch(Tag.request()))
        }
        let roll = Int.random(in: 0..<100, using: &random)
        let note = notes.isEmpty ? nil : notes[Int.random(in: 0..<notes.count, using: &random)]
        let tag = tags.isEmpty ? nil : tags[Int.random(in: 0..<tags.count, using: &random)]
        let word = ["Lisbon", "Porto", "Faro", "Braga", "Évora", "Coimbra"].randomElement(using: &random) ?? ""
        let user = device.user
        try await device.store.performAndSave { context in
            switch (roll, note, tag) {
            case (0..<30, _, _), (_, nil, _):
                try context.insert(Note(owner: user, title: word))
            case (30..<40, _, _):
                try context.insert(Tag(owner: user, label: word))
            case (40..<65, .some(let note), _):
                try context.update(note.with(title: word, body: note.body + word, revision: note.revision + 1))
            case (65..<75, .some(let note), _):
                try context.delete(note)
            case (75..<88, .some(let note), .some(let tag)):
                try context.link(note.id, to: tag.id) { $0.tags }
            case (88..<95, .some(let note), .some(let tag)):
                try context.unlink(note.id, from: tag.id) { $0.tags }
            case (_, _, .some(let tag)):
                try context.update(tag.with(label: word))
            default:
                try context.insert(Note(owner: user, title: word))
            }
        }
    }

    /// A second user sees none of the first's rows, and a push that writes as the first user, or
    /// over one of the first user's notes, is refused whole.
    private func checkIsolation(directory: URL, ines: [Device], inesNotes: [Note]) async throws {
        let marta = try await Device.open(name: "marta", user: "marta", token: otherToken, url: url, in: directory)
        try await marta.store.performAndSave { try $0.insert(Note(owner: "marta", title: "Marta's own")) }
        try await marta.engine.sync()
        let seen = try await marta.snapshot()
        guard seen.notes.map(\.owner) == ["marta"], seen.tags.isEmpty else {
            throw Failure("the second user pulled rows that are not theirs: \(seen.summary)")
        }

        let forged = try await Device.open(name: "forged", user: "marta", token: otherToken, url: url, in: directory)
        let forgedNote = Note(owner: "ines", title: "written as ines")
        try await forged.store.performAndSave { try $0.insert(forgedNote) }
        try await expectRefusal("a note in another user's name", of: forgedNote.id.uuid, on: forged)

        let hijack = try await Device.open(name: "hijack", user: "marta", token: otherToken, url: url, in: directory)
        let target = inesNotes[0]
        try await hijack.store.performAndSave { try $0.insert(target.with(owner: "marta", title: "hijacked")) }
        try await expectRefusal("an update of another user's note", of: target.id.uuid, on: hijack)

        let stranger = try await Device.open(
            name: "stranger", user: "?", token: "no-such-token", url: url, in: directory)
        do {
            try await stranger.engine.sync()
            throw Failure("a request with an unknown token was answered")
        } catch SyncError.notAuthenticated {}

        for device in ines { try await device.engine.sync() }
        let after = try await ines[0].snapshot()
        guard after.notes == inesNotes, after.notes.allSatisfy({ $0.owner == "ines" }) else {
            throw Failure("the first user's notes changed after the second user's refused pushes")
        }
        print(
            "check: the second user pulled only their own note; forged and hijacking pushes were refused whole "
                + "and given up")
    }

    /// The server refuses the device's push of row `id` whole, and the device gives the row up
    /// (`SyncEngine.Report.refused`): it holds nothing under that ID afterwards.
    private func expectRefusal(_ what: String, of id: UUID, on device: Device) async throws {
        let report = try await device.engine.sync()
        guard report.refused.contains(where: { $0.id == id }) else {
            throw Failure("the server accepted \(what)")
        }
        guard try await !device.snapshot().notes.contains(where: { $0.id.uuid == id }) else {
            throw Failure("the device kept \(what) after the server refused it")
        }
    }
}
