import Foundation

// The two HTTP bodies that carry rows, a push's request and a pull's answer, written and read by
// hand (see SyncJSON.swift for why): byte for byte what `JSONEncoder` with `.sortedKeys` writes
// for the `Codable` message, and read as `JSONDecoder` reads it. The parts that carry no rows (a
// schema version, resolutions, a refusal) go through `Codable` once per message. The other bodies
// (a pull's request, a push's answer, a refusal) are small and stay with `Codable` whole.
extension SyncHTTPRequest {
    /// The request as JSON; a push written by hand.
    func json() throws -> Data {
        guard case .push(let request) = self else { return try SyncMessageJSON.sortedEncoder.encode(self) }
        var writer = SyncJSONWriter(reservingCapacity: 512 * request.changes.rows.count + 512)
        writer.ascii("{\"push\":")
        try request.write(to: &writer)
        writer.byte(UInt8(ascii: "}"))
        return Data(writer.bytes)
    }

    /// Reads a request's body: a push by hand, a pull with `Codable`.
    init(json body: Data) throws {
        let bytes = [UInt8](body)
        var reader = SyncJSONReader(bytes, field: "(the message)")
        let parts = try SyncMessageJSON.members(&reader)
        try reader.expectEnd()
        if let push = parts["push"] {
            self = .push(try PushRequest(json: push, field: "push"))
        } else if let pull = parts["pull"] {
            self = .pull(try SyncMessageJSON.decode(PullRequest.self, pull, field: "pull"))
        } else {
            throw SyncError.malformedMessage(
                field: "(the message)", reason: "a sync request is {\"push\": …} or {\"pull\": …}")
        }
    }
}

extension SyncHTTPResponse {
    /// The response as JSON; a pull's answer written by hand, with the rows in `stored` (their
    /// records' text, for rows sent exactly as the server keeps them) copied as they are.
    func json(stored: [RowKey: String] = [:]) throws -> Data {
        guard case .pull(let response) = self else { return try SyncMessageJSON.sortedEncoder.encode(self) }
        var writer = SyncJSONWriter(reservingCapacity: 512 * response.changes.rows.count + 512)
        writer.ascii("{\"pull\":")
        try response.write(to: &writer, stored: stored)
        writer.byte(UInt8(ascii: "}"))
        return Data(writer.bytes)
    }

    /// Reads a response's body: a pull's answer by hand, the rest with `Codable`.
    init(json body: Data) throws {
        let bytes = [UInt8](body)
        var reader = SyncJSONReader(bytes, field: "(the response)")
        let parts = try SyncMessageJSON.members(&reader)
        try reader.expectEnd()
        if let push = parts["push"] {
            self = .push(try SyncMessageJSON.decode(PushResponse.self, push, field: "push"))
        } else if let pull = parts["pull"] {
            self = .pull(try PullResponse(json: pull, field: "pull"))
        } else if let refusal = parts["refusal"] {
            self = .refusal(try SyncMessageJSON.decode(SyncError.self, refusal, field: "refusal"))
        } else {
            throw SyncError.malformedMessage(
                field: "(the response)", reason: "a sync response is {\"push\": …}, {\"pull\": …} or {\"refusal\": …}")
        }
    }
}

/// What the hand-written messages share.
enum SyncMessageJSON {
    /// The encoder of the parts written with `Codable`, as the server has always written its answers.
    static var sortedEncoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    /// The members of the object next, each value's bytes unread (the last of a repeated key wins).
    static func members(_ reader: inout SyncJSONReader) throws -> [String: ArraySlice<UInt8>] {
        var members: [String: ArraySlice<UInt8>] = [:]
        try reader.beginObject()
        var first = true
        while let key = try reader.nextKey(first: first) {
            first = false
            members[key] = try reader.rawValue()
        }
        return members
    }

    /// A part written with `Codable`, read with `JSONDecoder`; its errors name `field`.
    static func decode<Value: Decodable>(_ type: Value.Type, _ bytes: ArraySlice<UInt8>, field: String) throws -> Value
    {
        do {
            return try JSONDecoder().decode(Value.self, from: Data(bytes))
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError.malformedMessage(field: field, reason: "\(error)")
        }
    }

    /// A part written with `Codable`, appended as `JSONEncoder` with `.sortedKeys` writes it.
    static func encode(_ value: some Encodable, to writer: inout SyncJSONWriter) throws {
        writer.json(try sortedEncoder.encode(value))
    }

    /// Whether `bytes` are `null` (or absent): an optional member that is nil, as `Codable` reads it.
    static func isNull(_ bytes: ArraySlice<UInt8>?) -> Bool {
        guard let bytes else { return true }
        return bytes.elementsEqual("null".utf8)
    }

    /// Reads one member with a reader of its own, which must consume all of it.
    static func read<Value>(
        _ bytes: ArraySlice<UInt8>?, field: String, _ read: (inout SyncJSONReader) throws -> Value
    ) throws -> Value {
        guard let bytes, !isNull(bytes) else {
            throw SyncError.malformedMessage(field: field, reason: "the message has no \(field); send it")
        }
        var reader = SyncJSONReader(bytes, field: field)
        let value = try read(&reader)
        try reader.expectEnd()
        return value
    }

    /// Reads an optional member: `nil` when absent or `null`.
    static func readIfPresent<Value>(
        _ bytes: ArraySlice<UInt8>?, field: String, _ read: (inout SyncJSONReader) throws -> Value
    ) throws -> Value? {
        isNull(bytes) ? nil : try self.read(bytes, field: field, read)
    }

    /// The protocol version of a message read by hand, checked by ``SyncProtocol``'s rule.
    static func checkVersion(_ members: [String: ArraySlice<UInt8>], field: String) throws -> Int {
        try SyncProtocol.checkVersion(field: field + ".protocolVersion") {
            try readIfPresent(members["protocolVersion"], field: field + ".protocolVersion") { reader in
                guard let version = Int(exactly: try reader.integer()) else { throw reader.malformed("too large") }
                return version
            }
        }
    }

    /// Writes a list of changes in ``RowKey`` order, a row in `stored` as its stored text.
    static func write(_ changes: ChangeSet, stored: [RowKey: String], to writer: inout SyncJSONWriter) throws {
        writer.byte(UInt8(ascii: "["))
        for (index, change) in changes.sortedChanges.enumerated() {
            if index > 0 { writer.byte(UInt8(ascii: ",")) }
            if let text = stored[change.key] {
                writer.json(text)
            } else {
                try change.write(to: &writer)
            }
        }
        writer.byte(UInt8(ascii: "]"))
    }

    /// Reads a list of changes (two of one row merged), each error naming the change's index.
    static func readChanges(_ bytes: ArraySlice<UInt8>?, field: String) throws -> ChangeSet {
        try read(bytes, field: field) { reader in
            var changes = ChangeSet()
            try reader.beginArray()
            var index = 0
            while try reader.hasElement(first: index == 0) {
                reader.field = "\(field)[\(index)]"
                changes.merge(try RowChange(reading: &reader))
                index += 1
            }
            reader.field = field
            return changes
        }
    }
}

extension PushRequest {
    /// Writes the push's members in sorted order, nil ones left out, as `Codable` does.
    fileprivate func write(to writer: inout SyncJSONWriter) throws {
        writer.byte(UInt8(ascii: "{"))
        if let after {
            writer.ascii("\"after\":")
            writer.integer(after.value)
            writer.byte(UInt8(ascii: ","))
        }
        writer.ascii("\"changes\":")
        try SyncMessageJSON.write(changes, stored: [:], to: &writer)
        writer.ascii(",\"device\":")
        writer.uuid(device.uuid)
        if let epoch {
            writer.ascii(",\"epoch\":")
            writer.uuid(epoch.id)
        }
        if let horizon {
            writer.ascii(",\"horizon\":")
            writer.integer(horizon.position)
        }
        writer.ascii(",\"protocolVersion\":")
        writer.integer(Int64(protocolVersion))
        writer.ascii(",\"schema\":")
        try SyncMessageJSON.encode(schema, to: &writer)
        writer.ascii(",\"through\":")
        writer.integer(through.value)
        writer.byte(UInt8(ascii: "}"))
    }

    /// Reads a push, its protocol version first (see `init(from:)`).
    fileprivate init(json bytes: ArraySlice<UInt8>, field: String) throws {
        var reader = SyncJSONReader(bytes, field: field)
        let members = try SyncMessageJSON.members(&reader)
        try reader.expectEnd()
        _ = try SyncMessageJSON.checkVersion(members, field: field)
        let device = try SyncMessageJSON.read(members["device"], field: field + ".device") { try $0.uuid() }
        let schema = try SyncMessageJSON.read(members["schema"], field: field + ".schema") { reader in
            try SyncMessageJSON.decode(SyncSchemaVersion.self, try reader.rawValue(), field: field + ".schema")
        }
        let after = try SyncMessageJSON.readIfPresent(members["after"], field: field + ".after") { try $0.integer() }
        let through = try SyncMessageJSON.read(members["through"], field: field + ".through") { try $0.integer() }
        let changes = try SyncMessageJSON.readChanges(members["changes"], field: field + ".changes")
        let epoch = try SyncMessageJSON.readIfPresent(members["epoch"], field: field + ".epoch") { try $0.uuid() }
        let horizon = try SyncMessageJSON.readIfPresent(members["horizon"], field: field + ".horizon") {
            try $0.integer()
        }
        self.init(
            device: SyncNodeID(device), schema: schema, after: after.map(HistoryToken.init),
            through: HistoryToken(through), changes: changes, epoch: epoch.map(SyncEpoch.init),
            horizon: horizon.map(SyncCursor.init))
    }
}

extension PullResponse {
    /// Writes the answer's members in sorted order, nil ones left out, as `Codable` does.
    fileprivate func write(to writer: inout SyncJSONWriter, stored: [RowKey: String]) throws {
        writer.ascii("{\"changes\":")
        try SyncMessageJSON.write(changes, stored: stored, to: &writer)
        writer.ascii(",\"cursor\":")
        writer.integer(cursor.position)
        writer.ascii(",\"dropped\":")
        try SyncMessageJSON.encode(dropped, to: &writer)
        if let epoch {
            writer.ascii(",\"epoch\":")
            writer.uuid(epoch.id)
        }
        writer.ascii(",\"hasMore\":")
        writer.bool(hasMore)
        writer.ascii(",\"hiddenLinks\":")
        try SyncMessageJSON.encode(hiddenLinks, to: &writer)
        writer.ascii(",\"protocolVersion\":")
        writer.integer(Int64(protocolVersion))
        if let refusal {
            writer.ascii(",\"refusal\":")
            try SyncMessageJSON.encode(refusal, to: &writer)
        }
        writer.ascii(",\"resolutions\":")
        try SyncMessageJSON.encode(resolutions, to: &writer)
        writer.byte(UInt8(ascii: "}"))
    }

    /// Reads an answer, its protocol version first (see `init(from:)`).
    fileprivate init(json bytes: ArraySlice<UInt8>, field: String) throws {
        var reader = SyncJSONReader(bytes, field: field)
        let members = try SyncMessageJSON.members(&reader)
        try reader.expectEnd()
        _ = try SyncMessageJSON.checkVersion(members, field: field)
        let changes = try SyncMessageJSON.readChanges(members["changes"], field: field + ".changes")
        let cursor = try SyncMessageJSON.read(members["cursor"], field: field + ".cursor") { try $0.integer() }
        let hasMore = try SyncMessageJSON.read(members["hasMore"], field: field + ".hasMore") { try $0.bool() }
        let resolutions = try SyncMessageJSON.read(members["resolutions"], field: field + ".resolutions") { reader in
            try SyncMessageJSON.decode(
                [ConstraintResolution].self, try reader.rawValue(), field: field + ".resolutions")
        }
        let refusal = try SyncMessageJSON.readIfPresent(members["refusal"], field: field + ".refusal") { reader in
            try SyncMessageJSON.decode(SyncError.self, try reader.rawValue(), field: field + ".refusal")
        }
        let epoch = try SyncMessageJSON.readIfPresent(members["epoch"], field: field + ".epoch") { try $0.uuid() }
        let dropped = try SyncMessageJSON.readIfPresent(members["dropped"], field: field + ".dropped") { reader in
            try SyncMessageJSON.decode([RowKey].self, try reader.rawValue(), field: field + ".dropped")
        }
        let hiddenLinks = try SyncMessageJSON.readIfPresent(members["hiddenLinks"], field: field + ".hiddenLinks") {
            reader in
            try SyncMessageJSON.decode([HiddenLinks].self, try reader.rawValue(), field: field + ".hiddenLinks")
        }
        self.init(
            changes: changes, cursor: SyncCursor(cursor), hasMore: hasMore, resolutions: resolutions, refusal: refusal,
            epoch: epoch.map(SyncEpoch.init), dropped: dropped ?? [], hiddenLinks: hiddenLinks ?? [])
    }
}
