import CSQLiteBench
import Foundation
import Modelwright

/// Times migration stages on a large table, in a release build:
///
///     cd Benchmarks && swift run -c release MigrationBenchmarks [--rows 1000000] [--repetitions 3]
///
/// - adding a column and renaming a column must take the same time at 10,000 and at 1,000,000
///   rows (SQLite's in-place ALTER TABLE), target ≤ 50 ms;
/// - a table rebuild (a removed column) must stay within 1.5× of a raw `INSERT INTO … SELECT`
///   copy of the same table, measured in the same run.
///
/// Each timing opens the store with its migration plan, so it includes everything the app pays:
/// reading the metadata, running the stage, checking foreign keys and comparing the schema with
/// a fresh store's.
@main
struct MigrationBenchmarks {
    static let v1 = schema(
        1,
        [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "age", type: .int64),
            AttributeDescription(name: "note", type: .string, isOptional: true),
        ])
    static let added = schema(
        2, v1.entities[0].attributes + [AttributeDescription(name: "email", type: .string, isOptional: true)])
    static let renamed = schema(
        2,
        [
            AttributeDescription(name: "fullName", type: .string, renamedFrom: "name"),
            AttributeDescription(name: "age", type: .int64),
            AttributeDescription(name: "note", type: .string, isOptional: true),
        ])
    static let removed = schema(2, Array(v1.entities[0].attributes.prefix(2)))

    static func schema(_ version: Int, _ attributes: [AttributeDescription]) -> SchemaDescription {
        SchemaDescription(
            modelName: "Bench", version: version,
            entities: [EntityDescription(name: "Person", attributes: attributes, indexes: [["age"]])])
    }

    static func main() throws {
        let arguments = CommandLine.arguments
        func option(_ name: String, _ fallback: Int) -> Int {
            arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil }
                ?? fallback
        }
        let large = option("--rows", 1_000_000)
        let repetitions = option("--repetitions", 3)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "migration-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let small = try template(rows: 10_000, in: folder)
        let big = try template(rows: large, in: folder)

        func best(_ body: () throws -> Double) rethrows -> Double {
            var times: [Double] = []
            for _ in 0..<repetitions { times.append(try body()) }
            return times.min() ?? 0
        }
        func migrate(_ template: URL, to schema: SchemaDescription) throws -> Double {
            let url = try copy(template, in: folder)
            let plan = MigrationPlan(current: schema, stages: [.lightweight(from: v1, to: schema)])
            let start = DispatchTime.now()
            _ = try Store(url: url, migrationPlan: plan)
            return milliseconds(since: start)
        }
        func rawCopy(_ template: URL) throws -> Double {
            let url = try copy(template, in: folder)
            let start = DispatchTime.now()
            try execute(
                url,
                """
                BEGIN IMMEDIATE;
                CREATE TABLE "copy" ("id" BLOB PRIMARY KEY NOT NULL, "name" TEXT NOT NULL, "age" INTEGER NOT NULL);
                INSERT INTO "copy" ("id", "name", "age") SELECT "id", "name", "age" FROM "Person";
                DROP TABLE "Person";
                ALTER TABLE "copy" RENAME TO "Person";
                CREATE INDEX "Person_index_age" ON "Person" ("age");
                COMMIT;
                """)
            return milliseconds(since: start)
        }

        let rows = (10_000, large)
        print("Migration stages, best of \(repetitions), milliseconds (release build)")
        let addSmall = try best { try migrate(small, to: added) }
        let addLarge = try best { try migrate(big, to: added) }
        print(line("add column", rows, addSmall, addLarge))
        let renameSmall = try best { try migrate(small, to: renamed) }
        let renameLarge = try best { try migrate(big, to: renamed) }
        print(line("rename column", rows, renameSmall, renameLarge))
        let raw = try best { try rawCopy(big) }
        let rebuild = try best { try migrate(big, to: removed) }
        print(
            String(
                format:
                    "table rebuild (remove a column), %d rows: %.1f ms; raw INSERT INTO … SELECT copy: %.1f ms; ratio %.2f×",
                large, rebuild, raw, rebuild / raw))
    }

    static func line(_ name: String, _ rows: (Int, Int), _ small: Double, _ large: Double) -> String {
        String(
            format: "%@: %.1f ms at %d rows, %.1f ms at %d rows (ratio %.2f×)", name, small, rows.0, large, rows.1,
            large / small)
    }

    static func milliseconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1_000_000
    }

    /// A store at version 1 holding `rows` people, written once and copied for each measurement.
    static func template(rows: Int, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("template-\(rows).sqlite")
        _ = try Store(url: url, schema: v1)
        try execute(
            url,
            """
            PRAGMA journal_mode=DELETE;
            WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n WHERE value < \(rows))
            INSERT INTO "Person" ("id", "name", "age", "note")
            SELECT randomblob(16), 'person ' || value, value % 97, CASE WHEN value % 3 = 0 THEN 'note' END FROM n;
            """)
        return url
    }

    static func copy(_ template: URL, in folder: URL) throws -> URL {
        let url = folder.appendingPathComponent("run-\(UUID().uuidString).sqlite")
        try FileManager.default.copyItem(at: template, to: url)
        // Flush the copy to disk first: otherwise the stage's first fsync pays for writing the
        // whole copied file, which would be timed as if the migration visited every row.
        sync()
        return url
    }

    static func execute(_ url: URL, _ sql: String) throws {
        var handle: OpaquePointer?
        defer { sqlite3_close(handle) }
        guard sqlite3_open(url.path, &handle) == SQLITE_OK, sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchmarkFailure(message: String(cString: sqlite3_errmsg(handle)))
        }
    }

    struct BenchmarkFailure: Error {
        let message: String
    }
}
