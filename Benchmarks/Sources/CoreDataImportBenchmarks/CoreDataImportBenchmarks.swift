import CSQLiteBench
import Foundation
import Modelwright

/// Times importing a Core Data store against a plain SQLite copy of the same file, in a release build:
///
///     cd Benchmarks && swift run -c release CoreDataImportBenchmarks [--objects 100000] [--runs 7]
///
/// The store is written as Core Data lays one out (`coredata-store-format.md`): authors, books and
/// tags, one fifth, seven tenths and one tenth of the objects; each book has a to-one author whose
/// to-many `books` is ordered (`Z_FOK_AUTHOR`), and two tags through a many-to-many join table
/// (`Z_2TAGS`). The plain copy is `sqlite3_backup` of the whole file into a new one (pages, as
/// they are); `VACUUM INTO`, also shown, writes every row and rebuilds every index of a copy.
/// "raw SQL, same rows" is a floor for writing the import's rows: SQLite alone filling the new
/// store's tables from the attached store. Target: the import takes at most 5× the plain copy. `--import-only` runs one import and nothing else, for a profiler.
@main
struct CoreDataImportBenchmarks {
    static func main() throws {
        let arguments = CommandLine.arguments
        func option(_ name: String, _ fallback: Int) -> Int {
            arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? Int(arguments[$0 + 1]) : nil }
                ?? fallback
        }
        let objects = option("--objects", 100_000)
        let runs = max(1, option("--runs", 7))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "coredata-import-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = folder.appendingPathComponent("Shop.sqlite")
        let counts = try writeStore(at: store, objects: objects)
        let model = CoreDataStoreModel(versions: [coreDataVersion])
        let plan = MigrationPlan(current: schema, stages: [])

        var run = 0
        var importCPU: [Double] = []
        var lowerBoundCPU: [Double] = []
        func importOnce() throws -> (milliseconds: Double, summary: CoreDataStoreImport.Summary) {
            run += 1
            let destination = folder.appendingPathComponent("import-\(run).store")
            let cpu = cpuMilliseconds()
            let start = DispatchTime.now()
            let summary = try CoreDataStoreImport.importStore(
                at: store, model: model, migrationPlan: plan, to: destination)
            let time = milliseconds(since: start)
            importCPU.append(cpuMilliseconds() - cpu)
            try? FileManager.default.removeItem(at: destination)
            return (time, summary)
        }
        if arguments.contains("--import-only") {
            let (time, summary) = try importOnce()
            print(
                String(
                    format: "imported %d objects, %d links in %.1f ms (%.1f ms of CPU)", summary.totalRows,
                    summary.links, time, importCPU.last ?? 0))
            return
        }
        func copyOnce() throws -> Double {
            run += 1
            let destination = folder.appendingPathComponent("copy-\(run).sqlite")
            let start = DispatchTime.now()
            try backup(store, to: destination)
            let time = milliseconds(since: start)
            for suffix in ["", "-wal", "-shm"] {
                try? FileManager.default.removeItem(atPath: destination.path + suffix)
            }
            return time
        }
        // A copy that visits every row: VACUUM INTO writes each table's rows and rebuilds each index.
        func vacuumOnce() throws -> Double {
            run += 1
            let destination = folder.appendingPathComponent("vacuum-\(run).sqlite")
            let start = DispatchTime.now()
            try execute(store, "VACUUM INTO '\(destination.path)'")
            let time = milliseconds(since: start)
            try? FileManager.default.removeItem(at: destination)
            return time
        }

        // The floor for writing the same rows: the new store's own tables (made by `Store`), filled
        // by SQLite alone, one `INSERT … SELECT` per table from the attached Core Data store, as the
        // import writes them (no journal, no sync, indexes after the rows), with IDs that are
        // the key spelled in 16 bytes instead of a hash, and no reading into Swift or verifying.
        func lowerBoundOnce() throws -> Double {
            run += 1
            let destination = folder.appendingPathComponent("raw-\(run).store")
            try Store(url: destination, schema: schema).close()
            let cpu = cpuMilliseconds()
            let start = DispatchTime.now()
            func id(_ prefix: String, _ key: String) -> String { "CAST(printf('\(prefix)%015d', \(key)) AS BLOB)" }
            try execute(
                destination,
                """
                PRAGMA journal_mode=OFF;
                PRAGMA synchronous=OFF;
                PRAGMA cache_size=-65536;
                ATTACH '\(store.path)' AS cd;
                BEGIN;
                DROP INDEX "Book_fk_author";
                DROP INDEX "_Book_tags_destination";
                INSERT INTO "Author" SELECT \(id("A", "Z_PK")), CAST(ZBORN AS REAL), ZNAME, ZRATING FROM cd.ZAUTHOR;
                INSERT INTO "Book" SELECT \(id("B", "Z_PK")), CASE WHEN length(ZCOVER) = 16 THEN ZCOVER END,
                    CAST(ZPRICE AS TEXT), ZTITLE, \(id("A", "ZAUTHOR")),
                    ROW_NUMBER() OVER (PARTITION BY ZAUTHOR ORDER BY Z_FOK_AUTHOR, Z_PK) - 1 FROM cd.ZBOOK;
                INSERT INTO "Tag" SELECT \(id("T", "Z_PK")), ZNAME FROM cd.ZTAG;
                INSERT INTO "_Book_tags" SELECT \(id("B", "Z_2BOOKS")), \(id("T", "Z_3TAGS")) FROM cd.Z_2TAGS;
                CREATE INDEX "Book_fk_author" ON "Book" ("author");
                CREATE INDEX "_Book_tags_destination" ON "_Book_tags" ("destination", "source");
                COMMIT;
                """)
            let time = milliseconds(since: start)
            lowerBoundCPU.append(cpuMilliseconds() - cpu)
            try? FileManager.default.removeItem(at: destination)
            return time
        }

        var copies: [Double] = []
        var vacuums: [Double] = []
        var lowerBounds: [Double] = []
        var imports: [Double] = []
        var summary: CoreDataStoreImport.Summary?
        // Alternated, so a burst of load on a shared machine hits both sides alike.
        for _ in 0..<runs {
            copies.append(try copyOnce())
            vacuums.append(try vacuumOnce())
            lowerBounds.append(try lowerBoundOnce())
            let imported = try importOnce()
            imports.append(imported.milliseconds)
            summary = imported.summary
        }
        guard let summary, summary.totalRows == counts.objects else {
            print("the import read \(summary?.totalRows ?? 0) objects, where the store holds \(counts.objects)")
            exit(1)
        }
        let fileSize = (try? FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int) ?? 0
        print(
            "Core Data store: \(counts.objects) objects (\(counts.authors) authors, \(counts.books) books, "
                + "\(counts.tags) tags), \(summary.links) to-many links, \(fileSize / 1024) KiB; \(runs) runs")
        print("                     best ms   median ms")
        print(String(format: "plain SQLite copy  %9.1f   %9.1f", copies.min() ?? 0, median(copies)))
        print(String(format: "VACUUM INTO        %9.1f   %9.1f", vacuums.min() ?? 0, median(vacuums)))
        print(String(format: "raw SQL, same rows %9.1f   %9.1f", lowerBounds.min() ?? 0, median(lowerBounds)))
        print(String(format: "import             %9.1f   %9.1f", imports.min() ?? 0, median(imports)))
        let bestRatio = (imports.min() ?? 0) / (copies.min() ?? 1)
        let medianRatio = median(imports) / median(copies)
        print(String(format: "import / copy      %8.2f×   %8.2f×", bestRatio, medianRatio))
        print(
            String(
                format: "import / VACUUM    %8.2f×   %8.2f×", (imports.min() ?? 0) / (vacuums.min() ?? 1),
                median(imports) / median(vacuums)))
        print(
            String(
                format: "import CPU time (user + system): best %.1f ms, median %.1f ms", importCPU.min() ?? 0,
                median(importCPU)))
        print(
            String(
                format: "raw SQL CPU time (user + system): best %.1f ms, median %.1f ms", lowerBoundCPU.min() ?? 0,
                median(lowerBoundCPU)))
        print(String(format: "%@  import ≤ 5× the copy (best): %.2f×", bestRatio <= 5 ? "PASS" : "MISS", bestRatio))
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    /// The process's CPU time so far, user and system: what a run costs whatever else the machine runs.
    static func cpuMilliseconds() -> Double {
        var usage = rusage()
        #if os(Linux)
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        let user = Double(usage.ru_utime.tv_sec) * 1000 + Double(usage.ru_utime.tv_usec) / 1000
        let system = Double(usage.ru_stime.tv_sec) * 1000 + Double(usage.ru_stime.tv_usec) / 1000
        return user + system
    }

    static func milliseconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1_000_000
    }

    // MARK: - The model

    /// The Core Data model that wrote the store, as `import-coredata` keeps it.
    static let coreDataVersion = CoreDataStoreModel.Version(
        name: "Shop", schemaVersion: 1,
        entities: [
            .init(
                name: "Author", schemaName: "Author",
                attributes: [
                    .init(name: "born", schemaName: "born", typeCode: 900),
                    .init(name: "name", schemaName: "name", typeCode: 700),
                    .init(name: "rating", schemaName: "rating", typeCode: 200),
                ],
                relationships: [
                    .init(
                        name: "books", schemaName: "books", destination: "Book", inverse: "author", isToMany: true,
                        isOrdered: true)
                ]),
            .init(
                name: "Book", schemaName: "Book",
                attributes: [
                    .init(name: "cover", schemaName: "cover", typeCode: 1100, isOptional: true),
                    .init(name: "price", schemaName: "price", typeCode: 400),
                    .init(name: "title", schemaName: "title", typeCode: 700),
                ],
                relationships: [
                    .init(name: "author", schemaName: "author", destination: "Author", inverse: "books"),
                    .init(name: "tags", schemaName: "tags", destination: "Tag", inverse: "books", isToMany: true),
                ]),
            .init(
                name: "Tag", schemaName: "Tag",
                attributes: [.init(name: "name", schemaName: "name", typeCode: 700)],
                relationships: [
                    .init(name: "books", schemaName: "books", destination: "Book", inverse: "tags", isToMany: true)
                ]),
        ])

    /// The schema that version was imported as.
    static let schema = SchemaDescription(
        modelName: "Shop", version: 1,
        entities: [
            EntityDescription(
                name: "Author",
                attributes: [
                    AttributeDescription(name: "born", type: .date),
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "rating", type: .int32),
                ],
                relationships: [
                    RelationshipDescription(
                        name: "books", destination: "Book", inverse: "author", cardinality: .toMany, isOrdered: true)
                ]),
            EntityDescription(
                name: "Book",
                attributes: [
                    AttributeDescription(name: "cover", type: .uuid, isOptional: true),
                    AttributeDescription(name: "price", type: .decimal),
                    AttributeDescription(name: "title", type: .string),
                ],
                relationships: [
                    RelationshipDescription(
                        name: "author", destination: "Author", inverse: "books", cardinality: .toOne),
                    RelationshipDescription(name: "tags", destination: "Tag", inverse: "books", cardinality: .toMany),
                ]),
            EntityDescription(
                name: "Tag",
                attributes: [AttributeDescription(name: "name", type: .string)],
                relationships: [
                    RelationshipDescription(name: "books", destination: "Book", inverse: "tags", cardinality: .toMany)
                ]),
        ])

    // MARK: - The store

    /// Writes a Core Data store of about `objects` objects at `url`, in WAL mode and checkpointed,
    /// with Core Data's tables, entity ids (Author 1, Book 2, Tag 3), metadata and version hashes.
    static func writeStore(
        at url: URL, objects: Int
    ) throws -> (objects: Int, authors: Int, books: Int, tags: Int) {
        let authors = max(1, objects / 5)
        let tags = max(1, objects / 10)
        let books = max(1, objects - authors - tags)
        let metadata: [String: Any] = [
            "NSStoreType": "SQLite", "NSPersistenceFrameworkVersion": 1344,
            "NSStoreModelVersionHashesVersion": 3, "NSStoreModelVersionIdentifiers": [""],
            "NSStoreModelVersionHashes": coreDataVersion.versionHashes, "_NSAutoVacuumLevel": "2",
        ]
        let plist = try PropertyListSerialization.data(fromPropertyList: metadata, format: .binary, options: 0)
        let hex = plist.map { String(format: "%02X", $0) }.joined()
        try execute(
            url,
            """
            PRAGMA journal_mode=WAL;
            BEGIN;
            CREATE TABLE Z_PRIMARYKEY (Z_ENT INTEGER PRIMARY KEY, Z_NAME VARCHAR, Z_SUPER INTEGER, Z_MAX INTEGER);
            CREATE TABLE Z_METADATA (Z_VERSION INTEGER PRIMARY KEY, Z_UUID VARCHAR(255), Z_PLIST BLOB);
            CREATE TABLE Z_MODELCACHE (Z_CONTENT BLOB);
            CREATE TABLE ZAUTHOR (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZRATING INTEGER,
                ZBORN TIMESTAMP, ZNAME VARCHAR);
            CREATE TABLE ZBOOK (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZAUTHOR INTEGER,
                Z_FOK_AUTHOR INTEGER, ZPRICE DECIMAL, ZTITLE VARCHAR, ZCOVER BLOB);
            CREATE TABLE ZTAG (Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNAME VARCHAR);
            CREATE TABLE Z_2TAGS (Z_2BOOKS INTEGER, Z_3TAGS INTEGER, PRIMARY KEY (Z_2BOOKS, Z_3TAGS));
            CREATE INDEX Z_2TAGS_Z_3TAGS_INDEX ON Z_2TAGS (Z_3TAGS, Z_2BOOKS);
            CREATE INDEX ZBOOK_ZAUTHOR_INDEX ON ZBOOK (ZAUTHOR);
            INSERT INTO Z_PRIMARYKEY VALUES (1, 'Author', 0, \(authors)), (2, 'Book', 0, \(books)),
                (3, 'Tag', 0, \(tags));
            INSERT INTO Z_METADATA VALUES (1, '6D1C3A4E-2B57-4F0A-9C1E-8E0F5A7B3D21', X'\(hex)');
            WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < \(authors))
            INSERT INTO ZAUTHOR SELECT k, 1, 1, k % 5, CASE WHEN k % 2 = 0 THEN 500000000 + k ELSE 500000000.25 + k END,
                'Author ' || k FROM n;
            WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < \(books))
            INSERT INTO ZBOOK SELECT k, 2, 1, (k - 1) % \(authors) + 1, ((k - 1) / \(authors) + 1) * 1024,
                CASE WHEN k % 3 = 0 THEN k ELSE k + 0.25 END, 'Book ' || k,
                CASE WHEN k % 4 = 0 THEN NULL ELSE randomblob(16) END FROM n;
            WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < \(tags))
            INSERT INTO ZTAG SELECT k, 3, 1, 'Tag ' || k FROM n;
            WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < \(books))
            INSERT OR IGNORE INTO Z_2TAGS SELECT k, k % \(tags) + 1 FROM n
                UNION ALL SELECT k, (k * 7 + 3) % \(tags) + 1 FROM n;
            COMMIT;
            """)
        return (authors + books + tags, authors, books, tags)
    }

    /// A plain SQLite copy: every page of `source` into a new database at `destination`.
    static func backup(_ source: URL, to destination: URL) throws {
        var from: OpaquePointer?
        var to: OpaquePointer?
        defer {
            sqlite3_close(from)
            sqlite3_close(to)
        }
        guard sqlite3_open_v2(source.path, &from, SQLITE_OPEN_READONLY, nil) == SQLITE_OK,
            sqlite3_open(destination.path, &to) == SQLITE_OK,
            let backup = sqlite3_backup_init(to, "main", from, "main")
        else { throw BenchmarkError(message: "cannot start a backup of \(source.path)") }
        let stepped = sqlite3_backup_step(backup, -1)
        let finished = sqlite3_backup_finish(backup)
        guard stepped == SQLITE_DONE, finished == SQLITE_OK else {
            throw BenchmarkError(message: "the backup of \(source.path) failed (\(stepped), \(finished))")
        }
    }

    static func execute(_ url: URL, _ sql: String) throws {
        var handle: OpaquePointer?
        defer { sqlite3_close(handle) }
        guard sqlite3_open(url.path, &handle) == SQLITE_OK else {
            throw BenchmarkError(message: "cannot open \(url.path)")
        }
        var message: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(handle, sql, nil, nil, &message) == SQLITE_OK else {
            let text = message.map { String(cString: $0) } ?? "unknown"
            sqlite3_free(message)
            throw BenchmarkError(message: "SQL failed: \(text)")
        }
    }
}

/// A failure while setting up or running a benchmark.
struct BenchmarkError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
