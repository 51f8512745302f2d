import Foundation
import ModelwrightTestSupport

@testable import Modelwright

/// Writes a Core Data SQLite store of a ``CoreDataStoreFixture`` with random objects, following
/// `coredata-store-format.md` rule by rule (the unconfirmed ones too), and records what a
/// Modelwright store imported from it must hold.
struct CoreDataStoreWriter {
    /// One object: its entity, `Z_PK`, the values Core Data stores and the ones the import must give.
    struct Object {
        var entity: String
        var root: String
        var primaryKey: Int64
        var stored: [String: SQLValue] = [:]
        var expected: [String: SQLValue] = [:]
    }

    let fixture: CoreDataStoreFixture
    /// Entity ids (`Z_ENT`), worked out from the rules of §3.
    private(set) var ids: [String: Int] = [:]
    private(set) var roots: [String: String] = [:]
    private(set) var objects: [Object] = []
    /// To-one links: (source entity, relationship, source key) → destination key.
    private(set) var toOne: [String: [Int64: Int64]] = [:]
    /// To-many links, in order for ordered relationships: relationship key → source key → destinations.
    private(set) var toMany: [String: [Int64: [Int64]]] = [:]
    let storeUUID = UUID().uuidString
    /// Files of external binary data, by name.
    private(set) var externalFiles: [String: Data] = [:]
    /// The join table name chosen for each pair.
    private(set) var joinTables: [String] = []

    init(fixture: CoreDataStoreFixture, random: inout SplitMix64, objectsPerEntity: ClosedRange<Int> = 0...6) {
        self.fixture = fixture
        numberEntities()
        makeObjects(&random, objectsPerEntity)
        makeLinks(&random)
    }

    // MARK: - Entity ids

    private static func caseInsensitive(_ lhs: String, _ rhs: String) -> Bool {
        lhs.lowercased() == rhs.lowercased() ? lhs < rhs : lhs.lowercased() < rhs.lowercased()
    }

    private mutating func numberEntities() {
        var next = 1
        func visit(_ name: String, root: String) {
            ids[name] = next
            roots[name] = root
            next += 1
            for child in fixture.entities.filter({ $0.parent == name }).map(\.name).sorted(by: Self.caseInsensitive) {
                visit(child, root: root)
            }
        }
        for root in fixture.entities.filter({ $0.parent == nil }).map(\.name).sorted(by: Self.caseInsensitive) {
            visit(root, root: root)
        }
    }

    /// The entity and its ancestors, root first.
    func lineage(_ name: String) -> [CoreDataStoreFixture.Entity] {
        var chain: [CoreDataStoreFixture.Entity] = []
        var current = fixture.entity(name)
        while let entity = current {
            chain.insert(entity, at: 0)
            current = entity.parent.flatMap(fixture.entity)
        }
        return chain
    }

    func descendants(of name: String) -> [String] {
        fixture.entities.filter { entity in lineage(entity.name).contains { $0.name == name } }.map(\.name)
    }

    func hasSubentities(_ name: String) -> Bool { fixture.entities.contains { $0.parent == name } }

    /// Every relationship of `entity` with the entity that declares it.
    func relationships(of entity: String) -> [(CoreDataStoreFixture.Relationship, String)] {
        lineage(entity).flatMap { owner in owner.relationships.map { ($0, owner.name) } }
    }

    // MARK: - Objects and values

    private mutating func makeObjects(_ random: inout SplitMix64, _ objectsPerEntity: ClosedRange<Int>) {
        var nextKey: [String: Int64] = [:]
        for entity in fixture.entities.shuffled(using: &random) where !entity.isAbstract {
            let root = roots[entity.name] ?? entity.name
            for _ in 0..<random.size(in: objectsPerEntity) {
                // Keys per root table, with gaps where objects were deleted.
                let key = (nextKey[root] ?? 0) + Int64(random.size(in: 1...3))
                nextKey[root] = key
                var object = Object(entity: entity.name, root: root, primaryKey: key)
                for owner in lineage(entity.name) {
                    for attribute in owner.attributes {
                        guard !attribute.isOptional || random.chance(0.75) else {
                            object.stored[attribute.name] = .null
                            object.expected[attribute.name] = .null
                            continue
                        }
                        let (stored, expected) = value(of: attribute, &random)
                        object.stored[attribute.name] = stored
                        object.expected[attribute.name] = expected
                    }
                }
                objects.append(object)
            }
        }
    }

    private mutating func value(
        of attribute: CoreDataStoreFixture.Attribute, _ random: inout SplitMix64
    ) -> (stored: SQLValue, expected: SQLValue) {
        switch attribute.type {
        case "Integer 16":
            let value = Int64(Int16.random(in: .min ... .max, using: &random))
            return (.integer(value), .integer(value))
        case "Integer 32":
            let value = Int64(Int32.random(in: .min ... .max, using: &random))
            return (.integer(value), .integer(value))
        case "Integer 64":
            let value = Int64.random(in: .min ... .max, using: &random)
            return (.integer(value), .integer(value))
        case "Boolean":
            let value: Int64 = random.chance(0.5) ? 1 : 0
            return (.integer(value), .integer(value))
        case "Decimal":
            // Stored as SQLite's NUMERIC affinity would: INTEGER when whole, REAL when 15 digits
            // hold it, TEXT when they cannot.
            switch random.next(below: 3) {
            case 0:
                let whole = Int64.random(in: -1_000_000...1_000_000, using: &random)
                return (.integer(whole), .text(String(whole)))
            case 1:
                let cents = Int64.random(in: -10_000_000...10_000_000, using: &random)
                let text = Decimal(cents) / 100
                let real = Double("\(text)") ?? 0
                return (.real(real), .text(Decimal(string: String(format: "%.15g", real))!.description))
            default:
                // Bound as text, as Core Data binds a decimal: the column's NUMERIC affinity keeps it
                // as a number when 15 significant digits hold it, which is what Core Data then reads.
                let text = "\(random.size(in: 1...99_999)).\(random.size(in: 1...9_999))"
                return (.text(text), .text(Decimal(string: text)!.description))
            }
        case "Double":
            let value = Double(Int64.random(in: -1_000_000...1_000_000, using: &random)) / 7
            return (.real(value), .real(value))
        case "Float":
            let value = Double(Float(Int32.random(in: -100_000...100_000, using: &random)) / 8)
            return (.real(value), .real(value))
        case "String":
            let text =
                random.pick(["", "plain", "ünïcødé ✓", "line\nbreak", "quote ' \" ;"]) + String(random.next(below: 100))
            return (.text(text), .text(text))
        case "Date":
            // Seconds since 2001, as INTEGER when whole (Core Data's TIMESTAMP has NUMERIC affinity).
            if random.chance(0.5) {
                let seconds = Int64.random(in: -100_000_000...900_000_000, using: &random)
                return (.integer(seconds), .real(Double(seconds)))
            }
            let seconds = Double(Int64.random(in: -100_000_000_000...900_000_000_000, using: &random)) / 1000
            return (.real(seconds), .real(seconds))
        case "Transformable" where attribute.className != nil:
            return archived(attribute.className ?? "", &random)
        case "Binary", "Transformable":
            let bytes = Data((0..<random.size(in: 1...40)).map { _ in UInt8.random(in: 0...255, using: &random) })
            guard attribute.external else { return (.blob(bytes), .blob(bytes)) }
            if random.chance(0.5) { return (.blob(Data([1]) + bytes), .blob(bytes)) }
            let name = UUID().uuidString
            externalFiles[name] = bytes
            return (.blob(Data([2]) + Data(name.utf8) + Data([0])), .blob(bytes))
        case "UUID":
            var uuid = UUID().uuid
            let bytes = withUnsafeBytes(of: &uuid) { Data($0) }
            // Core Data reads anything but 16 bytes as nil.
            if attribute.isOptional, random.chance(0.2) { return (.blob(bytes.prefix(8)), .null) }
            return (.blob(bytes), .blob(bytes))
        case "URI":
            let text = "https://example.com/\(random.next(below: 1000))?q=1"
            return (.text(text), .text(text))
        default:
            return (.null, .null)
        }
    }

    /// A keyed archive of a random value of a standard class, and the JSON `JSONEncoder` writes
    /// for the same Swift value.
    private func archived(_ className: String, _ random: inout SplitMix64) -> (stored: SQLValue, expected: SQLValue) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        func pair(_ object: Any, _ value: some Encodable) -> (SQLValue, SQLValue) {
            let archive =
                (try? NSKeyedArchiver.archivedData(withRootObject: object, requiringSecureCoding: true)) ?? Data()
            let json = (try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? ""
            return (.blob(archive), .text(json))
        }
        switch className {
        case "[String]":
            let value = (0..<random.size(in: 1...4)).map { "item \($0) ✓ \(random.next(below: 100))" }
            return pair(value as NSArray, value)
        case "[String: Int64]":
            var value: [String: Int64] = [:]
            for index in 0..<random.size(in: 1...4) {
                value["key\(index)"] = Int64.random(in: -1_000...1_000, using: &random)
            }
            return pair(value.mapValues { NSNumber(value: $0) } as NSDictionary, value)
        case "NSString":
            let value = "text \(random.next(below: 1000))"
            return pair(value as NSString, value)
        case "NSDate":
            let value = Date(timeIntervalSinceReferenceDate: Double(random.next(below: 1_000_000)) / 4)
            return pair(value as NSDate, value)
        default:
            let value = (0..<random.size(in: 1...3)).map { URL(string: "https://example.com/\($0)")! }
            return pair(value.map { $0 as NSURL } as NSArray, value)
        }
    }

    // MARK: - Links

    static func key(_ entity: String, _ relationship: String) -> String { "\(entity).\(relationship)" }

    private func keys(of entity: String) -> [Int64] {
        let family = Set(descendants(of: entity))
        return objects.filter { family.contains($0.entity) }.map(\.primaryKey)
    }

    /// The relationship named `name` of `entity` or an ancestor.
    func relationship(_ name: String, of entity: String) -> (CoreDataStoreFixture.Relationship, String)? {
        relationships(of: entity).first { $0.0.name == name }
    }

    /// Whether the links of a many-to-many pair are drawn from this side: the ordered side, else
    /// the side whose `Entity.relationship` sorts first; a reflexive relationship is its own pair.
    func drawsLinks(_ relationship: CoreDataStoreFixture.Relationship, of entity: String) -> Bool {
        guard let inverseName = relationship.inverse,
            let (inverse, owner) = self.relationship(inverseName, of: relationship.destination)
        else { return true }
        if inverse.name == relationship.name && owner == entity { return true }
        if relationship.ordered != inverse.ordered { return relationship.ordered }
        return Self.key(entity, relationship.name) < Self.key(owner, inverse.name)
    }

    private mutating func makeLinks(_ random: inout SplitMix64) {
        for entity in fixture.entities {
            for relationship in entity.relationships {
                let key = Self.key(entity.name, relationship.name)
                let sources = keys(of: entity.name)
                let destinations = keys(of: relationship.destination)
                guard !destinations.isEmpty, !sources.isEmpty else { continue }
                let inverse = relationship.inverse.flatMap { self.relationship($0, of: relationship.destination) }
                if !relationship.toMany {
                    // The to-one side of a pair decides both sides.
                    for source in sources where random.chance(0.7) {
                        toOne[key, default: [:]][source] = random.pick(destinations)
                    }
                } else if inverse == nil {
                    // A virtual to-one: each destination belongs to one source at most.
                    for destination in destinations.shuffled(using: &random) where random.chance(0.6) {
                        toMany[key, default: [:]][random.pick(sources), default: []].append(destination)
                    }
                } else if inverse?.0.toMany == true, drawsLinks(relationship, of: entity.name) {
                    for source in sources {
                        var chosen: [Int64] = []
                        for _ in 0..<random.size(in: 0...3) {
                            let destination = random.pick(destinations)
                            if !chosen.contains(destination) { chosen.append(destination) }
                        }
                        if !chosen.isEmpty { toMany[key, default: [:]][source] = Array(chosen) }
                    }
                }
            }
        }
        // Inverse to-one pairs, seen from the to-many side, for reading back.
        for entity in fixture.entities {
            for relationship in entity.relationships where !relationship.toMany {
                guard let inverse = relationship.inverse else { continue }
                var grouped: [Int64: [Int64]] = [:]
                for (source, destination) in (toOne[Self.key(entity.name, relationship.name)] ?? [:]).sorted(by: {
                    $0.key < $1.key
                }) {
                    grouped[destination, default: []].append(source)
                }
                let owner = lineage(relationship.destination).last { $0.relationships.contains { $0.name == inverse } }
                if let owner {
                    let inverseKey = Self.key(owner.name, inverse)
                    for (destination, sources) in grouped {
                        toMany[inverseKey, default: [:]][destination] = sources.shuffled(using: &random)
                    }
                }
            }
        }
    }
}

// MARK: - Writing the store

extension CoreDataStoreWriter {
    /// Sparse order values, as Core Data writes them: ascending, in steps of 1024 with gaps.
    static func orderValues(_ count: Int, _ random: inout SplitMix64) -> [Int64] {
        var value: Int64 = 1024
        return (0..<count).map { _ in
            value += 1024 * Int64(random.size(in: 1...2))
            return value
        }
    }

    /// Writes the store as `<folder>/<name>.sqlite` with its `-wal` and `-shm` (every row kept in
    /// the log when `rowsInLog`), external data in `.<name>_SUPPORT/_EXTERNAL_DATA`, and the
    /// metadata's version hashes `hashes`. Returns the `.sqlite` file.
    ///
    /// With `checkpointedTables`, Core Data's tables, metadata and entity rows (`Z_MAX` 0) are
    /// written first and checkpointed into the main file, as a store that was created, closed and
    /// opened again holds them; the objects then go in a second transaction, kept in the log when
    /// `rowsInLog`.
    func write(
        to folder: URL, name: String, hashes: [String: Data], rowsInLog: Bool, random: inout SplitMix64,
        metadataChanges: [String: Any] = [:], checkpointedTables: Bool = false
    ) throws -> URL {
        let manager = FileManager.default
        let build = folder.appendingPathComponent("build-\(UUID().uuidString)")
        try manager.createDirectory(at: build, withIntermediateDirectories: true)
        defer { try? manager.removeItem(at: build) }
        let path = build.appendingPathComponent("\(name).sqlite").path
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        try connection.execute("PRAGMA journal_mode=WAL")
        if rowsInLog { try connection.execute("PRAGMA wal_autocheckpoint=0") }
        var statements: [(String, [SQLValue])] = []
        statements.append(
            (
                "CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER)",
                []
            ))
        statements.append(
            ("CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB)", []))
        statements.append(("CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB)", []))
        // Persistent history, an ancillary model the import skips.
        statements.append(
            (
                "CREATE TABLE ATRANSACTION (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHOR VARCHAR, ZTIMESTAMP FLOAT)",
                []
            ))
        statements.append(("INSERT INTO ATRANSACTION VALUES (1, 16002, 1, 'app', 700000000.5)", []))
        for (entity, id) in ids.sorted(by: { $0.value < $1.value }) {
            let parent = fixture.entity(entity)?.parent.flatMap { ids[$0] } ?? 0
            let maximum = parent == 0 ? objects.filter { $0.root == entity }.map(\.primaryKey).max() ?? 0 : 0
            statements.append(
                (
                    "INSERT INTO Z_PRIMARYKEY VALUES (?, ?, ?, ?)",
                    [.integer(Int64(id)), .text(entity), .integer(Int64(parent)), .integer(maximum)]
                ))
        }
        for (id, entity) in [(16001, "CHANGE"), (16002, "TRANSACTION"), (16003, "TRANSACTIONSTRING")] {
            statements.append(("INSERT INTO Z_PRIMARYKEY VALUES (?, ?, 0, 0)", [.integer(Int64(id)), .text(entity)]))
        }
        let metadata: [String: Any] = [
            "NSStoreType": "SQLite", "NSPersistenceFrameworkVersion": 1344, "NSStoreModelVersionHashes": hashes,
            "NSStoreModelVersionHashesVersion": 3, "NSStoreModelVersionIdentifiers": [""], "_NSAutoVacuumLevel": "2",
            "NSStoreModelVersionHashesDigest": CoreDataVersionHashes.digest(of: hashes),
            "NSStoreModelVersionChecksumKey": CoreDataVersionHashes.checksum(of: hashes),
            "MyAppsOwnKey": ["kept": true],
        ]
        // A change to `NSNull` removes the key, as an older framework would not have written it.
        let plist = try PropertyListSerialization.data(
            fromPropertyList: metadata.merging(metadataChanges) { _, new in new }.filter { !($0.value is NSNull) },
            format: .binary, options: 0)
        statements.append(("INSERT INTO Z_METADATA VALUES (1, ?, ?)", [.text(storeUUID), .blob(plist)]))
        statements += try tableStatements(&random)
        if checkpointedTables {
            let created = statements.filter { sql, _ in
                sql.hasPrefix("CREATE") || sql.hasPrefix("INSERT INTO Z_METADATA")
                    || sql.hasPrefix("INSERT INTO Z_PRIMARYKEY")
            }
            try connection.inTransaction(.immediate) {
                for (sql, arguments) in created {
                    let statement = try connection.statement(sql)
                    for (index, argument) in arguments.enumerated() {
                        // Z_PRIMARYKEY's last key: none handed out yet.
                        statement.bind(index == 3 ? .integer(0) : argument, Int32(index + 1))
                    }
                    try statement.run()
                    statement.reset()
                }
            }
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            statements = statements.compactMap { sql, arguments in
                if sql.hasPrefix("CREATE") || sql.hasPrefix("INSERT INTO Z_METADATA") { return nil }
                if sql.hasPrefix("INSERT INTO Z_PRIMARYKEY") {
                    return ("INSERT OR REPLACE INTO Z_PRIMARYKEY VALUES (?, ?, ?, ?)", arguments)
                }
                return (sql, arguments)
            }
        }
        try connection.inTransaction(.immediate) {
            for (sql, arguments) in statements {
                let statement = try connection.statement(sql)
                for (index, argument) in arguments.enumerated() { statement.bind(argument, Int32(index + 1)) }
                try statement.run()
                statement.reset()
            }
        }
        let target = folder.appendingPathComponent("\(name).sqlite")
        for suffix in ["", "-wal", "-shm"] where manager.fileExists(atPath: path + suffix) {
            try manager.copyItem(atPath: path + suffix, toPath: target.path + suffix)
        }
        if !externalFiles.isEmpty {
            let external = folder.appendingPathComponent(".\(name)_SUPPORT/_EXTERNAL_DATA")
            try manager.createDirectory(at: external, withIntermediateDirectories: true)
            for (file, data) in externalFiles { try data.write(to: external.appendingPathComponent(file)) }
        }
        return target
    }

    /// The tables of every root entity and join table, and their rows.
    private func tableStatements(_ random: inout SplitMix64) throws -> [(String, [SQLValue])] {
        var statements: [(String, [SQLValue])] = []
        var attributeColumns: [String: String] = [:]  // "Entity.attribute" → column
        var tableColumns: [String: [String]] = [:]
        var taken: [String: Set<String>] = [:]
        func claim(_ base: String, in table: String) -> String {
            var name = base
            var suffix = 1
            while taken[table, default: ["Z_PK", "Z_ENT", "Z_OPT"]].contains(name) {
                name = base + String(suffix)
                suffix += 1
            }
            taken[table, default: ["Z_PK", "Z_ENT", "Z_OPT"]].insert(name)
            tableColumns[table, default: []].append(name)
            return name
        }
        func table(of entity: String) -> String { "Z" + (roots[entity] ?? entity).uppercased() }
        var rowValues: [String: [Int64: [String: SQLValue]]] = [:]  // table → pk → column → value
        for object in objects {
            rowValues[table(of: object.entity), default: [:]][object.primaryKey] = [
                "Z_PK": .integer(object.primaryKey), "Z_ENT": .integer(Int64(ids[object.entity] ?? 0)),
                "Z_OPT": .integer(Int64(random.size(in: 1...9))),
            ]
        }
        var entityOfKey: [String: [Int64: String]] = [:]
        for object in objects { entityOfKey[object.root, default: [:]][object.primaryKey] = object.entity }
        func entityID(ofKey key: Int64, in root: String) -> Int64 {
            Int64(ids[entityOfKey[root]?[key] ?? ""] ?? 0)
        }
        for (entity, _) in ids.sorted(by: { $0.value < $1.value }) {
            guard let description = fixture.entity(entity) else { continue }
            let tableName = table(of: entity)
            _ = tableColumns[tableName, default: []]
            for attribute in description.attributes.sorted(by: { Self.caseInsensitive($0.name, $1.name) }) {
                attributeColumns["\(entity).\(attribute.name)"] = claim(
                    "Z" + attribute.name.uppercased(), in: tableName)
            }
            for relationship in description.relationships where !relationship.toMany {
                let upper = relationship.name.uppercased()
                let column = claim("Z" + upper, in: tableName)
                let entityColumn =
                    hasSubentities(relationship.destination)
                    ? claim("Z\(ids[relationship.destination] ?? 0)_\(upper)", in: tableName) : nil
                let inverse = relationship.inverse.flatMap { self.relationship($0, of: relationship.destination) }
                let orderColumn =
                    inverse?.0.toMany == true && inverse?.0.ordered == true
                    ? claim("Z_FOK_\(upper)", in: tableName) : nil
                let links = toOne[Self.key(entity, relationship.name)] ?? [:]
                let destinationRoot = roots[relationship.destination] ?? relationship.destination
                for (source, destination) in links {
                    rowValues[tableName]?[source]?[column] = .integer(destination)
                    if let entityColumn {
                        rowValues[tableName]?[source]?[entityColumn] = .integer(
                            entityID(ofKey: destination, in: destinationRoot))
                    }
                }
                if let orderColumn, let inverse {
                    for (_, sources) in toMany[Self.key(inverse.1, inverse.0.name)] ?? [:] {
                        for (source, order) in zip(sources, Self.orderValues(sources.count, &random)) {
                            rowValues[tableName]?[source]?[orderColumn] = .integer(order)
                        }
                    }
                }
            }
        }
        // To-many relationships without an inverse: a virtual to-one in the destination's table.
        for (entity, id) in ids.sorted(by: { $0.value < $1.value }) {
            for relationship in fixture.entity(entity)?.relationships ?? []
            where relationship.toMany && relationship.inverse == nil {
                let tableName = table(of: relationship.destination)
                let upper = relationship.name.uppercased()
                let column = claim("Z\(id)\(upper)", in: tableName)
                let orderColumn = relationship.ordered ? claim("Z_FOK_\(id)\(upper)", in: tableName) : nil
                for (source, destinations) in toMany[Self.key(entity, relationship.name)] ?? [:] {
                    for (destination, order) in zip(destinations, Self.orderValues(destinations.count, &random)) {
                        rowValues[tableName]?[destination]?[column] = .integer(source)
                        if let orderColumn { rowValues[tableName]?[destination]?[orderColumn] = .integer(order) }
                    }
                }
            }
        }
        for (entity, _) in ids.sorted(by: { $0.value < $1.value }) {
            for object in objects where object.entity == entity {
                for owner in lineage(entity) {
                    for attribute in owner.attributes {
                        guard let column = attributeColumns["\(owner.name).\(attribute.name)"] else { continue }
                        rowValues[table(of: entity)]?[object.primaryKey]?[column] =
                            object.stored[attribute.name] ?? .null
                    }
                }
            }
        }
        for (tableName, columns) in tableColumns.sorted(by: { $0.key < $1.key }) {
            let all = ["Z_PK", "Z_ENT", "Z_OPT"] + columns
            let declarations = all.map {
                $0 == "Z_PK" ? "Z_PK INTEGER PRIMARY KEY" : "\($0) \(declaredType($0, attributeColumns))"
            }
            statements.append(("CREATE TABLE \(tableName) (\(declarations.joined(separator: ", ")))", []))
            for (_, row) in (rowValues[tableName] ?? [:]).sorted(by: { $0.key < $1.key }) {
                statements.append(
                    (
                        "INSERT INTO \(tableName) (\(all.joined(separator: ", "))) VALUES (\(all.map { _ in "?" }.joined(separator: ", ")))",
                        all.map { row[$0] ?? .null }
                    ))
            }
        }
        statements += joinTableStatements(&random)
        return statements
    }

    /// The declared SQL type of a column, as Core Data declares it (its affinity matters: a
    /// TIMESTAMP or DECIMAL column stores whole numbers as INTEGER).
    private func declaredType(_ column: String, _ attributeColumns: [String: String]) -> String {
        guard let attribute = attributeColumns.first(where: { $0.value == column })?.key else { return "INTEGER" }
        let parts = attribute.split(separator: ".", maxSplits: 1).map(String.init)
        let type = fixture.entity(parts[0])?.attributes.first { $0.name == parts[1] }?.type ?? ""
        switch type {
        case "Decimal": return "DECIMAL"
        case "Double", "Float": return "FLOAT"
        case "String", "URI": return "VARCHAR"
        case "Date": return "TIMESTAMP"
        case "Binary", "Transformable", "UUID": return "BLOB"
        default: return "INTEGER"
        }
    }

    /// Join tables of many-to-many pairs, each under one of its two possible names.
    private func joinTableStatements(_ random: inout SplitMix64) -> [(String, [SQLValue])] {
        var statements: [(String, [SQLValue])] = []
        for entity in fixture.entities {
            for relationship in entity.relationships where relationship.toMany {
                guard let inverseName = relationship.inverse,
                    let (inverse, inverseOwner) = self.relationship(inverseName, of: relationship.destination),
                    inverse.toMany, drawsLinks(relationship, of: entity.name)
                else { continue }
                let upper = relationship.name.uppercased()
                let myID = ids[entity.name] ?? 0
                let table: String
                let sourceColumn: String
                let destinationColumn: String
                let orderColumn: String?
                if inverse.name == relationship.name && inverseOwner == entity.name {
                    table = "Z_\(myID)\(upper)"
                    sourceColumn = "Z_\(myID)\(upper)"
                    destinationColumn = "REFLEXIVE"
                    orderColumn = relationship.ordered ? "FOK_REFLEXIVE" : nil
                } else {
                    let candidates = ["Z_\(myID)\(upper)", "Z_\(ids[inverseOwner] ?? 0)\(inverse.name.uppercased())"]
                    table = random.pick(candidates)
                    sourceColumn = "Z_\(ids[inverse.destination] ?? 0)\(inverse.name.uppercased())"
                    destinationColumn = "Z_\(ids[relationship.destination] ?? 0)\(upper)"
                    orderColumn = relationship.ordered ? "Z_FOK_\(ids[relationship.destination] ?? 0)\(upper)" : nil
                }
                var columns = [sourceColumn, destinationColumn]
                if let orderColumn { columns.append(orderColumn) }
                statements.append(
                    (
                        "CREATE TABLE \(table) (\(columns.map { "\($0) INTEGER" }.joined(separator: ", ")), PRIMARY KEY (\(sourceColumn), \(destinationColumn)))",
                        []
                    ))
                for (source, destinations) in (toMany[Self.key(entity.name, relationship.name)] ?? [:]).sorted(by: {
                    $0.key < $1.key
                }) {
                    for (destination, order) in zip(destinations, Self.orderValues(destinations.count, &random))
                        .shuffled(using: &random)
                    {
                        var values: [SQLValue] = [.integer(source), .integer(destination)]
                        if orderColumn != nil { values.append(.integer(order)) }
                        statements.append(
                            (
                                "INSERT INTO \(table) (\(columns.joined(separator: ", "))) VALUES (\(columns.map { _ in "?" }.joined(separator: ", ")))",
                                values
                            ))
                    }
                }
            }
        }
        return statements
    }
}
