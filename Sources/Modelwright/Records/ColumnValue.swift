import Foundation

/// A Swift type that one column stores.
///
/// Every attribute type of the schema language conforms: `Bool`, the integers, `Double`,
/// `Float`, `Decimal` (exact, as text), `String`, `Date` (seconds since 2001-01-01 as a
/// double, which is exactly how `Date` holds its value, so it round-trips bit for bit), `Data`,
/// `UUID` (16 bytes), `URL` (text), optionals of these (SQL `NULL`), and enums through their
/// raw value (declare `extension Role: ColumnValue {}`).
public protocol ColumnValue: Sendable {
    /// The value as SQLite stores it.
    var sqlValue: SQLValue { get throws }
    /// The value from what SQLite stored; throws when the stored value cannot be this type.
    init(sqlValue: SQLValue) throws
}

/// Why a stored value could not be read or written as the record's type.
public struct ColumnValueError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public let message: String

    public var description: String { message }

    static func mismatch(_ value: SQLValue, _ type: Any.Type) -> ColumnValueError {
        ColumnValueError(message: "cannot read \(value) as \(type)")
    }
}

extension Bool: ColumnValue {
    public var sqlValue: SQLValue { .integer(self ? 1 : 0) }
    public init(sqlValue: SQLValue) throws {
        guard case .integer(let value) = sqlValue else { throw ColumnValueError.mismatch(sqlValue, Bool.self) }
        self = value != 0
    }
}

extension Int64: ColumnValue {
    public var sqlValue: SQLValue { .integer(self) }
    public init(sqlValue: SQLValue) throws {
        guard case .integer(let value) = sqlValue else { throw ColumnValueError.mismatch(sqlValue, Int64.self) }
        self = value
    }
}

extension Int: ColumnValue {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
    public init(sqlValue: SQLValue) throws {
        guard let value = Int(exactly: try Int64(sqlValue: sqlValue)) else {
            throw ColumnValueError.mismatch(sqlValue, Int.self)
        }
        self = value
    }
}

extension Int32: ColumnValue {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
    public init(sqlValue: SQLValue) throws {
        guard let value = Int32(exactly: try Int64(sqlValue: sqlValue)) else {
            throw ColumnValueError.mismatch(sqlValue, Int32.self)
        }
        self = value
    }
}

extension Int16: ColumnValue {
    public var sqlValue: SQLValue { .integer(Int64(self)) }
    public init(sqlValue: SQLValue) throws {
        guard let value = Int16(exactly: try Int64(sqlValue: sqlValue)) else {
            throw ColumnValueError.mismatch(sqlValue, Int16.self)
        }
        self = value
    }
}

extension Double: ColumnValue {
    /// SQLite stores NaN as NULL, which would silently turn a value into "no value"; NaN is
    /// refused instead (``ColumnValueError``). Infinities and -0.0 round-trip.
    public var sqlValue: SQLValue {
        get throws {
            guard !isNaN else { throw ColumnValueError(message: "NaN cannot be stored: SQLite would store it as NULL") }
            return .real(self)
        }
    }
    public init(sqlValue: SQLValue) throws {
        switch sqlValue {
        case .real(let value): self = value
        case .integer(let value): self = Double(value)
        default: throw ColumnValueError.mismatch(sqlValue, Double.self)
        }
    }
}

extension Float: ColumnValue {
    public var sqlValue: SQLValue { get throws { try Double(self).sqlValue } }
    public init(sqlValue: SQLValue) throws {
        self = Float(try Double(sqlValue: sqlValue))
    }
}

extension Decimal: ColumnValue {
    /// Stored as its exact decimal text, never through `Double`.
    public var sqlValue: SQLValue {
        get throws {
            guard !isNaN else { throw ColumnValueError(message: "NaN cannot be stored") }
            return .text(description)
        }
    }
    public init(sqlValue: SQLValue) throws {
        guard case .text(let text) = sqlValue,
            let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX"))
        else { throw ColumnValueError.mismatch(sqlValue, Decimal.self) }
        self = value
    }
}

extension String: ColumnValue {
    public var sqlValue: SQLValue { .text(self) }
    public init(sqlValue: SQLValue) throws {
        guard case .text(let value) = sqlValue else { throw ColumnValueError.mismatch(sqlValue, String.self) }
        self = value
    }
}

extension Date: ColumnValue {
    /// Like `Double`, a NaN date is refused rather than stored as NULL.
    public var sqlValue: SQLValue {
        get throws {
            guard !timeIntervalSinceReferenceDate.isNaN else { throw Self.notANumber }
            return .real(timeIntervalSinceReferenceDate)
        }
    }

    /// The error for a date whose time interval is NaN.
    static let notANumber = ColumnValueError(message: "a NaN date cannot be stored: SQLite would store it as NULL")

    public init(sqlValue: SQLValue) throws {
        self.init(timeIntervalSinceReferenceDate: try Double(sqlValue: sqlValue))
    }
}

extension Data: ColumnValue {
    public var sqlValue: SQLValue { .blob(self) }
    public init(sqlValue: SQLValue) throws {
        guard case .blob(let value) = sqlValue else { throw ColumnValueError.mismatch(sqlValue, Data.self) }
        self = value
    }
}

extension UUID: ColumnValue {
    public var sqlValue: SQLValue {
        var uuid = self.uuid
        return .blob(withUnsafeBytes(of: &uuid) { Data($0) })
    }
    public init(sqlValue: SQLValue) throws {
        guard case .blob(let data) = sqlValue, data.count == 16 else {
            throw ColumnValueError.mismatch(sqlValue, UUID.self)
        }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyBytes(from: data) }
        self.init(uuid: uuid)
    }
}

extension URL: ColumnValue {
    public var sqlValue: SQLValue { .text(absoluteString) }
    public init(sqlValue: SQLValue) throws {
        guard case .text(let text) = sqlValue, let url = URL(string: text) else {
            throw ColumnValueError.mismatch(sqlValue, URL.self)
        }
        self = url
    }
}

extension RecordID: ColumnValue {
    public var sqlValue: SQLValue { uuid.sqlValue }
    public init(sqlValue: SQLValue) throws {
        self.init(try UUID(sqlValue: sqlValue))
    }
}

extension Optional: ColumnValue where Wrapped: ColumnValue {
    public var sqlValue: SQLValue {
        get throws {
            switch self {
            case .none: .null
            case .some(let value): try value.sqlValue
            }
        }
    }
    public init(sqlValue: SQLValue) throws {
        self = sqlValue == .null ? nil : try Wrapped(sqlValue: sqlValue)
    }
}

extension ColumnValue where Self: RawRepresentable, RawValue: ColumnValue {
    /// Enums are stored as their raw value.
    public var sqlValue: SQLValue { get throws { try rawValue.sqlValue } }
    public init(sqlValue: SQLValue) throws {
        guard let value = Self(rawValue: try RawValue(sqlValue: sqlValue)) else {
            throw ColumnValueError(message: "\(sqlValue) is not a case of \(Self.self)")
        }
        self = value
    }
}
