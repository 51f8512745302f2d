import Foundation
import Testing

@testable import Modelwright

/// Every uniqueness constraint and index a schema declares exists in the store, whatever names
/// the runtime derives for them.
struct IndexNamingTests {
    @Test func constraintsWhoseDerivedNamesMeetAreAllEnforced() throws {
        // `@unique(a, b)` and `@unique(a_b)` both derive `E_unique_a_b`; `@indexed` names collide
        // with a differently cased table name too.
        let entity = EntityDescription(
            name: "E",
            attributes: ["a", "b", "a_b"].map { AttributeDescription(name: $0, type: .string) },
            uniquenessConstraints: [["a", "b"], ["a_b"], ["a_b"]],
            indexes: [["b"], ["a_b"]])
        let other = EntityDescription(
            name: "E_index_b", attributes: [AttributeDescription(name: "x", type: .int)])
        let schema = SchemaDescription(modelName: "M", version: 1, entities: [entity, other])
        let tables = SchemaSQL.tables(for: try SchemaLayout(schema), in: SQLiteDialect())
        let names = tables.flatMap { [$0.name] + $0.indexes.map(\.name) }.map { $0.lowercased() }
        #expect(Set(names).count == names.count, "\(names)")
        let connection = try SQLiteConnection(path: nil)
        try connection.execute(SchemaSQL.createStatements(for: try SchemaLayout(schema), in: connection.dialect))
        try connection.execute("INSERT INTO \"E\" (\"id\", \"a\", \"b\", \"a_b\") VALUES (X'01', 'x', 'y', 'same')")
        #expect(throws: SQLiteError.self) {
            try connection.execute("INSERT INTO \"E\" (\"id\", \"a\", \"b\", \"a_b\") VALUES (X'02', 'p', 'q', 'same')")
        }
        #expect(throws: SQLiteError.self) {
            try connection.execute(
                "INSERT INTO \"E\" (\"id\", \"a\", \"b\", \"a_b\") VALUES (X'03', 'x', 'y', 'other')")
        }
    }
}
