import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// The merge laws over generated change sets: what makes replicas converge whatever the order,
/// grouping and repetition of the changes they receive.
struct MergeLawTests {
    /// Cases drawn per run: a few in CI, many with `MODELWRIGHT_LARGE=1`.
    static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 100_000 : 2_000

    @Test func mergeIsCommutativeAssociativeAndIdempotent() {
        for index in 0..<Self.caseCount {
            var generator = SyncGenerator(seed: 2_828, index: index)
            let a = generator.changeSet()
            let b = generator.changeSet()
            let c = generator.changeSet()
            #expect(a.merging(b) == b.merging(a), "commutativity, case \(index)")
            #expect(a.merging(b).merging(c) == a.merging(b.merging(c)), "associativity, case \(index)")
            #expect(a.merging(a) == a, "idempotence, case \(index)")
            #expect(a.merging(b).merging(b) == a.merging(b), "a repeated delivery, case \(index)")
        }
        print("MergeLawTests: \(Self.caseCount) triples of change sets")
    }

    /// The same changes merged one at a time in any order give the same set as merged at once.
    @Test func anyDeliveryOrderGivesTheSameSet() {
        for index in 0..<Self.caseCount {
            var generator = SyncGenerator(seed: 2_829, index: index)
            let changes = (0..<generator.random.size(in: 1...12)).map { _ in generator.change() }
            let reference = ChangeSet(changes)
            var shuffled = changes + changes.filter { _ in generator.random.chance(0.3) }
            shuffled.shuffle(using: &generator.random)
            var replica = ChangeSet()
            for change in shuffled { replica.merge(ChangeSet([change])) }
            #expect(replica == reference, "case \(index)")
        }
    }

    /// Each part of a merged row is the latest of its parts: an attribute holds the write with the
    /// largest stamp, a link is present when its latest add is after its latest remove, a row is
    /// alive when its latest insert is after its latest delete. Checked against the parts directly.
    @Test func eachPartHoldsItsLatestWrite() {
        for index in 0..<Self.caseCount {
            var generator = SyncGenerator(seed: 2_830, index: index)
            let key = generator.rows[0]
            let changes = (0..<generator.random.size(in: 1...10)).map { _ in
                let change = generator.change()
                return RowChange(
                    key: key, inserted: change.inserted, deleted: change.deleted, attributes: change.attributes,
                    links: change.links)
            }
            guard let row = ChangeSet(changes).rows[key] else {
                Issue.record("no row")
                continue
            }
            for name in SyncGenerator.attributes {
                let writes = changes.compactMap { $0.attributes[name] }
                let expected = writes.max { ($0.stamp, $0.value) < ($1.stamp, $1.value) }
                #expect(row.attributes[name] == expected)
            }
            let inserted = changes.compactMap(\.inserted).max()
            let deleted = changes.compactMap(\.deleted).max()
            #expect(row.isAlive == (inserted != nil && (deleted == nil || deleted! < inserted!)))
            for link in Set(changes.flatMap(\.links.keys)) {
                let added = changes.compactMap { $0.links[link]?.added }.max()
                let removed = changes.compactMap { $0.links[link]?.removed }.max()
                #expect(row.links[link]?.isPresent == (added != nil && (removed == nil || removed! < added!)))
            }
        }
    }

    /// Delete wins over an update, even one stamped after it by a device that had not seen the
    /// delete; only an insert of the same ID after the tombstone (an undo) brings the row back, with
    /// the undo's values.
    @Test func deleteWinsAndOnlyAnUndoResurrects() {
        let phone = SyncNodeID()
        let laptop = SyncNodeID()
        func stamp(_ milliseconds: UInt64, _ node: SyncNodeID) -> HybridTimestamp {
            HybridTimestamp(milliseconds: milliseconds, counter: 0, node: node)
        }
        let key = RowKey(entity: "Trip", id: UUID())
        let insert = RowChange.insert(key, values: ["title": .text("Lisbon")], at: stamp(1, phone))
        let delete = RowChange.delete(key, at: stamp(2, phone))
        let lateUpdate = RowChange.update(key, values: ["title": .text("Porto")], at: stamp(3, laptop))
        let deleted = ChangeSet([insert, lateUpdate, delete])
        #expect(deleted.rows[key]?.isAlive == false)
        #expect(deleted.aliveRows.isEmpty)
        let undo = RowChange.insert(key, values: ["title": .text("Faro")], at: stamp(4, phone))
        let resurrected = deleted.merging(ChangeSet([undo]))
        #expect(resurrected.rows[key]?.isAlive == true)
        #expect(resurrected.rows[key]?.values == ["title": .text("Faro")])
        // An undo stamped before the delete does not resurrect.
        let earlyUndo = RowChange.insert(key, values: ["title": .text("Faro")], at: stamp(1, laptop))
        #expect(deleted.merging(ChangeSet([earlyUndo])).rows[key]?.isAlive == false)
    }

    /// A change set survives JSON, and equal sets encode to equal bytes whatever order they were
    /// built in and whatever the encoder's options (a default `JSONEncoder` orders an object's
    /// keys differently from one encode to the next, so the encoding must not rely on them).
    @Test func changeSetsRoundTripAndEncodeDeterministically() throws {
        let formattings: [JSONEncoder.OutputFormatting] = [[], .sortedKeys, .withoutEscapingSlashes]
        for index in 0..<Self.caseCount / 4 {
            var generator = SyncGenerator(seed: 2_831, index: index)
            let changes = (0..<generator.random.size(in: 1...8)).map { _ in generator.change() }
            let set = ChangeSet(changes)
            let encoder = JSONEncoder()
            encoder.outputFormatting = formattings[index % formattings.count]
            let data = try encoder.encode(set)
            #expect(try JSONDecoder().decode(ChangeSet.self, from: data) == set, "case \(index)")
            var shuffled = changes
            for position in shuffled.indices.reversed() {
                shuffled.swapAt(position, generator.random.next(below: position + 1))
            }
            #expect(try encoder.encode(ChangeSet(changes.reversed())) == data, "case \(index)")
            #expect(try JSONEncoder().encode(ChangeSet(shuffled)) == JSONEncoder().encode(set), "case \(index)")
        }
    }

    /// A row that lists one attribute several times, in any order and with any stamps, decodes to
    /// the merge of those writes (the latest by stamp), as a row listing one link twice does.
    @Test func anAttributeListedTwiceIsMergedByStamp() throws {
        for index in 0..<Self.caseCount / 4 {
            var generator = SyncGenerator(seed: 4_421, index: index)
            let key = generator.random.pick(generator.rows)
            let writes = (0..<generator.random.size(in: 2...6)).map { _ in
                RowChange.update(
                    key, values: [generator.random.pick(["title", "rating"]): generator.value()],
                    at: generator.stamp())
            }
            let expected = ChangeSet(writes).rows[key]
            // One row whose attribute list is every write's entries, repeats included.
            var entries: [Any] = []
            for write in writes {
                let row = try JSONSerialization.jsonObject(with: JSONEncoder().encode(write)) as? [Any]
                entries += try #require(row?[4] as? [Any])
            }
            let row: [Any] = [key.entity, key.id.uuidString, NSNull(), NSNull(), entries, [] as [Any]]
            let data = try JSONSerialization.data(withJSONObject: row)
            #expect(try JSONDecoder().decode(RowChange.self, from: data) == expected, "case \(index)")
        }
    }

    /// Every message without a protocol version, or with one that is not an integer, is refused
    /// with ``SyncError/malformedMessage(field:reason:)`` naming the field, not a bare `DecodingError`.
    @Test func aMessageWithoutAProtocolVersionIsRefusedTyped() throws {
        let schema = SyncSchemaVersion(model: "Trips", version: 3, checksum: "abc")
        let device = SyncNodeID()
        let messages: [(Data, (Data) throws -> Void)] = [
            (
                try JSONEncoder().encode(
                    PushRequest(
                        device: device, schema: schema, after: nil, through: HistoryToken(7), changes: ChangeSet())),
                { _ = try JSONDecoder().decode(PushRequest.self, from: $0) }
            ),
            (
                try JSONEncoder().encode(PushResponse(acknowledged: HistoryToken(7), cursor: SyncCursor(3))),
                { _ = try JSONDecoder().decode(PushResponse.self, from: $0) }
            ),
            (
                try JSONEncoder().encode(PullRequest(device: device, schema: schema, since: nil, limit: 10)),
                { _ = try JSONDecoder().decode(PullRequest.self, from: $0) }
            ),
            (
                try JSONEncoder().encode(PullResponse(changes: ChangeSet(), cursor: SyncCursor(3), hasMore: false)),
                { _ = try JSONDecoder().decode(PullResponse.self, from: $0) }
            ),
        ]
        for (data, decode) in messages {
            try decode(data)
            for replacement in [nil, "1", true, 1.5] as [Any?] {
                var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
                object.removeValue(forKey: "protocolVersion")
                if let replacement { object["protocolVersion"] = replacement }
                let broken = try JSONSerialization.data(withJSONObject: object)
                #expect("\(String(decoding: broken, as: UTF8.self))") {
                    try decode(broken)
                } throws: { error in
                    guard case .malformedMessage(let field, _) = error as? SyncError else { return false }
                    return field == "protocolVersion"
                }
            }
        }
    }

    /// A pull with a negative limit or cursor is refused with a typed error; any other is read back.
    @Test func aPullWithANegativeLimitOrCursorIsRefused() throws {
        let schema = SyncSchemaVersion(model: "Trips", version: 3, checksum: "abc")
        var random = SplitMix64(seed: 77, index: 0)
        for index in 0..<Self.caseCount / 4 {
            let limit = random.pick([Int.min, -1, 0, 1, Int.max, Int(random.next(below: 2_000)) - 1_000])
            let since = random.pick([nil, Int64.min, -1, 0, Int64.max, Int64(random.next(below: 2_000)) - 1_000])
            let pull = PullRequest(
                device: SyncNodeID(), schema: schema, since: since.map(SyncCursor.init), limit: limit)
            let data = try JSONEncoder().encode(pull)
            if limit < 0 || (since ?? 0) < 0 {
                #expect("case \(index)") {
                    try JSONDecoder().decode(PullRequest.self, from: data)
                } throws: { error in
                    guard case .malformedMessage(let field, _) = error as? SyncError else { return false }
                    return field == ((since ?? 0) < 0 ? "since" : "limit")
                }
            } else {
                #expect(try JSONDecoder().decode(PullRequest.self, from: data) == pull, "case \(index)")
            }
        }
    }

    /// A name outside printable ASCII (an NFC or NFD accent, an emoji, a space, an empty name) in
    /// an entity, attribute or relationship is refused on decoding with a typed error and on
    /// encoding, so names equal by canonical equivalence never meet in a merge.
    @Test func aNameThatIsNotASchemaNameIsRefused() throws {
        let spoilers = ["\u{E9}", "e\u{301}", "\u{1F600}", " ", "\u{7F}", "\u{0}"]
        for index in 0..<Self.caseCount / 8 {
            var generator = SyncGenerator(seed: 9_317, index: index)
            let key = generator.random.pick(generator.rows)
            let stamp = generator.stamp()
            let base = generator.random.pick(["Trip", "title", "tags"])
            let spoiler = generator.random.pick(spoilers)
            let position = generator.random.next(below: 3)
            let bad =
                generator.random.chance(0.1) ? "" : String(base.prefix(position)) + spoiler + base.dropFirst(position)
            let part = generator.random.next(below: 3)
            let row: [Any] = [
                part == 0 ? bad : key.entity, key.id.uuidString, NSNull(), NSNull(),
                [[part == 1 ? bad : "title", ["text": "Lisbon"], try stampJSON(stamp)]],
                [[part == 2 ? bad : "tags", key.id.uuidString, try stampJSON(stamp), NSNull()]],
            ]
            let data = try JSONSerialization.data(withJSONObject: row)
            #expect("case \(index): \(bad.debugDescription)") {
                try JSONDecoder().decode(RowChange.self, from: data)
            } throws: { error in
                guard case .malformedMessage = error as? SyncError else { return false }
                return true
            }
            let change =
                switch part {
                case 0: RowChange.insert(RowKey(entity: bad, id: key.id), values: [:], at: stamp)
                case 1: RowChange.update(key, values: [bad: .null], at: stamp)
                default: RowChange.link(key, bad, to: key.id, at: stamp)
                }
            #expect(throws: EncodingError.self, "case \(index)") { try JSONEncoder().encode(change) }
        }
        let good = RowChange.update(
            RowKey(entity: "Trip", id: UUID()), values: ["home.city": .null],
            at: HybridTimestamp(milliseconds: 1, counter: 0, node: SyncNodeID()))
        #expect(try JSONDecoder().decode(RowChange.self, from: JSONEncoder().encode(good)) == good)
    }

    /// A timestamp as `JSONSerialization` objects.
    private func stampJSON(_ stamp: HybridTimestamp) throws -> Any {
        try JSONSerialization.jsonObject(with: JSONEncoder().encode(stamp))
    }

    /// A message from another protocol version is refused with a typed error before anything else is read.
    @Test func anotherProtocolVersionIsRefused() throws {
        let schema = SyncSchemaVersion(model: "Trips", version: 3, checksum: "abc")
        let push = PushRequest(
            device: SyncNodeID(), schema: schema, after: nil, through: HistoryToken(7), changes: ChangeSet())
        let data = try JSONEncoder().encode(push)
        #expect(try JSONDecoder().decode(PushRequest.self, from: data) == push)
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["protocolVersion"] = 2
        object["changes"] = "written differently in version 2"
        let newer = try JSONSerialization.data(withJSONObject: object)
        #expect(throws: SyncError.unsupportedProtocolVersion(found: 2, supported: 1...1)) {
            try JSONDecoder().decode(PushRequest.self, from: newer)
        }
    }

    /// Two writes with equal stamps whose values are equal by `==` but not in bytes (±0, dates ±0,
    /// NFC and NFD text) resolve to the same bytes in either order.
    @Test func equalStampsKeepTheSameBytesInAnyOrder() throws {
        let pool: [SyncValue] = [
            .real(0.0), .real(-0.0), .date(Date(timeIntervalSinceReferenceDate: 0)),
            .date(Date(timeIntervalSinceReferenceDate: -0.0)), .text("\u{E9}"), .text("e\u{301}"),
            .decimal("\u{E9}"), .decimal("e\u{301}"), .integer(0), .null,
        ]
        var random = SplitMix64(seed: 2_804)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for _ in 0..<Self.caseCount {
            let stamp = HybridTimestamp(milliseconds: UInt64(random.next(below: 3)), counter: 0, node: SyncNodeID())
            let left = StampedValue(random.pick(pool), at: stamp)
            let right = StampedValue(random.pick(pool), at: stamp)
            #expect(try encoder.encode(left.latest(right)) == encoder.encode(right.latest(left)), "\(left) \(right)")
        }
    }

    /// Malformed values are refused whatever the decoder's strategies: NaN, a non-finite date, a
    /// null with a payload.
    @Test func malformedValuesAreRefused() throws {
        let decoder = JSONDecoder()
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(
            positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        for json in [#"{"real":"nan"}"#, #"{"date":"nan"}"#, #"{"date":"inf"}"#, #"{"null":5}"#, #"{"null":false}"#] {
            #expect(throws: DecodingError.self, "\(json)") { try decoder.decode(SyncValue.self, from: Data(json.utf8)) }
        }
        #expect(try decoder.decode(SyncValue.self, from: Data(#"{"null":null}"#.utf8)) == .null)
        #expect(throws: EncodingError.self) { try JSONEncoder().encode(SyncValue.real(.nan)) }
    }
}
