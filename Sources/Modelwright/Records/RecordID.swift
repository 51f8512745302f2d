import Foundation

/// The identity of one record: a UUID typed by its record type, like Core Data's managed object
/// ID but a plain value that crosses any concurrency boundary.
///
/// IDs are made on the client, so a record is complete before it is inserted and a relationship
/// can point at a record created in the same transaction. New IDs are version-7 UUIDs: their
/// leading 48 bits are the creation time in milliseconds, so rows arrive in the primary-key
/// index roughly in order and inserts stay cheap.
///
/// ```swift
/// let id = User.ID()              // a new identity
/// let same = User.ID(id.uuid)     // the same identity, rebuilt from its UUID
/// ```
public struct RecordID<Target>: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The UUID behind the identity.
    public let uuid: UUID

    /// A new, time-ordered identity.
    public init() {
        uuid = UUIDVersion7.next()
    }

    /// The identity with the given UUID.
    public init(_ uuid: UUID) {
        self.uuid = uuid
    }

    /// Decodes the ID from its UUID string.
    public init(from decoder: any Decoder) throws {
        uuid = try decoder.singleValueContainer().decode(UUID.self)
    }

    /// Encodes the ID as its UUID string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(uuid)
    }

    /// The UUID string.
    public var description: String { uuid.uuidString }
}

/// Makes version-7 UUIDs (RFC 9562): 48 bits of Unix milliseconds, then random bits.
enum UUIDVersion7 {
    static func next() -> UUID {
        let milliseconds = UInt64(Date().timeIntervalSince1970 * 1000)
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: 16)
        for index in 0..<6 {
            bytes[index] = UInt8(truncatingIfNeeded: milliseconds >> UInt64(40 - index * 8))
        }
        let random = generator.next() as UInt64
        let more = generator.next() as UInt64
        for index in 6..<16 {
            let source = index < 14 ? random >> UInt64((index - 6) * 8) : more >> UInt64((index - 14) * 8)
            bytes[index] = UInt8(truncatingIfNeeded: source)
        }
        bytes[6] = (bytes[6] & 0x0F) | 0x70  // version 7
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // RFC 9562 variant
        return UUID(
            uuid: (
                bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
            )
        )
    }
}
