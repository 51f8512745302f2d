import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData

/// Rows a damaged or hand-edited store holds: read as Core Data reads them where Core Data reads
/// them at all, and otherwise refused by an error naming the table or entity, attribute and row,
/// never a bare SQLite constraint error or a silently dropped link.
@Suite(.heavy, .serialized) struct CoreDataStoreDamagedRowTests {
    typealias Case = CoreDataStoreRefusalTests.Case

    /// The layout of the fixture's store.
    static func layout(_ test: Case) -> CoreDataStoreLayout {
        CoreDataStoreLayout(test.prepared.storeModel.versions[0])
    }

    /// Every row of every table of the store at `path`, to compare two imports.
    static func dump(_ path: String) throws -> [String: [[SQLValue]]] {
        let connection = try SQLiteConnection(path: path)
        defer { connection.close() }
        var tables: [String: [[SQLValue]]] = [:]
        for table in try CoreDataStoreSource.tableNames(on: connection) {
            let statement = try connection.statement("SELECT * FROM \"\(table)\" ORDER BY 1")
            defer { statement.reset() }
            var rows: [[SQLValue]] = []
            while try statement.step() { rows.append((0..<statement.columnCount).map { statement.value($0) }) }
            tables[table] = rows
        }
        return tables
    }

    /// A to-one key stored as text with trailing junk, or as a real, reads as Core Data's
    /// `sqlite3_column_int64` reads it: the import equals the import of the clean store.
    @Test(arguments: 0..<4)
    func aToOneKeyOfAnotherStorageClassReadsAsCoreDataReadsIt(seed: Int) throws {
        let test = try Case(seed: 40 + seed, rowsInLog: false)
        defer { test.remove() }
        let clean = test.folder.appendingPathComponent("clean.store")
        try CoreDataStoreImport.importStore(
            at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan, to: clean)
        let connection = try SQLiteConnection(path: test.store.path)
        var changed = 0
        for (name, entity) in Self.layout(test).entities {
            for (relationship, owner) in entity.relationships where owner == name && !relationship.isToMany {
                guard
                    case .foreignKey(let column, _, _)? = Self.layout(test).storage(of: relationship, owner: owner)
                else { continue }
                let spelling = changed % 2 == 0 ? "\(column) || 'x'" : "\(column) + 0.5"
                try connection.execute("UPDATE \(entity.table) SET \(column) = \(spelling) WHERE \(column) IS NOT NULL")
                changed += 1
            }
        }
        connection.close()
        try CoreDataStoreImport.importStore(
            at: test.store, model: test.prepared.storeModel, migrationPlan: test.prepared.plan, to: test.destination)
        #expect(try Self.dump(test.destination.path) == Self.dump(clean.path), "\(changed) key columns respelled")
    }

    /// A `Z_PK` held by two rows of a root table (one without its primary key) is named.
    @Test(arguments: 0..<3)
    func aPrimaryKeyHeldTwiceIsNamed(seed: Int) throws {
        let test = try Case(seed: 50 + seed, rowsInLog: false)
        defer { test.remove() }
        let layout = Self.layout(test)
        let connection = try SQLiteConnection(path: test.store.path)
        var damaged: String?
        for root in layout.roots.sorted() {
            guard let table = layout.entities[root]?.table else { continue }
            let count = try connection.statement("SELECT COUNT(*) FROM \(table)")
            _ = try count.step()
            let rows = count.int64(0)
            count.reset()
            guard rows > 0 else { continue }
            try connection.execute([
                "CREATE TABLE copy AS SELECT * FROM \(table)", "DROP TABLE \(table)",
                "ALTER TABLE copy RENAME TO \(table)",
                "INSERT INTO \(table) SELECT * FROM \(table) WHERE rowid = (SELECT MIN(rowid) FROM \(table))",
            ])
            damaged = table
            break
        }
        connection.close()
        let table = try #require(damaged)
        guard case .layoutMismatch(_, let problem)? = test.refusal() else {
            Issue.record("a duplicated Z_PK in \(table) was not refused")
            return
        }
        #expect(problem.contains("two rows of \(table)"), "\(problem)")
    }

    /// A to-one that names a row of an entity outside its destination's family (same table, other
    /// `Z_ENT`) is refused naming the entity, relationship and row.
    @Test func aToOneToARowOfAnotherEntityIsRefused() throws {
        for seed in 60..<120 {
            let test = try Case(seed: seed, rowsInLog: false)
            defer { test.remove() }
            let layout = Self.layout(test)
            for (name, entity) in layout.entities.sorted(by: { $0.key < $1.key }) {
                for (relationship, owner) in entity.relationships where owner == name && !relationship.isToMany {
                    guard let destination = layout.entities[relationship.destination],
                        case .foreignKey(let column, _, _)? = layout.storage(of: relationship, owner: owner),
                        let stranger = layout.entities.values.first(where: { candidate in
                            candidate.table == destination.table
                                && !family(of: destination, in: layout).contains(candidate.id)
                        })
                    else { continue }
                    let connection = try SQLiteConnection(path: test.store.path)
                    let pick = try connection.statement(
                        "SELECT (SELECT Z_PK FROM \(destination.table) WHERE Z_ENT = \(stranger.id) LIMIT 1), (SELECT Z_PK FROM \(entity.table) WHERE Z_ENT = \(entity.id) LIMIT 1)"
                    )
                    _ = try pick.step()
                    let (target, row) = (pick.value(0), pick.value(1))
                    pick.reset()
                    guard case .integer(let targetKey) = target, case .integer(let rowKey) = row else {
                        connection.close()
                        continue
                    }
                    try connection.execute("UPDATE \(entity.table) SET \(column) = \(targetKey) WHERE Z_PK = \(rowKey)")
                    connection.close()
                    guard case .unreadableValue(let entityName, let attribute, let key, let reason)? = test.refusal()
                    else {
                        Issue.record(
                            "'\(name).\(relationship.name)' pointing at a '\(stranger.entity.name)' was accepted")
                        return
                    }
                    #expect(entityName == name && attribute == relationship.name && key == rowKey)
                    #expect(reason.contains("'\(stranger.entity.name)'"), "\(reason)")
                    return
                }
            }
        }
        Issue.record("no fixture has a to-one whose destination shares its table with another entity")
    }

    private func family(of entity: CoreDataStoreLayout.Entity, in layout: CoreDataStoreLayout) -> Set<Int> {
        Set(
            layout.entities.values.filter { candidate in
                var current: String? = candidate.entity.name
                while let name = current {
                    if name == entity.entity.name { return true }
                    current = layout.entities[name]?.entity.parent
                }
                return false
            }.map(\.id))
    }

    /// 'NaN' text in a number column (which SQLite would store as NULL) is refused by name.
    @Test func notANumberTextIsRefusedByName() throws {
        for seed in 70..<130 {
            let test = try Case(seed: seed, rowsInLog: false)
            defer { test.remove() }
            let layout = Self.layout(test)
            for (name, entity) in layout.entities.sorted(by: { $0.key < $1.key }) {
                guard
                    let (attribute, column) = entity.attributes.first(where: {
                        [500, 600].contains($0.attribute.typeCode) && $0.attribute.schemaName != nil
                    })
                else { continue }
                let connection = try SQLiteConnection(path: test.store.path)
                try connection.execute("UPDATE \(entity.table) SET \(column) = 'NaN' WHERE Z_ENT = \(entity.id)")
                let changes = try connection.statement("SELECT changes()")
                _ = try changes.step()
                let changed = changes.int64(0)
                changes.reset()
                connection.close()
                guard changed > 0 else { continue }
                guard case .unreadableValue(let entityName, let attributeName, _, let reason)? = test.refusal() else {
                    Issue.record("'NaN' in '\(name).\(attribute.name)' was accepted")
                    return
                }
                #expect(entityName == name && attributeName == attribute.name)
                #expect(reason.contains("'NaN' is not a number"))
                return
            }
        }
        Issue.record("no fixture has a number attribute with a row")
    }
}
