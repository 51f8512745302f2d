import Foundation
import Modelwright

/// One value as PostgreSQL holds it, in the column types the store uses.
///
/// Query parameters are values of this type and rows give them back. Each case is sent and read
/// in PostgreSQL's binary format (numeric parameters as text, which PostgreSQL reads exactly),
/// so no value goes through a text rendering that could round it.
public enum PostgresValue: Sendable, Hashable {
    /// SQL `NULL`.
    case null
    /// `boolean`.
    case bool(Bool)
    /// `smallint`.
    case int16(Int16)
    /// `integer`.
    case int32(Int32)
    /// `bigint`.
    case int64(Int64)
    /// `real`.
    case float(Float)
    /// `double precision`.
    case double(Double)
    /// `numeric`, as its exact decimal text (`-12.50`).
    case numeric(String)
    /// `text` (also `varchar` and `name` when read).
    case text(String)
    /// `timestamptz`: microseconds since 2000-01-01 00:00 UTC; `Int64.max` and `Int64.min` are
    /// `infinity` and `-infinity`.
    case timestamp(microsecondsSince2000: Int64)
    /// `bytea`.
    case bytes(Data)
    /// `uuid`.
    case uuid(UUID)
    /// `jsonb` (also `json` when read), as JSON text.
    case jsonb(String)
    /// A value of a type outside this list, as the server sent it.
    case other(oid: UInt32, bytes: Data)

    /// The type's object ID, which the protocol names types by; 0 lets the server infer it.
    var oid: UInt32 {
        switch self {
        case .null: 0
        case .bool: 16
        case .int16: 21
        case .int32: 23
        case .int64: 20
        case .float: 700
        case .double: 701
        case .numeric: 1_700
        case .text: 25
        case .timestamp: 1_184
        case .bytes: 17
        case .uuid: 2_950
        case .jsonb: 3_802
        case .other(let oid, _): oid
        }
    }

    // MARK: - Parameters

    /// The value as a parameter: its bytes (`nil` for NULL) and whether they are binary.
    func parameter() throws -> (bytes: [UInt8]?, isBinary: Bool) {
        switch self {
        case .null: return (nil, true)
        case .bool(let value): return ([value ? 1 : 0], true)
        case .int16(let value): return (Self.bigEndian(UInt16(bitPattern: value)), true)
        case .int32(let value): return (Self.bigEndian(UInt32(bitPattern: value)), true)
        case .int64(let value): return (Self.bigEndian(UInt64(bitPattern: value)), true)
        case .float(let value): return (Self.bigEndian(value.bitPattern), true)
        case .double(let value): return (Self.bigEndian(value.bitPattern), true)
        case .numeric(let text):
            // A text parameter ends at its first NUL: "1\u{0}9" would be stored as 1.
            guard !text.utf8.contains(0) else {
                throw PostgresError.invalidValue("a numeric holding a NUL byte is not a number")
            }
            return (Array(text.utf8), false)
        case .text(let text):
            guard !text.utf8.contains(0) else {
                throw PostgresError.invalidValue("text holding a NUL byte cannot be stored in PostgreSQL")
            }
            return (Array(text.utf8), true)
        case .timestamp(let microseconds): return (Self.bigEndian(UInt64(bitPattern: microseconds)), true)
        case .bytes(let data): return ([UInt8](data), true)
        case .uuid(let uuid): return (withUnsafeBytes(of: uuid.uuid) { Array($0) }, true)
        case .jsonb(let text):
            guard !text.utf8.contains(0) else {
                throw PostgresError.invalidValue("JSON holding a NUL byte cannot be stored in PostgreSQL")
            }
            return ([1] + Array(text.utf8), true)  // jsonb's binary format: version 1, then the text
        case .other(_, let data): return ([UInt8](data), true)
        }
    }

    private static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    // MARK: - Results

    /// The value of a result cell of type `oid`, from its binary form.
    static func decodeBinary(oid: UInt32, _ bytes: UnsafeRawBufferPointer) throws -> PostgresValue {
        func integer<T: FixedWidthInteger>(_: T.Type) throws -> T {
            guard bytes.count == MemoryLayout<T>.size else { throw malformed(oid, bytes.count) }
            var value = T.zero
            withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: bytes) }
            return T(bigEndian: value)
        }
        switch oid {
        case 16:
            guard bytes.count == 1 else { throw malformed(oid, bytes.count) }
            return .bool(bytes[0] != 0)
        case 21: return .int16(try integer(Int16.self))
        case 23: return .int32(try integer(Int32.self))
        case 20: return .int64(try integer(Int64.self))
        case 26: return .int64(Int64(try integer(UInt32.self)))  // oid
        case 700: return .float(Float(bitPattern: try integer(UInt32.self)))
        case 701: return .double(Double(bitPattern: try integer(UInt64.self)))
        case 1_700: return .numeric(try numericText(bytes))
        case 25, 1_043, 19, 1_042: return .text(try utf8(bytes, oid: oid))
        case 1_184, 1_114: return .timestamp(microsecondsSince2000: try integer(Int64.self))
        case 17: return .bytes(Data(bytes))
        case 2_950:
            guard bytes.count == 16 else { throw malformed(oid, bytes.count) }
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: bytes) }
            return .uuid(UUID(uuid: uuid))
        case 3_802:
            guard bytes.first == 1 else { throw malformed(oid, bytes.count) }
            return .jsonb(try utf8(UnsafeRawBufferPointer(rebasing: bytes.dropFirst()), oid: oid))
        case 114: return .jsonb(try utf8(bytes, oid: oid))
        case 2_278: return .null  // void, what functions such as pg_advisory_xact_lock return
        default: return .other(oid: oid, bytes: Data(bytes))
        }
    }

    /// `bytes` as UTF-8 text; invalid UTF-8 (a SQL_ASCII database hands over whatever bytes it
    /// stored) is an error rather than text quietly changed to U+FFFD.
    static func utf8(_ bytes: UnsafeRawBufferPointer, oid: UInt32) throws -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw PostgresError.invalidValue("a value of type \(oid) from the server is not valid UTF-8")
        }
        return text
    }

    /// The value of a result cell of type `oid`, from its text form.
    static func decodeText(oid: UInt32, _ text: String) throws -> PostgresValue {
        func parsed<T>(_ value: T?) throws -> T {
            guard let value else { throw PostgresError.invalidValue("cannot read '\(text)' as type \(oid)") }
            return value
        }
        switch oid {
        case 16: return .bool(text == "t")
        case 21: return .int16(try parsed(Int16(text)))
        case 23: return .int32(try parsed(Int32(text)))
        case 20: return .int64(try parsed(Int64(text)))
        case 26: return .int64(try parsed(Int64(text)))
        // PostgreSQL prints floats in the shortest form that reads back exactly (extra_float_digits).
        case 700: return .float(try parsed(Float(Self.swiftFloatSpelling(text))))
        case 701: return .double(try parsed(Double(Self.swiftFloatSpelling(text))))
        case 1_700: return .numeric(text)
        case 25, 1_043, 19, 1_042: return .text(text)
        case 1_184, 1_114:
            return .timestamp(microsecondsSince2000: try parsed(PostgresDialect.microseconds(timestampText: text)))
        case 17:
            guard text.hasPrefix("\\x") else { throw PostgresError.invalidValue("bytea not in hex format") }
            var data = Data()
            var high: UInt8?
            for byte in text.utf8.dropFirst(2) {
                guard let nibble = Self.hexValue(byte) else { throw PostgresError.invalidValue("bytea not in hex") }
                if let first = high {
                    data.append(first << 4 | nibble)
                    high = nil
                } else {
                    high = nibble
                }
            }
            return .bytes(data)
        case 2_950: return .uuid(try parsed(UUID(uuidString: text)))
        case 3_802, 114: return .jsonb(text)
        case 2_278: return .null
        default: return .other(oid: oid, bytes: Data(text.utf8))
        }
    }

    private static func swiftFloatSpelling(_ text: String) -> String {
        switch text {
        case "Infinity": "inf"
        case "-Infinity": "-inf"
        case "NaN": "nan"
        default: text
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    private static func malformed(_ oid: UInt32, _ count: Int) -> PostgresError {
        .invalidValue("the server sent \(count) bytes for a value of type \(oid), which is not that type's binary form")
    }

    /// numeric's binary form, as decimal text: a count of base-10000 digits, the weight of the
    /// first (its power of 10000), a sign word and the display scale, then the digits.
    private static func numericText(_ bytes: UnsafeRawBufferPointer) throws -> String {
        func word(_ index: Int) -> UInt16 { UInt16(bytes[index]) << 8 | UInt16(bytes[index + 1]) }
        guard bytes.count >= 8 else { throw malformed(1_700, bytes.count) }
        let count = Int(word(0))
        let weight = Int(Int16(bitPattern: word(2)))
        let sign = word(4)
        let scale = Int(word(6))
        guard bytes.count == 8 + 2 * count else { throw malformed(1_700, bytes.count) }
        switch sign {
        case 0xC000: return "NaN"
        case 0xD000: return "Infinity"
        case 0xF000: return "-Infinity"
        default: break
        }
        func digit(_ index: Int) -> Int { index >= 0 && index < count ? Int(word(8 + 2 * index)) : 0 }
        var text = sign == 0x4000 ? "-" : ""
        if weight < 0 {
            text += "0"
        } else {
            text += String(digit(0))
            for index in stride(from: 1, through: weight, by: 1) {
                let group = String(digit(index))
                text += String(repeating: "0", count: 4 - group.count) + group
            }
        }
        if scale > 0 {
            var fraction = ""
            var index = weight + 1
            while fraction.count < scale {
                let group = String(digit(index))
                fraction += String(repeating: "0", count: 4 - group.count) + group
                index += 1
            }
            text += "." + fraction.prefix(scale)
        }
        return text
    }
}
