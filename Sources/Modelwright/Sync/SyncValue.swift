import Foundation

/// A value of one attribute as sync carries it: engine-free, so a device's SQLite store and the
/// server's PostgreSQL store exchange the same values, and totally ordered, so that two writes
/// with equal timestamps (which a correct clock never makes) still resolve the same way everywhere.
///
/// A to-one relationship travels as an attribute whose value is the target's ``uuid(_:)`` or
/// ``null``. A composite attribute travels as one value per field (`home.city`), a `Codable`
/// attribute as its JSON ``text(_:)``, an enum as its raw value.
public enum SyncValue: Sendable, Hashable, Comparable {
    /// No value (an optional attribute or to-one relationship that is empty).
    case null
    /// A `Bool`.
    case bool(Bool)
    /// Any integer type, an `Int` enum's raw value.
    case integer(Int64)
    /// A `Double` or `Float` (never NaN: the stores refuse it).
    case real(Double)
    /// A `Decimal`, as its exact text.
    case decimal(String)
    /// A `String`, a `URL`, a `Day`, a `String` enum's raw value, a `Codable` value's JSON.
    case text(String)
    /// A `Data`.
    case bytes(Data)
    /// A `Date`.
    case date(Date)
    /// A `UUID`, or the target of a to-one relationship.
    case uuid(UUID)

    /// The order of the kinds, for ``<(_:_:)``.
    private var rank: Int {
        switch self {
        case .null: 0
        case .bool: 1
        case .integer: 2
        case .real: 3
        case .decimal: 4
        case .text: 5
        case .bytes: 6
        case .date: 7
        case .uuid: 8
        }
    }

    /// A total order: by kind, then by value (text by its UTF-8 bytes, bytes and UUIDs bytewise).
    public static func < (lhs: SyncValue, rhs: SyncValue) -> Bool {
        switch (lhs, rhs) {
        case (.bool(let left), .bool(let right)): !left && right
        case (.integer(let left), .integer(let right)): left < right
        case (.real(let left), .real(let right)): precedes(left, right)
        case (.decimal(let left), .decimal(let right)):
            left.utf8.lexicographicallyPrecedes(right.utf8)
        case (.text(let left), .text(let right)):
            left.utf8.lexicographicallyPrecedes(right.utf8)
        case (.bytes(let left), .bytes(let right)): left.lexicographicallyPrecedes(right)
        case (.date(let left), .date(let right)):
            precedes(left.timeIntervalSinceReferenceDate, right.timeIntervalSinceReferenceDate)
        case (.uuid(let left), .uuid(let right)): left.precedes(right)
        default: lhs.rank < rhs.rank
        }
    }

    /// Numeric order, and for numbers equal by `==` but not in bits (`-0.0` and `0.0`) the bit
    /// pattern, so the tie-break between two writes keeps the same bytes in any order.
    private static func precedes(_ left: Double, _ right: Double) -> Bool {
        left < right || (left == right && left.bitPattern < right.bitPattern)
    }
}

// MARK: - Codable

extension SyncValue: Codable {
    private enum CodingKeys: String, CodingKey {
        case null, bool, integer, real, decimal, text, bytes, date, uuid
    }

    /// Decodes the one-key object ``encode(to:)`` writes.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(
                    codingPath: decoder.codingPath, debugDescription: "a value is an object with exactly one key"))
        }
        switch key {
        case .null:
            guard try container.decodeNil(forKey: key) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "a null value is written {\"null\": null}")
            }
            self = .null
        case .bool: self = .bool(try container.decode(Bool.self, forKey: key))
        case .integer: self = .integer(try container.decode(Int64.self, forKey: key))
        case .real:
            if let number = try? container.decode(Double.self, forKey: key) {
                // A decoder with a non-conforming float strategy can read NaN, which the stores refuse.
                guard !number.isNaN else {
                    throw DecodingError.dataCorruptedError(
                        forKey: key, in: container, debugDescription: "a real is never NaN")
                }
                self = .real(number)
            } else {
                switch try container.decode(String.self, forKey: key) {
                case "inf": self = .real(.infinity)
                case "-inf": self = .real(-.infinity)
                default:
                    throw DecodingError.dataCorruptedError(
                        forKey: key, in: container, debugDescription: "a real is a number, \"inf\" or \"-inf\"")
                }
            }
        case .decimal: self = .decimal(try container.decode(String.self, forKey: key))
        case .text: self = .text(try container.decode(String.self, forKey: key))
        case .bytes:
            guard let data = Data(base64Encoded: try container.decode(String.self, forKey: key)) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "bytes are written in base64")
            }
            self = .bytes(data)
        case .date:
            let seconds = try container.decode(Double.self, forKey: key)
            guard seconds.isFinite else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "a date is a finite number of seconds since 2001")
            }
            self = .date(Date(timeIntervalSinceReferenceDate: seconds))
        case .uuid: self = .uuid(try container.decode(UUID.self, forKey: key))
        }
    }

    /// Encodes the value as an object with one key, its kind: `{"text": "Lisbon"}`. Bytes are
    /// base64 and dates seconds since 2001 whatever the encoder's strategies, and the infinities
    /// (which JSON has no number for, and the stores keep) are `"inf"` and `"-inf"`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .null: try container.encodeNil(forKey: .null)
        case .bool(let value): try container.encode(value, forKey: .bool)
        case .integer(let value): try container.encode(value, forKey: .integer)
        case .real(let value):
            if value.isNaN {
                throw EncodingError.invalidValue(
                    value,
                    EncodingError.Context(codingPath: encoder.codingPath, debugDescription: "a real is never NaN"))
            } else if value.isFinite {
                try container.encode(value, forKey: .real)
            } else {
                try container.encode(value < 0 ? "-inf" : "inf", forKey: .real)
            }
        case .decimal(let value): try container.encode(value, forKey: .decimal)
        case .text(let value): try container.encode(value, forKey: .text)
        case .bytes(let value): try container.encode(value.base64EncodedString(), forKey: .bytes)
        case .date(let value): try container.encode(value.timeIntervalSinceReferenceDate, forKey: .date)
        case .uuid(let value): try container.encode(value, forKey: .uuid)
        }
    }
}

/// A value with the timestamp of the write that set it: one register of per-attribute
/// last-writer-wins.
public struct StampedValue: Sendable, Hashable, Codable {
    /// The value written.
    public let value: SyncValue
    /// When it was written.
    public let stamp: HybridTimestamp

    /// The value `value`, written at `stamp`.
    public init(_ value: SyncValue, at stamp: HybridTimestamp) {
        self.value = value
        self.stamp = stamp
    }

    /// The later write of the two: the larger timestamp, then (for equal timestamps, which only a
    /// faulty node makes) the larger value, so the choice is the same in any order.
    func latest(_ other: StampedValue) -> StampedValue {
        if stamp != other.stamp { return stamp < other.stamp ? other : self }
        return value < other.value ? other : self
    }
}
