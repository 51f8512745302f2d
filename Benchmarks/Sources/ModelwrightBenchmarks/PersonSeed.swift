import Foundation

/// The fields a ``Digest`` reads, which every contender's person type has.
protocol PersonFields {
    var age: Int { get }
    var firstName: String { get }
    var lastName: String { get }
    var nickname: String? { get }
}

/// One person as every contender stores it: the benchmark's data, built once and handed to each
/// contender, which turns it into its own record type before any clock starts.
struct PersonSeed: PersonFields, Sendable, Hashable {
    let id: UUID
    let firstName: String
    let lastName: String
    let age: Int
    let createdAt: Date
    let nickname: String?

    /// `count` people whose ages are `index % 10_000`, so that an age picks `count / 10_000`
    /// of them. Last names are longer than 15 UTF-8 bytes, so they need a heap buffer in Swift
    /// (as most real text does); first names and nicknames fit in a small string.
    static func make(count: Int) -> [PersonSeed] {
        (0..<count).map(make(index:))
    }

    /// The person at `index` of every generated list.
    static func make(index: Int) -> PersonSeed {
        PersonSeed(
            id: seedID(index),
            firstName: "First \(index)",
            lastName: "Lastname-of-person-\(index)",
            age: index % ageCount,
            createdAt: Date(timeIntervalSinceReferenceDate: 700_000_000 + Double(index) * 1.5),
            nickname: index % 3 == 0 ? nil : "nick\(index)"
        )
    }

    /// Ages run from 0 to `ageCount - 1`.
    static let ageCount = 10_000

    /// A version-7-shaped UUID that grows with `index`, as the IDs Modelwright makes do, so every
    /// contender inserts into the primary-key index in the same (mostly increasing) order.
    static func seedID(_ index: Int) -> UUID {
        let value = UInt64(index)
        var bytes = [UInt8](repeating: 0, count: 16)
        for byte in 0..<8 {
            bytes[byte] = UInt8(truncatingIfNeeded: value >> UInt64(56 - byte * 8))
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x70
        bytes[8] = 0x80 | UInt8(truncatingIfNeeded: value & 0x3F)
        for byte in 9..<16 {
            bytes[byte] = UInt8(truncatingIfNeeded: (value &* 0x9E37_79B9_7F4A_7C15) >> UInt64((byte - 9) * 8))
        }
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            )
        )
    }
}

/// A summary of the rows a read workload saw: enough to check that every contender read the
/// same rows and decoded every column.
struct Digest: Equatable, CustomStringConvertible {
    var rows = 0
    var ageSum = 0
    var textBytes = 0
    var nicknames = 0

    mutating func add(_ person: some PersonFields) {
        rows += 1
        ageSum += person.age
        textBytes += person.firstName.utf8.count + person.lastName.utf8.count
        if person.nickname != nil { nicknames += 1 }
    }

    mutating func add(_ other: Digest) {
        rows += other.rows
        ageSum += other.ageSum
        textBytes += other.textBytes
        nicknames += other.nicknames
    }

    var description: String { "\(rows) rows, age sum \(ageSum), \(textBytes) text bytes, \(nicknames) nicknames" }
}
