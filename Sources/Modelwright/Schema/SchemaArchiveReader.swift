/// Why an archive text could not be decoded: the line (counted from 1) and what is wrong there.
public struct SchemaArchiveError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The line of the archive, counted from 1.
    public let line: Int
    /// What is wrong, for people.
    public let reason: String

    /// Creates an archive error.
    public init(line: Int, reason: String) {
        self.line = line
        self.reason = reason
    }

    /// `schema archive, line <n>: <reason>`.
    public var description: String { "schema archive, line \(line): \(reason)" }
}

/// Decodes the text of a ``SchemaArchive`` line by line. Every malformed input throws; nesting is
/// bounded, so a hostile text cannot exhaust the stack.
struct SchemaArchiveReader {
    /// How deep composites may nest inside each other.
    static let maximumDepth = 32

    private let lines: [Substring]
    /// The index of the next line to read.
    private var position = 0
    /// The format version the header names.
    private var format = 0
    /// The enum and composite types described so far, by their type token: what `same` refers to.
    private var described: [Substring: AttributeType] = [:]

    init(_ text: String) {
        var lines = Self.split(text[...], at: UInt8(ascii: "\n"))
        // A text saved to a file usually ends with a newline; that is not an empty last record.
        if lines.count > 1, lines.last?.isEmpty == true { lines.removeLast() }
        self.lines = lines
    }

    mutating func read() throws -> SchemaDescription {
        guard let first = lines.first, let format = SchemaArchive.readableHeaders[first] else {
            let found = lines.first.map { String($0.prefix(60)) } ?? ""
            throw SchemaArchiveError(
                line: 1, reason: "expected '\(SchemaArchive.header)' (a format this runtime reads), found '\(found)'")
        }
        position = 1
        self.format = format
        let model = try next(Shapes.model)
        var schema = SchemaDescription(
            modelName: try model.text(0), version: try model.integer(1, as: Int.self), entities: [])
        while position < lines.count {
            schema.entities.append(try readEntity())
        }
        return schema
    }

    // MARK: - Records

    private mutating func readEntity() throws -> EntityDescription {
        let line = try next(Shapes.entity)
        var entity = EntityDescription(
            name: try line.text(0), parent: try line.option("parent"), isAbstract: line.has("abstract"),
            renamedFrom: try line.option("renamed"), versionHashModifier: try line.option("hash"))
        while let keyword = peekKeyword(), keyword != "entity" {
            switch keyword {
            case "attribute": entity.attributes.append(try readAttribute(depth: 0))
            case "relationship": entity.relationships.append(try readRelationship())
            case "unique": entity.uniquenessConstraints.append(try next(Shapes.unique).names())
            case "index": entity.indexes.append(try next(Shapes.index).names())
            case "search": entity.searchableAttributes += try next(Shapes.search).names()
            case "sort":
                let sort = try next(Shapes.sort)
                let order = try sort.choice(1, ["ascending": true, "descending": false])
                entity.defaultSort.append(SortDescription(attribute: try sort.text(0), ascending: order))
            default:
                throw error("'\(keyword)' cannot follow an entity's records")
            }
        }
        return entity
    }

    private mutating func readAttribute(depth: Int) throws -> AttributeDescription {
        guard depth < Self.maximumDepth else { throw error("composites nest deeper than \(Self.maximumDepth)") }
        let line = try next(Shapes.attribute)
        let type = try readType(line, depth: depth)
        return AttributeDescription(
            name: try line.text(0), type: type, isOptional: line.has("optional"),
            defaultValue: try line.rawOption("default").map { try defaultValue($0, line: line.number) },
            renamedFrom: try line.option("renamed"), versionHashModifier: try line.option("hash"))
    }

    /// The attribute type the line's second token names, with the lines an enum or composite
    /// type owns up to its `end`.
    private mutating func readType(_ line: Line, depth: Int) throws -> AttributeType {
        let token = line.fixed[1]
        if line.has("same") {
            guard format >= 2, let type = described[token] else {
                throw line.error("'same' names no enum or composite '\(token.prefix(60))' described before")
            }
            return type
        }
        if let typeName = Self.value(of: token, after: "codable:") {
            return .codable(typeName: try Line.text(typeName, line: line.number))
        }
        if let rest = Self.value(of: token, after: "enum:") {
            let type = AttributeType.enumeration(try readEnum(rest, line: line))
            described[token] = type
            return type
        }
        if let name = Self.value(of: token, after: "composite:") {
            var description = CompositeDescription(name: try Line.text(name, line: line.number), fields: [])
            while try !atEnd() {
                description.fields.append(try readAttribute(depth: depth + 1))
            }
            described[token] = .composite(description)
            return .composite(description)
        }
        guard let type = Self.simpleTypes[token] else {
            throw line.error("unknown attribute type '\(token.prefix(60))'")
        }
        return type
    }

    /// An enum type, `<raw type>:<name>` after `enum:`, and its cases up to their `end`.
    private mutating func readEnum(_ rawTypeAndName: Substring, line: Line) throws -> EnumDescription {
        let parts = rawTypeAndName.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let rawType = Self.rawTypes[parts[0]] else {
            throw line.error("malformed enum type 'enum:\(rawTypeAndName.prefix(60))'")
        }
        var description = EnumDescription(name: try Line.text(parts[1], line: line.number), rawType: rawType, cases: [])
        while try !atEnd() {
            let enumCase = try next(Shapes.enumCase)
            description.cases.append(.init(name: try enumCase.text(0), rawValue: try enumCase.text(1)))
        }
        return description
    }

    /// `text` cut at every `separator` byte, empty pieces kept. Archives are ASCII, and walking
    /// bytes rather than `Character`s (which `split(separator:)` does) made decoding 2–3× faster.
    static func split(_ text: Substring, at separator: UInt8) -> [Substring] {
        var pieces: [Substring] = []
        var start = text.startIndex
        var index = start
        while index < text.endIndex {
            let next = text.utf8.index(after: index)
            if text.utf8[index] == separator {
                pieces.append(text[start..<index])
                start = next
            }
            index = next
        }
        pieces.append(text[start...])
        return pieces
    }

    /// What follows `prefix` in `token`, if `token` starts with it.
    private static func value(of token: Substring, after prefix: String) -> Substring? {
        token.hasPrefix(prefix) ? token.dropFirst(prefix.count) : nil
    }

    private static let rawTypes: [Substring: EnumDescription.RawType] = ["string": .string, "int": .int]
    private static let cardinalities: [Substring: RelationshipDescription.Cardinality] = [
        "toOne": .toOne, "toMany": .toMany,
    ]
    private static let deleteRules: [Substring: RelationshipDescription.DeleteRule] = [
        "nullify": .nullify, "cascade": .cascade, "deny": .deny, "noAction": .noAction,
    ]

    /// What each kind of line holds; made once, since an archive has thousands of lines.
    private enum Shapes {
        static let model = Line.Shape("model", fixed: 2)
        static let entity = Line.Shape("entity", fixed: 1, flags: ["abstract"], options: ["parent", "renamed", "hash"])
        static let attribute = Line.Shape(
            "attribute", fixed: 2, flags: ["optional", "same"], options: ["default", "renamed", "hash"])
        static let relationship = Line.Shape(
            "relationship", fixed: 3, flags: ["ordered", "required"], options: ["inverse", "delete", "renamed", "hash"])
        static let enumCase = Line.Shape("case", fixed: 2)
        static let unique = Line.Shape("unique", names: true)
        static let index = Line.Shape("index", names: true)
        static let search = Line.Shape("search", names: true)
        static let sort = Line.Shape("sort", fixed: 2)
    }

    private static let simpleTypes: [Substring: AttributeType] = Dictionary(
        ScalarType.all.map { (Substring($0.name), AttributeType($0)) }, uniquingKeysWith: { first, _ in first })

    private mutating func readRelationship() throws -> RelationshipDescription {
        let line = try next(Shapes.relationship)
        var rule = RelationshipDescription.DeleteRule.nullify
        if let token = line.rawOption("delete") {
            guard let named = Self.deleteRules[token], named != .nullify else {
                throw line.error("unknown delete rule '\(token.prefix(60))'")
            }
            rule = named
        }
        return RelationshipDescription(
            name: try line.text(0), destination: try line.text(1), inverse: try line.option("inverse"),
            cardinality: try line.choice(2, Self.cardinalities), isOrdered: line.has("ordered"),
            isOptional: !line.has("required"), deleteRule: rule, renamedFrom: try line.option("renamed"),
            versionHashModifier: try line.option("hash"))
    }

    private func defaultValue(_ token: Substring, line: Int) throws -> DefaultValue {
        if token == "now" { return .now }
        let parts = token.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { throw SchemaArchiveError(line: line, reason: "malformed default '\(token)'") }
        let value = parts[1]
        switch parts[0] {
        case "bool": return .bool(try Line.choice(value, ["true": true, "false": false], line: line))
        case "integer": return .integer(try Line.integer(value, as: Int64.self, line: line))
        case "double": return .floatingPoint(try Line.double(value, line: line))
        case "decimal": return .decimal(try Line.text(value, line: line))
        case "string": return .string(try Line.text(value, line: line))
        case "date": return .date(secondsSince1970: try Line.double(value, line: line))
        case "case": return .enumCase(try Line.text(value, line: line))
        default: throw SchemaArchiveError(line: line, reason: "unknown kind of default '\(parts[0].prefix(60))'")
        }
    }

    // MARK: - Lines

    /// The keyword of the next line, without consuming it; `nil` at the end of the text.
    private func peekKeyword() -> Substring? {
        guard position < lines.count else { return nil }
        let line = lines[position]
        return line[..<(line.utf8.firstIndex(of: UInt8(ascii: " ")) ?? line.endIndex)]
    }

    /// Consumes an `end` line and returns true if the next line is one; throws at the end of the text.
    private mutating func atEnd() throws -> Bool {
        guard let keyword = peekKeyword() else { throw error("the text ends before an 'end'") }
        guard keyword == "end" else { return false }
        guard lines[position] == "end" else { throw error("'end' takes nothing after it") }
        position += 1
        return true
    }

    /// Consumes the next line, which must have `shape`.
    private mutating func next(_ shape: Line.Shape) throws -> Line {
        guard position < lines.count else { throw error("the text ends where a '\(shape.keyword)' line belongs") }
        let line = try Line(lines[position], number: position + 1, shape: shape)
        position += 1
        return line
    }

    /// An error at the next line to read (one past the last when the text ended too soon).
    private func error(_ reason: String) -> SchemaArchiveError {
        SchemaArchiveError(line: position + 1, reason: reason)
    }
}

// MARK: - Line

extension SchemaArchiveReader {
    /// One record of an archive, split into its fixed tokens, flags and `key=value` options.
    struct Line {
        /// What a kind of line holds.
        struct Shape {
            let keyword: Substring
            /// How many tokens follow the keyword before the options.
            let fixed: Int
            /// Whether any number of names follow the keyword, and nothing else.
            let names: Bool
            let flags: Set<Substring>
            let options: Set<Substring>

            init(
                _ keyword: Substring, fixed: Int = 0, names: Bool = false, flags: Set<Substring> = [],
                options: Set<Substring> = []
            ) {
                self.keyword = keyword
                self.fixed = fixed
                self.names = names
                self.flags = flags
                self.options = options
            }
        }

        /// The line's number, counted from 1.
        let number: Int
        let fixed: [Substring]
        private var flags: Set<Substring> = []
        private var options: [Substring: Substring] = [:]

        init(_ text: Substring, number: Int, shape: Shape) throws {
            self.number = number
            let tokens = SchemaArchiveReader.split(text, at: UInt8(ascii: " "))
            guard tokens[0] == shape.keyword else {
                throw SchemaArchiveError(
                    line: number, reason: "expected a '\(shape.keyword)' line, found '\(tokens[0].prefix(60))'")
            }
            let fixedCount = shape.names ? tokens.count - 1 : shape.fixed
            guard tokens.count > fixedCount else {
                throw SchemaArchiveError(line: number, reason: "'\(shape.keyword)' needs \(fixedCount) values")
            }
            fixed = Array(tokens[1..<(fixedCount + 1)])
            for token in tokens.dropFirst(fixedCount + 1) {
                try add(token, shape: shape)
            }
        }

        private mutating func add(_ token: Substring, shape: Shape) throws {
            if let equals = token.utf8.firstIndex(of: UInt8(ascii: "=")) {
                let key = token[..<equals]
                guard shape.options.contains(key), options[key] == nil else {
                    throw error("unknown or repeated option '\(key.prefix(60))'")
                }
                options[key] = token[token.index(after: equals)...]
            } else {
                guard shape.flags.contains(token), !flags.contains(token) else {
                    throw error("unknown or repeated flag '\(token.prefix(60))'")
                }
                flags.insert(token)
            }
        }

        func error(_ reason: String) -> SchemaArchiveError {
            SchemaArchiveError(line: number, reason: reason)
        }

        func has(_ flag: Substring) -> Bool { flags.contains(flag) }

        func rawOption(_ key: Substring) -> Substring? { options[key] }

        func option(_ key: Substring) throws -> String? {
            try options[key].map { try Self.text($0, line: number) }
        }

        func text(_ index: Int) throws -> String { try Self.text(fixed[index], line: number) }

        /// The names of a `unique` or `index` line.
        func names() throws -> [String] { try fixed.map { try Self.text($0, line: number) } }

        func integer<Value: FixedWidthInteger>(_ index: Int, as type: Value.Type) throws -> Value {
            try Self.integer(fixed[index], as: type, line: number)
        }

        func choice<Value>(_ index: Int, _ table: [Substring: Value]) throws -> Value {
            try Self.choice(fixed[index], table, line: number)
        }

        // MARK: Tokens

        /// The text a token stands for: `~` is empty, `%XX` one byte, any other plain byte itself.
        /// Only the form the writer produces is accepted, so each text has exactly one token.
        static func text(_ token: Substring, line: Int) throws -> String {
            if token == "~" { return "" }
            guard !token.isEmpty else { throw SchemaArchiveError(line: line, reason: "an empty value") }
            // Most tokens are plain names, which stand for themselves.
            if token.utf8.allSatisfy(SchemaArchive.isPlain) { return String(token) }
            var bytes: [UInt8] = []
            var utf8 = token.utf8.makeIterator()
            while let byte = utf8.next() {
                if byte == UInt8(ascii: "%") {
                    guard let high = utf8.next().flatMap(hexValue), let low = utf8.next().flatMap(hexValue),
                        !SchemaArchive.isPlain(high << 4 | low)
                    else { throw SchemaArchiveError(line: line, reason: "a malformed %-escape") }
                    bytes.append(high << 4 | low)
                } else {
                    guard SchemaArchive.isPlain(byte) else {
                        throw SchemaArchiveError(line: line, reason: "a character that must be %-escaped")
                    }
                    bytes.append(byte)
                }
            }
            let text = String(decoding: bytes, as: UTF8.self)
            // Decoding replaces invalid UTF-8; a text that changed was not UTF-8.
            guard text.utf8.elementsEqual(bytes) else {
                throw SchemaArchiveError(line: line, reason: "escaped bytes that are not UTF-8")
            }
            return text
        }

        /// The value of an uppercase hexadecimal digit.
        private static func hexValue(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }

        static func integer<Value: FixedWidthInteger>(_ token: Substring, as type: Value.Type, line: Int) throws
            -> Value
        {
            guard let value = Value(token), String(value) == token else {
                throw SchemaArchiveError(line: line, reason: "'\(token.prefix(60))' is not an integer")
            }
            return value
        }

        /// A number as Swift prints a `Double` (the shortest text that reads back exactly).
        static func double(_ token: Substring, line: Int) throws -> Double {
            guard let value = Double(token), "\(value)" == token else {
                throw SchemaArchiveError(line: line, reason: "'\(token.prefix(60))' is not a number")
            }
            return value
        }

        static func choice<Value>(_ token: Substring, _ table: [Substring: Value], line: Int) throws -> Value {
            guard let value = table[token] else {
                let expected = table.keys.sorted().joined(separator: " or ")
                throw SchemaArchiveError(line: line, reason: "expected \(expected), found '\(token.prefix(60))'")
            }
            return value
        }
    }
}
