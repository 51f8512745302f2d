import Foundation

// The hand-written coding of a row's change (see SyncJSON.swift for why): the same bytes as the
// `Codable` conformance in RowChange.swift writes, read with the same rules, without `Codable`.

extension RowChange {
    /// The change as JSON, byte for byte what `JSONEncoder().encode(self)` writes.
    /// - Throws: `EncodingError` for a name that is not a schema name or a NaN, as `Codable` does.
    func json() throws -> [UInt8] {
        var writer = SyncJSONWriter(reservingCapacity: 256)
        try write(to: &writer)
        return writer.bytes
    }

    /// Writes the change as `[entity, id, inserted, deleted, attributes, links]` (see `encode(to:)`).
    func write(to writer: inout SyncJSONWriter) throws {
        try checkNames()
        writer.byte(UInt8(ascii: "["))
        writer.string(key.entity)
        writer.byte(UInt8(ascii: ","))
        writer.uuid(key.id)
        writer.byte(UInt8(ascii: ","))
        Self.write(inserted, to: &writer)
        writer.byte(UInt8(ascii: ","))
        Self.write(deleted, to: &writer)
        writer.ascii(",[")
        var first = true
        for name in attributes.keys.sorted(by: SyncProtocol.namePrecedes) {
            guard let written = attributes[name] else { continue }
            if !first { writer.byte(UInt8(ascii: ",")) }
            first = false
            writer.byte(UInt8(ascii: "["))
            writer.string(name)
            writer.byte(UInt8(ascii: ","))
            try written.value.write(to: &writer)
            writer.byte(UInt8(ascii: ","))
            written.stamp.write(to: &writer)
            writer.byte(UInt8(ascii: "]"))
        }
        writer.ascii("],[")
        first = true
        for (link, stamps) in links.sorted(by: { $0.key < $1.key }) {
            if !first { writer.byte(UInt8(ascii: ",")) }
            first = false
            writer.byte(UInt8(ascii: "["))
            writer.string(link.relationship)
            writer.byte(UInt8(ascii: ","))
            writer.uuid(link.target)
            writer.byte(UInt8(ascii: ","))
            Self.write(stamps.added, to: &writer)
            writer.byte(UInt8(ascii: ","))
            Self.write(stamps.removed, to: &writer)
            writer.byte(UInt8(ascii: "]"))
        }
        writer.ascii("]]")
    }

    private static func write(_ stamp: HybridTimestamp?, to writer: inout SyncJSONWriter) {
        if let stamp { stamp.write(to: &writer) } else { writer.null() }
    }

    /// Throws the `EncodingError` `encode(to:)` throws for a name that is not a schema name.
    private func checkNames() throws {
        func check(_ name: String) throws {
            guard !SyncProtocol.isValidName(name) else { return }
            throw EncodingError.invalidValue(
                name,
                EncodingError.Context(
                    codingPath: [],
                    debugDescription:
                        "\(name.debugDescription) is not a schema name (printable ASCII, not empty): name entities, attributes and relationships as the schema does"
                ))
        }
        try check(key.entity)
        for name in attributes.keys { try check(name) }
        for link in links.keys { try check(link.relationship) }
    }

    /// The change in `json`, as `JSONDecoder().decode(RowChange.self, from:)` reads it; a stored
    /// record is read with it.
    init(json: String, field: String) throws {
        var reader = SyncJSONReader(json, field: field)
        try self.init(reading: &reader)
        try reader.expectEnd()
    }

    /// Reads one change (see `init(from:)` for the shape and the rules: repeated attributes and
    /// links merged by stamp, names checked).
    init(reading reader: inout SyncJSONReader) throws {
        try reader.beginArray()
        let entity = try SyncProtocol.checkedName(try reader.string(), field: reader.field, "entity")
        try reader.expect(UInt8(ascii: ","), "a comma")
        let id = try reader.uuid()
        try reader.expect(UInt8(ascii: ","), "a comma")
        let inserted = try HybridTimestamp.readOptional(&reader)
        try reader.expect(UInt8(ascii: ","), "a comma")
        let deleted = try HybridTimestamp.readOptional(&reader)
        try reader.expect(UInt8(ascii: ","), "a comma")
        var attributes: [String: StampedValue] = [:]
        try reader.beginArray()
        var first = true
        while try reader.hasElement(first: first) {
            first = false
            try reader.beginArray()
            let name = try SyncProtocol.checkedName(try reader.string(), field: reader.field, "attribute")
            try reader.expect(UInt8(ascii: ","), "a comma")
            let value = try SyncValue(reading: &reader)
            try reader.expect(UInt8(ascii: ","), "a comma")
            let written = StampedValue(value, at: try HybridTimestamp(reading: &reader))
            try reader.endArray("an attribute is [name, value, stamp]")
            attributes[name] = attributes[name]?.latest(written) ?? written
        }
        try reader.expect(UInt8(ascii: ","), "a comma")
        var links: [LinkKey: LinkStamps] = [:]
        try reader.beginArray()
        first = true
        while try reader.hasElement(first: first) {
            first = false
            try reader.beginArray()
            let relationship = try SyncProtocol.checkedName(try reader.string(), field: reader.field, "relationship")
            try reader.expect(UInt8(ascii: ","), "a comma")
            let target = try reader.uuid()
            try reader.expect(UInt8(ascii: ","), "a comma")
            let added = try HybridTimestamp.readOptional(&reader)
            try reader.expect(UInt8(ascii: ","), "a comma")
            let removed = try HybridTimestamp.readOptional(&reader)
            try reader.endArray("a link is [relationship, target, added, removed]")
            let stamps = LinkStamps(added: added, removed: removed)
            let linkKey = LinkKey(relationship: relationship, target: target)
            links[linkKey] = links[linkKey]?.merged(with: stamps) ?? stamps
        }
        try reader.endArray("a change is [entity, id, inserted, deleted, attributes, links]")
        self.init(
            key: RowKey(entity: entity, id: id), inserted: inserted, deleted: deleted, attributes: attributes,
            links: links)
    }
}

extension HybridTimestamp {
    /// Writes `[milliseconds, counter, node]` (see `encode(to:)`).
    func write(to writer: inout SyncJSONWriter) {
        writer.byte(UInt8(ascii: "["))
        writer.unsigned(milliseconds)
        writer.byte(UInt8(ascii: ","))
        writer.unsigned(UInt64(counter))
        writer.byte(UInt8(ascii: ","))
        writer.uuid(node.uuid)
        writer.byte(UInt8(ascii: "]"))
    }

    /// Reads `[milliseconds, counter, node]`.
    init(reading reader: inout SyncJSONReader) throws {
        try reader.beginArray()
        let milliseconds = try reader.unsigned()
        try reader.expect(UInt8(ascii: ","), "a comma")
        let counter = try reader.unsigned()
        guard let counter = UInt32(exactly: counter) else {
            throw reader.malformed("a timestamp's counter \(counter) does not fit 32 bits")
        }
        try reader.expect(UInt8(ascii: ","), "a comma")
        let node = SyncNodeID(try reader.uuid())
        try reader.endArray("a timestamp is [milliseconds, counter, node]: three values")
        self.init(milliseconds: milliseconds, counter: counter, node: node)
    }

    /// `null`, or a timestamp.
    static func readOptional(_ reader: inout SyncJSONReader) throws -> HybridTimestamp? {
        try reader.null() ? nil : try HybridTimestamp(reading: &reader)
    }
}

extension SyncValue {
    /// Writes the one-key object `encode(to:)` writes.
    func write(to writer: inout SyncJSONWriter) throws {
        switch self {
        case .null: writer.ascii("{\"null\":null")
        case .bool(let value):
            writer.ascii("{\"bool\":")
            writer.bool(value)
        case .integer(let value):
            writer.ascii("{\"integer\":")
            writer.integer(value)
        case .real(let value):
            guard !value.isNaN else {
                throw EncodingError.invalidValue(
                    value, EncodingError.Context(codingPath: [], debugDescription: "a real is never NaN"))
            }
            writer.ascii("{\"real\":")
            if value.isFinite {
                writer.real(value)
            } else {
                writer.ascii(value < 0 ? "\"-inf\"" : "\"inf\"")
            }
        case .decimal(let value):
            writer.ascii("{\"decimal\":")
            writer.string(value)
        case .text(let value):
            writer.ascii("{\"text\":")
            writer.string(value)
        case .bytes(let value):
            writer.ascii("{\"bytes\":")
            writer.string(value.base64EncodedString())
        case .date(let value):
            writer.ascii("{\"date\":")
            writer.real(value.timeIntervalSinceReferenceDate)
        case .uuid(let value):
            writer.ascii("{\"uuid\":")
            writer.uuid(value)
        }
        writer.byte(UInt8(ascii: "}"))
    }

    /// Reads the one-key object (see `init(from:)`): exactly one key, one of the kinds.
    init(reading reader: inout SyncJSONReader) throws {
        try reader.beginObject()
        guard let kind = try reader.nextKey(first: true) else {
            throw reader.malformed("a value is an object with exactly one key")
        }
        switch kind {
        case "null":
            guard try reader.null() else { throw reader.malformed("a null value is written {\"null\": null}") }
            self = .null
        case "bool": self = .bool(try reader.bool())
        case "integer": self = .integer(try reader.integer())
        case "real":
            if reader.peek() == UInt8(ascii: "\"") {
                switch try reader.string() {
                case "inf": self = .real(.infinity)
                case "-inf": self = .real(-.infinity)
                default: throw reader.malformed("a real is a number, \"inf\" or \"-inf\"")
                }
            } else {
                self = .real(try reader.real())
            }
        case "decimal": self = .decimal(try reader.string())
        case "text": self = .text(try reader.string())
        case "bytes":
            guard let data = Data(base64Encoded: try reader.string()) else {
                throw reader.malformed("bytes are written in base64")
            }
            self = .bytes(data)
        case "date":
            let seconds = try reader.real()
            guard seconds.isFinite else { throw reader.malformed("a date is a finite number of seconds since 2001") }
            self = .date(Date(timeIntervalSinceReferenceDate: seconds))
        case "uuid": self = .uuid(try reader.uuid())
        default: throw reader.malformed("\(kind.debugDescription) is no kind of value")
        }
        guard try reader.nextKey(first: false) == nil else {
            throw reader.malformed("a value is an object with exactly one key")
        }
    }
}
