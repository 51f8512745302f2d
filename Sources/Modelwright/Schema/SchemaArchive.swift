/// A complete, line-based text form of a ``SchemaDescription``: what generated code stores for
/// each historical version, so that a long history compiles as string literals instead of
/// thousands of typed expressions, and is decoded only when a migration needs it.
///
/// Unlike the checksum's canonical text, the archive keeps everything: declaration order, renaming
/// hints, default sorts, enum and composite names, enum cases and the Swift type of `Codable`
/// attributes. Decoding an archive gives back a schema equal to the one encoded.
///
/// ```swift
/// let text = schema.archive
/// let decoded = try SchemaDescription(archive: text)
/// assert(decoded == schema)
/// ```
///
/// ## Format, version 2
///
/// One record per line; a line is a keyword and tokens separated by single spaces:
///
/// ```text
/// modelwright-schema-archive 2
/// model Trips 3
/// entity User parent=Item abstract renamed=Person hash=v2
/// attribute rating int16 default=integer:0 renamed=score
/// attribute role enum:string:Role default=case:member
/// case member member
/// case admin administrator
/// end
/// attribute home composite:Address optional
/// attribute street string
/// end
/// attribute work composite:Address optional same
/// attribute settings codable:Settings optional
/// relationship trips Trip toMany inverse=owner ordered required delete=cascade
/// unique givenName familyName
/// index rating
/// sort familyName descending
/// ```
///
/// - The first line names the format and its version; a reader refuses a version it does not know.
/// - `entity` starts an entity; the `attribute`, `relationship`, `unique`, `index` and `sort`
///   lines after it belong to it, each kind in declaration order.
/// - An attribute's type is `bool`, `int16`, `int32`, `int64`, `int`, `double`, `float`, `decimal`,
///   `string`, `date`, `data`, `uuid`, `url`, `codable:<type name>`, `enum:<string|int>:<name>`
///   (followed by its `case <name> <raw value>` lines and `end`) or `composite:<name>` (followed
///   by its fields' `attribute` lines and `end`). An enum or composite is described once, at its
///   first use: a later attribute of the same type carries the flag `same` and no lines of its
///   own, so an archive stays linear in the schema however many attributes share a large type.
///   (Version 1, which described the type again at every use, is still read.)
/// - Options follow the fixed tokens, only where they differ from the initialisers' defaults.
///   Defaults are `bool:`, `integer:`, `double:`, `decimal:`, `string:`, `date:` (seconds since
///   1970), `case:` or `now`; numbers are written as Swift prints them, which reads back exactly.
/// - Every name and text is one token: bytes other than printable ASCII, and `%`, `"`, `\` and
///   `~`, are written `%XX`, and the empty string is `~`. An archive therefore holds no space
///   inside a token, no quote and no backslash, so it sits in any Swift string literal verbatim.
public enum SchemaArchive {
    /// The first line of every archive of this format version.
    static let header = "modelwright-schema-archive 2"

    /// The headers of every format version this runtime reads, and the version each names.
    static let readableHeaders: [Substring: Int] = ["modelwright-schema-archive 1": 1, header[...]: 2]

    /// The archive of `schema`, one record per line.
    public static func lines(of schema: SchemaDescription) -> [String] {
        var writer = Writer()
        writer.write(schema)
        return writer.lines
    }

    /// Decodes an archive; throws ``SchemaArchiveError`` when the text is not a well-formed
    /// archive of a format version this runtime reads. Never traps, whatever the text.
    public static func schema(from text: String) throws -> SchemaDescription {
        var reader = SchemaArchiveReader(text)
        return try reader.read()
    }

    /// `text` as one token: see the format's rules above.
    static func token(_ text: String) -> String {
        if text.isEmpty { return "~" }
        if text.utf8.allSatisfy(isPlain) { return text }
        var token = ""
        for byte in text.utf8 {
            if isPlain(byte) {
                token.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                token += "%" + hexDigit(byte >> 4) + hexDigit(byte & 0xF)
            }
        }
        return token
    }

    /// Whether a byte stands for itself in a token.
    static func isPlain(_ byte: UInt8) -> Bool {
        (0x21...0x7E).contains(byte) && byte != UInt8(ascii: "%") && byte != UInt8(ascii: "\"")
            && byte != UInt8(ascii: "\\") && byte != UInt8(ascii: "~")
    }

    private static func hexDigit(_ value: UInt8) -> String {
        String(Unicode.Scalar(value < 10 ? 0x30 + value : 0x41 + value - 10))
    }
}

// MARK: - Writing

extension SchemaArchive {
    /// Writes the lines of an archive.
    private struct Writer {
        private(set) var lines = [SchemaArchive.header]
        /// The enum and composite types described so far, by their type token.
        private var described: [String: AttributeType] = [:]

        mutating func write(_ schema: SchemaDescription) {
            lines.append("model \(token(schema.modelName)) \(schema.version)")
            for entity in schema.entities {
                write(entity)
            }
        }

        private mutating func write(_ entity: EntityDescription) {
            var line = ["entity", token(entity.name)]
            if let parent = entity.parent { line.append("parent=" + token(parent)) }
            if entity.isAbstract { line.append("abstract") }
            line += renameAndModifier(entity.renamedFrom, entity.versionHashModifier)
            lines.append(line.joined(separator: " "))
            for attribute in entity.attributes {
                write(attribute)
            }
            for relationship in entity.relationships {
                write(relationship)
            }
            for names in entity.uniquenessConstraints {
                lines.append((["unique"] + names.map(token)).joined(separator: " "))
            }
            for names in entity.indexes {
                lines.append((["index"] + names.map(token)).joined(separator: " "))
            }
            if !entity.searchableAttributes.isEmpty {
                lines.append((["search"] + entity.searchableAttributes.map(token)).joined(separator: " "))
            }
            for key in entity.defaultSort {
                lines.append("sort \(token(key.attribute)) \(key.ascending ? "ascending" : "descending")")
            }
        }

        private mutating func write(_ attribute: AttributeDescription) {
            let type = typeToken(attribute.type)
            var line = ["attribute", token(attribute.name), type]
            if attribute.isOptional { line.append("optional") }
            if let value = attribute.defaultValue { line.append("default=" + defaultToken(value)) }
            line += renameAndModifier(attribute.renamedFrom, attribute.versionHashModifier)
            // Compared whole, so a hand-built schema with two different types of one name still
            // decodes to itself; uses of one type share its storage, which compares at once.
            let isSame = described[type].map { $0 == attribute.type } ?? false
            if isSame { line.append("same") }
            lines.append(line.joined(separator: " "))
            if isSame { return }
            switch attribute.type {
            case .enumeration(let description):
                described[type] = attribute.type
                for enumCase in description.cases {
                    lines.append("case \(token(enumCase.name)) \(token(enumCase.rawValue))")
                }
                lines.append("end")
            case .composite(let description):
                for field in description.fields {
                    write(field)
                }
                described[type] = attribute.type
                lines.append("end")
            default:
                break
            }
        }

        private mutating func write(_ relationship: RelationshipDescription) {
            var line = [
                "relationship", token(relationship.name), token(relationship.destination),
                relationship.cardinality.rawValue,
            ]
            if let inverse = relationship.inverse { line.append("inverse=" + token(inverse)) }
            if relationship.isOrdered { line.append("ordered") }
            if !relationship.isOptional { line.append("required") }
            if relationship.deleteRule != .nullify { line.append("delete=" + relationship.deleteRule.rawValue) }
            line += renameAndModifier(relationship.renamedFrom, relationship.versionHashModifier)
            lines.append(line.joined(separator: " "))
        }

        private func renameAndModifier(_ renamedFrom: String?, _ modifier: String?) -> [String] {
            (renamedFrom.map { ["renamed=" + token($0)] } ?? []) + (modifier.map { ["hash=" + token($0)] } ?? [])
        }

        private func typeToken(_ type: AttributeType) -> String {
            switch type.kind {
            case .scalar(let scalar): scalar.name
            case .codable(let typeName): "codable:" + token(typeName)
            case .enumeration(let description): "enum:\(description.rawType.rawValue):" + token(description.name)
            case .composite(let description): "composite:" + token(description.name)
            }
        }

        private func defaultToken(_ value: DefaultValue) -> String {
            switch value {
            case .bool(let value): "bool:\(value)"
            case .integer(let value): "integer:\(value)"
            case .floatingPoint(let value): "double:\(value)"
            case .decimal(let text): "decimal:" + token(text)
            case .string(let text): "string:" + token(text)
            case .date(let seconds): "date:\(seconds)"
            case .now: "now"
            case .enumCase(let name): "case:" + token(name)
            }
        }
    }
}

extension SchemaDescription {
    /// The schema's ``SchemaArchive`` text: complete, so ``init(archive:)`` gives back an equal schema.
    public var archive: String {
        SchemaArchive.lines(of: self).joined(separator: "\n")
    }

    /// Decodes a ``SchemaArchive`` text; throws ``SchemaArchiveError`` when it is not one.
    public init(archive: String) throws {
        self = try SchemaArchive.schema(from: archive)
    }
}
