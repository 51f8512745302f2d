import Modelwright
import ModelwrightTestSupport

/// Seeded random schema descriptions that use every field a `SchemaDescription` has, with names
/// and texts drawn from pieces chosen to break a text format: separators, escapes, quotes, Swift
/// string delimiters, non-ASCII and control characters, the empty string.
struct RandomSchemas {
    private var random: SplitMix64

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    private static let pieces = [
        "", "a", "User", "end", "entity", "attribute", " ", "  ", "\n", "\r\n", "\t", "%", "%41", "~", "=", ":",
        "\"", "\"\"\"", "\"\"\"#", "\\", "\\#(x)", "#", "é", "e\u{301}", "日本", "🙂", "\u{0}", "\u{7F}", "\u{2028}",
        "a b=c", "default=now",
    ]

    private static let simpleTypes: [AttributeType] = [
        .bool, .int16, .int32, .int64, .int, .double, .float, .decimal, .string, .date, .data, .uuid, .url,
    ]

    private mutating func roll(_ bound: Int) -> Int { random.next(below: bound) }

    private mutating func chance(_ percent: Int) -> Bool { roll(100) < percent }

    mutating func text() -> String {
        (0..<roll(4)).map { _ in Self.pieces[roll(Self.pieces.count)] }.joined()
    }

    private mutating func optionalText() -> String? { chance(30) ? text() : nil }

    private mutating func texts() -> [String] { (0..<roll(4)).map { _ in text() } }

    /// A double from anywhere in its range (any bit pattern but NaN, which equals nothing), or one
    /// of the values text formats get wrong.
    mutating func double() -> Double {
        let special: [Double] = [
            0, -0.0, 0.1, 1.5, -2.25, 1e-300, 1e300, .infinity, -.infinity, .leastNonzeroMagnitude,
            .leastNormalMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 1_710_000_000,
        ]
        if chance(50) { return special[roll(special.count)] }
        let value = Double(bitPattern: random.next())
        return value.isNaN ? 1 : value
    }

    private mutating func integer() -> Int64 {
        [Int64.min, .max, 0, -1, Int64(truncatingIfNeeded: random.next())][roll(5)]
    }

    mutating func schema() -> SchemaDescription {
        let version = [1, 2, 117, -3, Int.max, Int.min][roll(6)]
        return SchemaDescription(
            modelName: text(), version: version, entities: (0..<roll(5)).map { _ in entity() })
    }

    private mutating func entity() -> EntityDescription {
        EntityDescription(
            name: text(), parent: optionalText(), isAbstract: chance(30),
            attributes: (0..<roll(5)).map { _ in attribute(depth: 0) },
            relationships: (0..<roll(4)).map { _ in relationship() },
            uniquenessConstraints: (0..<roll(3)).map { _ in texts() },
            indexes: (0..<roll(3)).map { _ in texts() },
            defaultSort: (0..<roll(3)).map { _ in SortDescription(attribute: text(), ascending: chance(50)) },
            renamedFrom: optionalText(), versionHashModifier: optionalText())
    }

    private mutating func attribute(depth: Int) -> AttributeDescription {
        AttributeDescription(
            name: text(), type: type(depth: depth), isOptional: chance(50), defaultValue: defaultValue(),
            renamedFrom: optionalText(), versionHashModifier: optionalText())
    }

    private mutating func type(depth: Int) -> AttributeType {
        switch roll(10) {
        case 0:
            let cases = (0..<roll(4)).map { _ in EnumDescription.Case(name: text(), rawValue: text()) }
            return .enumeration(EnumDescription(name: text(), rawType: chance(50) ? .string : .int, cases: cases))
        case 1 where depth < 3:
            return .composite(
                CompositeDescription(name: text(), fields: (0..<roll(4)).map { _ in attribute(depth: depth + 1) }))
        case 2:
            return .codable(typeName: text())
        default:
            return Self.simpleTypes[roll(Self.simpleTypes.count)]
        }
    }

    private mutating func defaultValue() -> DefaultValue? {
        switch roll(10) {
        case 0: .bool(chance(50))
        case 1: .integer(integer())
        case 2: .floatingPoint(double())
        case 3: .decimal(text())
        case 4: .string(text())
        case 5: .date(secondsSince1970: double())
        case 6: .now
        case 7: .enumCase(text())
        default: nil
        }
    }

    private mutating func relationship() -> RelationshipDescription {
        let rules: [RelationshipDescription.DeleteRule] = [.nullify, .cascade, .deny, .noAction]
        return RelationshipDescription(
            name: text(), destination: text(), inverse: optionalText(), cardinality: chance(50) ? .toOne : .toMany,
            isOrdered: chance(30), isOptional: chance(70), deleteRule: rules[roll(rules.count)],
            renamedFrom: optionalText(), versionHashModifier: optionalText())
    }

    /// `text` with one random damage: a line removed, repeated or swapped, a cut, a byte replaced
    /// or inserted. The result may still be a valid archive.
    mutating func damage(_ text: String) -> String {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var bytes = Array(text.utf8)
        let position = roll(bytes.count + 1)
        let line = roll(lines.count)
        switch roll(6) {
        case 0: lines.remove(at: line)
        case 1: lines.insert(lines[line], at: roll(lines.count + 1))
        case 2: lines.swapAt(line, roll(lines.count))
        case 3: return String(decoding: bytes.prefix(position), as: UTF8.self)
        case 4 where !bytes.isEmpty:
            bytes[min(position, bytes.count - 1)] = UInt8(truncatingIfNeeded: random.next())
            return String(decoding: bytes, as: UTF8.self)
        default:
            let insertions: [[UInt8]] = [[0x25], [0x20], [0x7E], [0x3D], [0x3A], [0x0A], [0xFF], Array("end\n".utf8)]
            bytes.insert(contentsOf: insertions[roll(insertions.count)], at: position)
            return String(decoding: bytes, as: UTF8.self)
        }
        return lines.joined(separator: "\n")
    }
}
