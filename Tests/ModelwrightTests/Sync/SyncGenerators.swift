import Foundation
import ModelwrightTestSupport

@testable import Modelwright

/// Draws sync values, stamps and changes from small pools, so that generated changes collide:
/// the same rows, attributes, links and (rarely, as only a faulty node makes them) the same stamps.
struct SyncGenerator {
    var random: SplitMix64
    let nodes: [SyncNodeID]
    let rows: [RowKey]
    let targets: [UUID]

    init(seed: UInt64, index: Int) {
        random = SplitMix64(seed: seed, index: index)
        var ids = SplitMix64(seed: seed &+ 1, index: index)
        func uuid() -> UUID { randomUUID(&ids) }
        nodes = (0..<3).map { _ in SyncNodeID(uuid()) }
        rows = (0..<4).map { RowKey(entity: $0 % 2 == 0 ? "Trip" : "Stop", id: uuid()) }
        targets = (0..<3).map { _ in uuid() }
    }

    static let attributes = ["title", "rating", "owner", "home.city"]

    mutating func stamp() -> HybridTimestamp {
        HybridTimestamp(
            milliseconds: UInt64(random.next(below: 6)), counter: UInt32(random.next(below: 2)),
            node: random.pick(nodes))
    }

    mutating func value() -> SyncValue {
        switch random.next(below: 10) {
        case 0: .null
        case 1: .bool(random.chance(0.5))
        case 2: .integer(Int64(random.next(below: 5)) - 2)
        case 3: .real(random.pick([0.0, -0.5, 1e300, -Double.infinity]))
        case 4: .decimal(random.pick(["19.99", "0.1"]))
        case 5: .text(random.pick(["", "Lisbon", "Porto", "e\u{301}"]))
        case 6: .bytes(Data(random.pick([[], [0], [0, 255]])))
        case 7: .date(Date(timeIntervalSinceReferenceDate: Double(random.next(below: 3))))
        default: .uuid(random.pick(targets))
        }
    }

    /// One change of a random row: any mix of an insert, a delete, attribute writes and link stamps.
    mutating func change() -> RowChange {
        let key = random.pick(rows)
        var attributes: [String: StampedValue] = [:]
        for name in Self.attributes where random.chance(0.4) {
            attributes[name] = StampedValue(value(), at: stamp())
        }
        var links: [LinkKey: LinkStamps] = [:]
        for target in targets where random.chance(0.3) {
            links[LinkKey(relationship: random.pick(["tags", "stops"]), target: target)] = LinkStamps(
                added: random.chance(0.6) ? stamp() : nil, removed: random.chance(0.5) ? stamp() : nil)
        }
        return RowChange(
            key: key,
            inserted: random.chance(0.4) ? stamp() : nil,
            deleted: random.chance(0.2) ? stamp() : nil,
            attributes: attributes,
            links: links)
    }

    mutating func changeSet() -> ChangeSet {
        ChangeSet((0..<random.next(below: 6)).map { _ in change() })
    }
}

/// SplitMix64's bits as a UUID, for replicas that make rows.
func randomUUID(_ random: inout SplitMix64) -> UUID {
    let high = random.next()
    let low = random.next()
    var bytes = (0..<8).map { UInt8(truncatingIfNeeded: high >> UInt64(56 - $0 * 8)) }
    bytes += (0..<8).map { UInt8(truncatingIfNeeded: low >> UInt64(56 - $0 * 8)) }
    return UUID(
        uuid: (
            bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
            bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
        ))
}
