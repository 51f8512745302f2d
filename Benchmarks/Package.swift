// swift-tools-version: 6.0
import Foundation
import PackageDescription

// Benchmarks live in their own package so that Modelwright itself keeps zero dependencies:
// GRDB and PostgresNIO are dependencies of this package only. Run from this directory:
//
//     swift run -c release ModelwrightBenchmarks

// SwiftPM names a path dependency after its directory, so the clone's folder name is the
// package identity that `.product(name:package:)` must use.
let modelwrightIdentity = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// PostgresNIO (with SwiftNIO, swift-crypto and two BoringSSL copies) takes long to build in
// release on a small machine: MODELWRIGHT_BENCHMARKS_WITHOUT_NIO=1 leaves it out, and
// PostgresBenchmarks then runs without its PostgresNIO column.
let withPostgresNIO = ProcessInfo.processInfo.environment["MODELWRIGHT_BENCHMARKS_WITHOUT_NIO"] != "1"

let package = Package(
    name: "ModelwrightBenchmarks",
    platforms: [.macOS(.v13), .iOS(.v16)],
    dependencies: [
        .package(path: ".."),
        .package(url: "https://github.com/groue/GRDB.swift", exact: "7.10.0"),
    ] + (withPostgresNIO ? [.package(url: "https://github.com/vapor/postgres-nio", exact: "1.33.2")] : []),
    targets: [
        // What several benchmarks measure with: resident memory,
        // and the hand-written records the benchmarks share (one source for each).
        .target(name: "BenchmarkSupport", dependencies: [.product(name: "Modelwright", package: modelwrightIdentity)]),
        // The raw C contender calls SQLite directly; Modelwright's own CSQLite is not a product.
        .systemLibrary(
            name: "CSQLiteBench",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // The two GRDB contenders' records and workloads, one source for FetchProbe (instructions)
        // and ModelwrightBenchmarks (wall time).
        .target(name: "GRDBPeople", dependencies: [.product(name: "GRDB", package: "GRDB.swift")]),
        .executableTarget(
            name: "ModelwrightBenchmarks",
            dependencies: [
                "CSQLiteBench", "BenchmarkSupport", "GRDBPeople",
                .product(name: "Modelwright", package: modelwrightIdentity),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // FetchedResultsController over a long sectioned list, next to a plain re-fetch.
        .executableTarget(
            name: "ResultsControllerBenchmarks",
            dependencies: ["BenchmarkSupport", .product(name: "Modelwright", package: modelwrightIdentity)]
        ),
        // Persistent history: inserts with history on and off, reading history, and the latency
        // from a commit in another process (this executable, run as a child) to an observation.
        .executableTarget(
            name: "FetchProbe",
            dependencies: [
                "CSQLiteBench", "BenchmarkSupport", "GRDBPeople",
                .product(name: "Modelwright", package: modelwrightIdentity),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]
        ),
        // Issue 31's aggregates and prefetching in callgrind instructions, synchronous (see main.swift).
        .executableTarget(
            name: "QueryProbe",
            dependencies: [
                "CSQLiteBench", "BenchmarkSupport", .product(name: "Modelwright", package: modelwrightIdentity),
            ]
        ),
        .executableTarget(
            name: "HistoryBenchmarks",
            dependencies: [.product(name: "Modelwright", package: modelwrightIdentity)]
        ),
        .executableTarget(
            name: "CompileBenchmarks",
            dependencies: [.product(name: "ModelwrightGenerator", package: modelwrightIdentity)]
        ),
        // Importing a 100,000-object Core Data store, next to a plain SQLite copy of the same file.
        .executableTarget(
            name: "CoreDataImportBenchmarks",
            dependencies: ["CSQLiteBench", .product(name: "Modelwright", package: modelwrightIdentity)]
        ),
        .executableTarget(
            name: "MigrationBenchmarks",
            dependencies: ["CSQLiteBench", .product(name: "Modelwright", package: modelwrightIdentity)]
        ),
        // Issue 31's queries: aggregates next to fetch-and-reduce and hand SQL, streaming's peak memory.
        .executableTarget(
            name: "QueryBenchmarks",
            dependencies: [
                "CSQLiteBench", "BenchmarkSupport", .product(name: "Modelwright", package: modelwrightIdentity),
            ]
        ),
        // Issue 31's full-text matching in memory: `SearchQuery.matches` through FTS5's own tokenizer.
        .executableTarget(
            name: "SearchBenchmarks",
            dependencies: [.product(name: "Modelwright", package: modelwrightIdentity)]
        ),
        // Sync's row coding (issue 28): Codable against the hand-written coding; internal API, so
        // it is built with `-Xswiftc -enable-testing` (see main.swift).
        .executableTarget(
            name: "SyncCodingBenchmarks",
            dependencies: [.product(name: "Modelwright", package: modelwrightIdentity)]
        ),
        // PostgreSQL (issue 27): Modelwright's Store on PostgreSQL with the shared Person records, next
        // to the same workloads in C on raw libpq and through PostgresNIO, on a cluster the run starts.
        .target(
            name: "LibPQBench", cSettings: [.unsafeFlags(["-I/usr/include/postgresql"])],
            linkerSettings: [.linkedLibrary("pq")]),
        .executableTarget(
            name: "PostgresBenchmarks",
            dependencies: [
                "LibPQBench", "BenchmarkSupport", .product(name: "Modelwright", package: modelwrightIdentity),
                .product(name: "ModelwrightPostgres", package: modelwrightIdentity),
            ] + (withPostgresNIO ? [.product(name: "PostgresNIO", package: "postgres-nio")] : [])
        ),
        // PostgresBenchmarks' reads in callgrind instructions, synchronous (see main.swift).
        .executableTarget(
            name: "PostgresProbe",
            dependencies: [
                "LibPQBench", "BenchmarkSupport", .product(name: "Modelwright", package: modelwrightIdentity),
                .product(name: "ModelwrightPostgres", package: modelwrightIdentity),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
