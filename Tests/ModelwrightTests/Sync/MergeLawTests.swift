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
    /// built in (messages are deterministic).
    @Test func changeSetsRoundTripAndEncodeDeterministically() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        for index in 0..<Self.caseCount / 4 {
            var generator = SyncGenerator(seed: 2_831, index: index)
            let changes = (0..<generator.random.size(in: 1...8)).map { _ in generator.change() }
            let set = ChangeSet(changes)
            let data = try encoder.encode(set)
            #expect(try JSONDecoder().decode(ChangeSet.self, from: data) == set, "case \(index)")
            #expect(try encoder.encode(ChangeSet(changes.reversed())) == data, "case \(index)")
        }
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
