import Foundation

/// A Swift type that one column stores.
///
/// Every attribute type of the schema language conforms: `Bool`, the integers, `Double`,
/// `Float`, `Decimal` (exact, as text), `String`, `Date` (seconds since 2001-01-01 as a
/// double, which is exactly how `Date` holds its value, so it round-trips bit for bit), `Data`,
/// `UUID` (16 bytes), `URL` (text), optionals of these (SQL `NULL`), and enums through their
/// raw value (declare `extension Role: ColumnValue {}`). The conversions themselves are
/// `@_spi(Generated)`: the store and generated code call them, app code has no need to.
public protocol ColumnValue: Sendable {
    /// The value as SQLite stores it.
    @_spi(Generated) var sqlValue: SQLValue { get throws }
    /// The value from what SQLite stored; throws when the stored value cannot be this type.
    @_spi(Generated) init(sqlValue: SQLValue) throws
}

/// Why a stored value could not be read or written as the record's type.
public struct ColumnValueError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public let message: String

    /// The message.
    public var description: String { message }

    static func mismatch(_ value: SQLValue, _ type: Any.Type) -> ColumnValueError {
        ColumnValueError(message: "cannot read \(value) as \(type)")
    }
}

extension Bool: ColumnValue {
    /// `1` for true, `0` for false.
    @_spi(Generated) public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
    /// Reads the integer 1 as true and 0 as false; any other value is refused, as a `Bool` could
    /// not write it back (Core Data stores booleans the same way).
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        guard case .integer(let value) = sqlValue, value == 0 || value == 1 else {
            throw ColumnValueError.mismatch(sqlValue, Bool.self)
        }
        self = value == 1
    }
}

extension Int64: ColumnValue {
    /// The integer.
    @_spi(Generated) public var sqlValue: SQLValue { .integer(self) }
    /// Reads an integer.
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        guard case .integer(let value) = sqlValue else { throw ColumnValueError.mismatch(sqlValue, Int64.self) }
        self = value
    }
}

extension Int: ColumnValue {
    /// The integer, as 64 bits.
    @_spi(Generated) public var sqlValue: SQLValue { .integer(Int64(self)) }
    /// Reads an integer that fits.
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        guard let value = Int(exactly: try Int64(sqlValue: sqlValue)) else {
            throw ColumnValueError.mismatch(sqlValue, Int.self)
        }
        self = value
    }
}

extension Int32: ColumnValue {
    /// The integer, as 64 bits.
    @_spi(Generated) public var sqlValue: SQLValue { .integer(Int64(self)) }
    /// Reads an integer that fits in 32 bits.
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        guard let value = Int32(exactly: try Int64(sqlValue: sqlValue)) else {
            throw ColumnValueError.mismatch(sqlValue, Int32.self)
        }
        self = value
    }
}

extension Int16: ColumnValue {
    /// The integer, as 64 bits.
    @_spi(Generated) public var sqlValue: SQLValue { .integer(Int64(self)) }
    /// Reads an integer that fits in 16 bits.
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        guard let value = Int16(exactly: try Int64(sqlValue: sqlValue)) else {
            throw ColumnValueError.mismatch(sqlValue, Int16.self)
        }
        self = value
    }
}

extension Double: ColumnValue {
    /// SQLite stores NaN as NULL, which would silently turn a value into "no value"; NaN is
    /// refused instead (``ColumnValueError``). Infinities and -0.0 round-trip.
    @_spi(Generated) public var sqlValue: SQLValue {
        get throws {
            guard !isNaN else { throw ColumnValueError(message: "NaN cannot be stored: SQLite would store it as NULL") }
            return .real(self)
        }
    }
    /// Reads a real, or an integer as a real.
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        switch sqlValue {
        case .real(let value): self = value
        case .integer(let value): self = Double(value)
        default: throw ColumnValueError.mismatch(sqlValue, Double.self)
        }
    }
}

extension Float: ColumnValue {
    /// The value as a `Double`; NaN is refused.
    @_spi(Generated) public var sqlValue: SQLValue { get throws { try Double(self).sqlValue } }
    /// Reads a real, rounded to the nearest `Float`; a finite value beyond `Float`'s range is a
    /// mismatch, as an integer beyond `Int16`'s is, rather than an infinity.
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        let double = try Double(sqlValue: sqlValue)
        let value = Float(double)
        guard value.isFinite || !double.isFinite else { throw ColumnValueError.mismatch(sqlValue, Float.self) }
        self = value
    }
}

extension Decimal: ColumnValue {
    /// Stored as its exact decimal text, never through `Double`.
    @_spi(Generated) public var sqlValue: SQLValue {
        get throws {
            guard !isNaN else { throw ColumnValueError(message: "NaN cannot be stored") }
            return .text(description)
        }
    }
    /// Reads the decimal text: a whole number in decimal notation, such as `-12.50` or `1e-3`.
    /// `Decimal(string:)` alone reads the longest number at the start, so `1,5` would read as 1.
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        guard case .text(let text) = sqlValue, Self.isDecimalNotation(text),
            let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        else { throw ColumnValueError.mismatch(sqlValue, Decimal.self) }
        self = value
    }

    /// Whether `text` is all one number: a sign, digits with at most one point (a digit on
    /// either side), and an exponent.
    private static func isDecimalNotation(_ text: String) -> Bool {
        var bytes = text.utf8[...]
        if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        let isDigit = { (byte: UInt8) in byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        let whole = bytes.prefix(while: isDigit)
        bytes = bytes.dropFirst(whole.count)
        var fraction = 0
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            fraction = bytes.prefix(while: isDigit).count
            bytes = bytes.dropFirst(fraction)
        }
        guard whole.count + fraction > 0 else { return false }
        if bytes.first == UInt8(ascii: "e") || bytes.first == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
            let exponent = bytes.prefix(while: isDigit).count
            guard exponent > 0 else { return false }
            bytes = bytes.dropFirst(exponent)
        }
        return bytes.isEmpty
    }
}

extension String: ColumnValue {
    /// The text.
    @_spi(Generated) public var sqlValue: SQLValue { .text(self) }
    /// Reads text.
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        guard case .text(let value) = sqlValue else { throw ColumnValueError.mismatch(sqlValue, String.self) }
        self = value
    }
}

extension Date: ColumnValue {
    /// Like `Double`, a NaN date is refused rather than stored as NULL.
    @_spi(Generated) public var sqlValue: SQLValue {
        get throws {
            guard !timeIntervalSinceReferenceDate.isNaN else { throw Self.notANumber }
            return .real(timeIntervalSinceReferenceDate)
        }
    }

    /// The error for a date whose time interval is NaN.
    static let notANumber = ColumnValueError(message: "a NaN date cannot be stored: SQLite would store it as NULL")

    /// Reads seconds since 2001-01-01.
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        self.init(timeIntervalSinceReferenceDate: try Double(sqlValue: sqlValue))
    }
}

extension Data: ColumnValue {
    /// The bytes as a BLOB.
    @_spi(Generated) public var sqlValue: SQLValue { .blob(self) }
    /// Reads a BLOB.
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        guard case .blob(let value) = sqlValue else { throw ColumnValueError.mismatch(sqlValue, Data.self) }
        self = value
    }
}

extension UUID: ColumnValue {
    /// The 16 bytes as a BLOB.
    @_spi(Generated) public var sqlValue: SQLValue {
        var uuid = self.uuid
        return .blob(withUnsafeBytes(of: &uuid) { Data($0) })
    }
    /// Reads a 16-byte BLOB.
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        guard case .blob(let data) = sqlValue, data.count == 16 else {
            throw ColumnValueError.mismatch(sqlValue, UUID.self)
        }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyBytes(from: data) }
        self.init(uuid: uuid)
    }
}

extension URL: ColumnValue {
    /// The URL's absolute string.
    @_spi(Generated) public var sqlValue: SQLValue { .text(absoluteString) }
    /// Reads text that is a URL.
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        guard case .text(let text) = sqlValue, let url = URL(string: text) else {
            throw ColumnValueError.mismatch(sqlValue, URL.self)
        }
        self = url
    }
}

extension RecordID: ColumnValue {
    /// The UUID's 16 bytes.
    @_spi(Generated) public var sqlValue: SQLValue { uuid.sqlValue }
    /// Reads a 16-byte BLOB.
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        self.init(try UUID(sqlValue: sqlValue))
    }
}

extension Optional: ColumnValue where Wrapped: ColumnValue {
    /// NULL for `nil`, otherwise the wrapped value's.
    @_spi(Generated) public var sqlValue: SQLValue {
        get throws {
            switch self {
            case .none: .null
            case .some(let value): try value.sqlValue
            }
        }
    }
    /// `nil` from NULL, otherwise the wrapped value.
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        self = sqlValue == .null ? nil : try Wrapped(sqlValue: sqlValue)
    }
}

extension ColumnValue where Self: RawRepresentable, RawValue: ColumnValue {
    /// Enums are stored as their raw value.
    @_spi(Generated) public var sqlValue: SQLValue { get throws { try rawValue.sqlValue } }
    /// Reads the raw value; throws when no case has it.
    @_spi(Generated) public init(sqlValue: SQLValue) throws {
        guard let value = Self(rawValue: try RawValue(sqlValue: sqlValue)) else {
            throw ColumnValueError(message: "\(sqlValue) is not a case of \(Self.self)")
        }
        self = value
    }
}
