import Foundation

/// A value for one attribute or relationship of a row that ``MigrationTester`` writes at an old
/// version, checked against that version's schema: no Swift type of the old version is needed.
///
/// Literals cover most values; the others are cases:
///
/// ```swift
/// let values: [String: FixtureValue] = [
///     "username": "ada", "rating": 4, "isVerified": true, "namePrefix": nil,
///     "joinedAt": .date(Date(timeIntervalSince1970: 0)),
/// ]
/// ```
///
/// An enum attribute takes the raw value or the case name as a string (or the raw integer).
/// A composite's fields are set one by one, as `"home.city": "Lisbon"`.
public enum FixtureValue: Sendable, Equatable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    /// No value, for an optional attribute or relationship.
    case null
    /// A `Bool`.
    case bool(Bool)
    /// An integer, for any integer type whose range holds it, a `Double`, `Float` or `Decimal`,
    /// or an enum backed by `Int`.
    case integer(Int64)
    /// A `Double` or `Float`.
    case double(Double)
    /// A `Decimal`.
    case decimal(Decimal)
    /// A `String`, an enum's raw value or case name, or a `Codable` attribute's JSON text.
    case string(String)
    /// A `Date`.
    case date(Date)
    /// A `Data`.
    case data(Data)
    /// A `UUID`.
    case uuid(UUID)
    /// A `URL`.
    case url(URL)
    /// The destination of a to-one relationship: a row written before.
    case to(FixtureRow)
    /// The destinations of a to-many relationship, in order for an ordered one.
    case toMany([FixtureRow])

    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer.
    public init(integerLiteral value: Int64) { self = .integer(value) }
    /// A double.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// A Boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// No value.
    public init(nilLiteral: ()) { self = .null }

    /// What the value is, for errors.
    var kind: String {
        switch self {
        case .null: "nil"
        case .bool: "a Bool"
        case .integer(let value): "the integer \(value)"
        case .double(let value): "the number \(value)"
        case .decimal(let value): "the decimal \(value)"
        case .string(let value): "the string \"\(value)\""
        case .date: "a Date"
        case .data: "a Data"
        case .uuid: "a UUID"
        case .url: "a URL"
        case .to(let row): "a \(row.entity) row"
        case .toMany: "a list of rows"
        }
    }

    /// The value as a column of `type` stores it, or `nil` when it is not a value of that type.
    func stored(as type: AttributeType) -> SQLValue? {
        if case .null = self { return .null }
        if let scalar = type.scalar { return scalar.fixture(self) }
        switch (type, self) {
        case (.codable, .string(let value)):
            return (try? JSONSerialization.jsonObject(with: Data(value.utf8), options: .fragmentsAllowed)) == nil
                ? nil : .text(value)
        case (.enumeration(let description), .string(let value)):
            guard let match = description.cases.first(where: { $0.rawValue == value || $0.name == value }) else {
                return nil
            }
            return description.rawType == .int ? Int64(match.rawValue).map(SQLValue.integer) : .text(match.rawValue)
        case (.enumeration(let description), .integer(let value)):
            guard description.rawType == .int, description.cases.contains(where: { $0.rawValue == String(value) })
            else { return nil }
            return .integer(value)
        default: return nil
        }
    }
}

/// A row that ``MigrationTester`` wrote at its starting version: what a relationship of a later
/// row points at, and the ID to find the migrated record by.
public struct FixtureRow: Sendable, Hashable {
    /// The entity the row was written as.
    public let entity: String
    /// The row's ID.
    public let uuid: UUID

    /// The row's ID as the store keeps it, as ``MigrationTester/rows(of:)`` shows it.
    public var id: SQLValue { .blob(withUnsafeBytes(of: uuid.uuid) { Data($0) }) }

    /// The row's ID as the current version's records know it.
    ///
    /// ```swift
    /// let user = try await store.performQuery { try $0.existing(ada.recordID(User.self)) }
    /// ```
    public func recordID<Target>(_ type: Target.Type = Target.self) -> RecordID<Target> {
        RecordID(uuid)
    }
}
