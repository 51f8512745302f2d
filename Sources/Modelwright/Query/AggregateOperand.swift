import Foundation

/// A value a request can summarise, optional or not: ``Base`` is the type without its optional,
/// which the aggregate's result is typed after (`min` of an `Int16?` field is an `Int16?`).
public protocol AggregateOperand: ColumnValue {
    /// The value's type without its optional.
    associatedtype Base: ColumnValue & Hashable
}

/// A value that adds up: the integers, `Double`, `Float` and `Decimal`.
///
/// ``Sum`` is wide enough that a sum never wraps: every integer sums as an `Int64` (a sum beyond
/// it throws ``AggregateError/overflow(entity:field:)``), `Float` and `Double` as `Double`, and
/// `Decimal` as an exact `Decimal`. ``Mean`` is `Double`, or `Decimal` for a decimal.
public protocol SummableValue: AggregateOperand, Hashable where Base == Self {
    /// The type of a sum of these values.
    associatedtype Sum: ColumnValue & Hashable
    /// The type of an average of these values.
    associatedtype Mean: ColumnValue & Hashable
}

extension Optional: AggregateOperand where Wrapped: ColumnValue & Hashable {
    /// The wrapped type.
    public typealias Base = Wrapped
}

extension Int16: SummableValue {
    /// A sum of `Int16` values, widened.
    public typealias Sum = Int64
    /// An average, as a `Double`.
    public typealias Mean = Double
    /// `Int16` itself.
    public typealias Base = Int16
}
extension Int32: SummableValue {
    /// A sum of `Int32` values, widened.
    public typealias Sum = Int64
    /// An average, as a `Double`.
    public typealias Mean = Double
    /// `Int32` itself.
    public typealias Base = Int32
}
extension Int64: SummableValue {
    /// A sum of `Int64` values; one beyond `Int64` throws.
    public typealias Sum = Int64
    /// An average, as a `Double`.
    public typealias Mean = Double
    /// `Int64` itself.
    public typealias Base = Int64
}
extension Int: SummableValue {
    /// A sum of `Int` values; one beyond `Int64` throws.
    public typealias Sum = Int64
    /// An average, as a `Double`.
    public typealias Mean = Double
    /// `Int` itself.
    public typealias Base = Int
}
extension Double: SummableValue {
    /// A sum of `Double` values.
    public typealias Sum = Double
    /// An average, as a `Double`.
    public typealias Mean = Double
    /// `Double` itself.
    public typealias Base = Double
}
extension Float: SummableValue {
    /// A sum of `Float` values, as a `Double`.
    public typealias Sum = Double
    /// An average, as a `Double`.
    public typealias Mean = Double
    /// `Float` itself.
    public typealias Base = Float
}
extension Decimal: SummableValue {
    /// An exact sum.
    public typealias Sum = Decimal
    /// An average to `Decimal`'s 38 significant digits.
    public typealias Mean = Decimal
    /// `Decimal` itself.
    public typealias Base = Decimal
}
extension Bool: AggregateOperand {
    /// `Bool` itself.
    public typealias Base = Bool
}
extension String: AggregateOperand {
    /// `String` itself.
    public typealias Base = String
}
extension Date: AggregateOperand {
    /// `Date` itself.
    public typealias Base = Date
}
extension UUID: AggregateOperand {
    /// `UUID` itself.
    public typealias Base = UUID
}
extension URL: AggregateOperand {
    /// `URL` itself.
    public typealias Base = URL
}
