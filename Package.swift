// swift-tools-version: 6.1
import Foundation
import PackageDescription

// Modelwright has no package dependencies: everything below comes from this package or
// from the Swift toolchain (Foundation, FoundationXML, Dispatch, Testing), the system's SQLite and,
// for the PostgreSQL engine where it is installed, the system's libpq.
let package = Package(
    name: "Modelwright",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Modelwright", targets: ["Modelwright"]),
        .library(name: "ModelwrightSchema", targets: ["ModelwrightSchema"]),
        .library(name: "ModelwrightGenerator", targets: ["ModelwrightGenerator"]),
        .executable(name: "modelwright", targets: ["ModelwrightCLI"]),
        // The plugins run the CLI as a tool, which SwiftPM looks up by a product named after the target.
        .executable(name: "ModelwrightCLI", targets: ["ModelwrightCLI"]),
        .plugin(name: "ModelwrightPlugin", targets: ["ModelwrightPlugin"]),
        .plugin(name: "GenerateModelCode", targets: ["GenerateModelCode"]),
        .plugin(name: "ModelwrightCommand", targets: ["ModelwrightCommand"]),
        .plugin(name: "ModelwrightVersionsCommand", targets: ["ModelwrightVersionsCommand"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(name: "Modelwright", dependencies: ["CSQLite"]),
        // The front end: schema files → entity graphs → checked, lowered, planned versions.
        .target(name: "ModelwrightSchema", dependencies: ["Modelwright"]),
        // Core Data import and export: a second front end and a back end over the schema text.
        .target(name: "ModelwrightCoreData", dependencies: ["ModelwrightSchema", "Modelwright"]),
        // The template engine the generator renders with; it depends on nothing of ours.
        .target(name: "Mustache"),
        .target(
            name: "ModelwrightTemplates",
            path: "Templates",
            exclude: ["README.md"],
            resources: [
                .copy("Records.mustache"), .copy("Queries.mustache"), .copy("Schema.mustache"),
                .copy("Migrations.mustache"),
            ]
        ),
        .target(
            name: "ModelwrightGenerator",
            dependencies: ["ModelwrightSchema", "Modelwright", "ModelwrightTemplates", "Mustache"]
        ),
        .executableTarget(
            name: "ModelwrightCLI",
            dependencies: ["ModelwrightSchema", "ModelwrightCoreData", "ModelwrightGenerator"],
            path: "Sources/modelwright"
        ),
        .plugin(name: "ModelwrightPlugin", capability: .buildTool(), dependencies: [.target(name: "ModelwrightCLI")]),
        .plugin(
            name: "GenerateModelCode",
            capability: .command(
                intent: .custom(verb: "generate-model-code", description: "Write generated model code into the target"),
                permissions: [.writeToPackageDirectory(reason: "Writes the generated Swift into <target>/Generated")]
            ),
            dependencies: [.target(name: "ModelwrightCLI")]
        ),
        // The CLI's commands that only read (validate, plan, check), with no permission to ask for.
        .plugin(
            name: "ModelwrightCommand",
            capability: .command(
                intent: .custom(
                    verb: "modelwright", description: "Validate or plan the targets' models, or check committed code")
            ),
            dependencies: [.target(name: "ModelwrightCLI")]
        ),
        // The CLI's commands that write into a model folder (lock, new-version).
        .plugin(
            name: "ModelwrightVersionsCommand",
            capability: .command(
                intent: .custom(
                    verb: "modelwright-versions", description: "Freeze released versions or start the next one"),
                permissions: [
                    .writeToPackageDirectory(reason: "Writes modelwright-lock.json or the next version file")
                ]
            ),
            dependencies: [.target(name: "ModelwrightCLI")]
        ),
        // The example model: an app-side library whose code the build plugin generates from Models/Trips.
        .target(name: "Trips", dependencies: ["Modelwright"], path: "Models/Trips", plugins: ["ModelwrightPlugin"]),
        // The seeded generator every test target and the fuzz campaign draw their cases from.
        .target(name: "ModelwrightTestSupport", path: "Tests/ModelwrightTestSupport"),
        // `TestEngine`: the behavioural suites of TripsTests and ModelwrightTests run once per engine
        // from one source; PostgreSQL joins where the package has its engine (see the end of this file).
        .target(
            name: "ModelwrightEngineTestSupport", dependencies: ["Modelwright", "ModelwrightTestSupport"],
            path: "Tests/ModelwrightEngineTestSupport"),
        .testTarget(
            name: "TripsTests",
            dependencies: [
                "Trips", "ModelwrightGenerator", "ModelwrightSchema", "ModelwrightCoreData", "ModelwrightTestSupport",
                // The prefetch tests count the statements SQLite runs with its trace hook.
                "CSQLite",
                // The behavioural suites run on every engine (see `TestEngine`).
                "ModelwrightEngineTestSupport",
            ],
            exclude: ["Golden"]
        ),
        .testTarget(
            name: "ModelwrightTests",
            dependencies: [
                "Modelwright", "CSQLite", "MigrationCrashProbe", "HistoryProbe", "StoreRaceProbe", "SyncDeviceProbe",
                "ModelwrightTestSupport", "ModelwrightEngineTestSupport",
                // The sync tests take `@sync(unique:)` rules from the front end's lowering.
                "ModelwrightSchema",
            ]),
        // A child process the crash-safety tests kill with SIGKILL in the middle of a migration.
        .executableTarget(
            name: "MigrationCrashProbe", dependencies: ["Modelwright", "CSQLite"], path: "Tests/MigrationCrashProbe"),
        // A second process on a shared store, for the persistent-history tests: it commits as
        // "widget" and is killed with SIGKILL in the middle of its commits.
        .executableTarget(name: "HistoryProbe", dependencies: ["Modelwright"], path: "Tests/HistoryProbe"),
        // One of several processes that open one store file at the same moment, for the tests
        // that each migration stage runs once and creation never fails, whoever wins the race.
        .executableTarget(
            name: "StoreRaceProbe", dependencies: ["Modelwright", "CSQLite"], path: "Tests/StoreRaceProbe"),
        // One sync device as its own process, for the multi-process convergence test: it writes to
        // its own store file and syncs over loopback HTTP with the server the test hosts, and the
        // test kills it with SIGKILL (mid-push, mid-pull, mid-commit) and starts it again.
        .executableTarget(
            name: "SyncDeviceProbe", dependencies: ["Modelwright", "ModelwrightTestSupport"],
            path: "Tests/SyncDeviceProbe"),
        // Core Data fixtures are read from their folder by path, like TripsTests' golden files.
        .testTarget(
            name: "ModelwrightSchemaTests",
            dependencies: [
                "ModelwrightSchema", "ModelwrightTestSupport",
                // The migration property suite runs on both engines (see `MigrationEngine`).
                "ModelwrightPostgres",
            ]),
        .testTarget(
            name: "ModelwrightCoreDataTests",
            dependencies: [
                "ModelwrightCoreData", "ModelwrightSchema", "ModelwrightGenerator", "ModelwrightTestSupport",
                // The store import's kill tests run the CLI as a child process and kill it.
                .target(name: "ModelwrightCLI"),
            ],
            exclude: ["Fixtures"]),
        .testTarget(
            name: "ModelwrightGeneratorTests", dependencies: ["ModelwrightGenerator", "ModelwrightTestSupport"]),
        .testTarget(name: "MustacheTests", dependencies: ["Mustache"]),
        .testTarget(
            name: "ModelwrightCLITests",
            dependencies: [.target(name: "ModelwrightCLI"), "ModelwrightTestSupport", "ResourceProbe"],
            exclude: ["Golden"]),
        // Runs a command and reports its own peak memory and CPU time, for the bounded-input test.
        .executableTarget(name: "ResourceProbe", path: "Tests/ResourceProbe"),
        // The fuzz campaign of issue 13: a runner that makes mutated models and Core Data files and
        // runs them through the tools' library calls, supervised in child processes so a crash or
        // a hang is recorded rather than fatal; the test target runs a CI-sized campaign.
        .executableTarget(
            name: "ModelwrightFuzz",
            dependencies: [
                "ModelwrightSchema", "ModelwrightCoreData", "ModelwrightGenerator", "Modelwright",
                "ModelwrightTestSupport",
            ],
            path: "Tests/ModelwrightFuzz"),
        .testTarget(name: "ModelwrightFuzzTests", dependencies: ["ModelwrightFuzz", "ModelwrightTestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

// The PostgreSQL engine (issue 27), which server code opts into: a library over the system's libpq,
// PostgreSQL's client library. Its targets exist only where libpq's header is installed (apt
// libpq-dev, brew libpq), so `swift build` and `swift test` of the core keep working on a machine
// without it; MODELWRIGHT_POSTGRES=0 leaves them out, =1 keeps them whatever the search finds.
let libpqHeaders = [
    "/usr/include/postgresql/libpq-fe.h", "/usr/include/libpq-fe.h", "/opt/homebrew/opt/libpq/include/libpq-fe.h",
    "/usr/local/opt/libpq/include/libpq-fe.h", "/usr/local/include/libpq-fe.h",
]
let postgresSetting = ProcessInfo.processInfo.environment["MODELWRIGHT_POSTGRES"]
if postgresSetting == "1" || (postgresSetting != "0" && libpqHeaders.contains(where: FileManager.default.fileExists)) {
    package.products.append(.library(name: "ModelwrightPostgres", targets: ["ModelwrightPostgres"]))
    package.targets += [
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"]), .brew(["libpq"])]),
        // Connections, a pool, notifications and the type map; the DDL is the runtime's.
        .target(name: "ModelwrightPostgres", dependencies: ["Modelwright", "CLibPQ"]),
        // Runs against a throwaway PostgreSQL cluster the tests start (skipped without the server).
        .testTarget(
            name: "ModelwrightPostgresTests",
            dependencies: [
                "ModelwrightPostgres", "Modelwright", "Trips", "ModelwrightTestSupport", "PostgresRaceProbe",
                // Red team 10 plans model text as `plan` does.
                "ModelwrightSchema",
            ]),
        // One of several processes that create a schema and count on one database at once.
        .executableTarget(
            name: "PostgresRaceProbe", dependencies: ["ModelwrightPostgres", "Modelwright", "Trips"],
            path: "Tests/PostgresRaceProbe"),
    ]
    // `plan --engine postgres` runs the migrator on a server; the tests start their cluster with the
    // engine's `ThrowawayCluster`, as `plan` does.
    for name in ["ModelwrightCLI", "ModelwrightTestSupport"] {
        if let target = package.targets.first(where: { $0.name == name }) {
            target.dependencies.append("ModelwrightPostgres")
            target.swiftSettings = (target.swiftSettings ?? []) + [.define("MODELWRIGHT_POSTGRES")]
        }
    }
    // The shared behavioural suites run on PostgreSQL too.
    if let engines = package.targets.first(where: { $0.name == "ModelwrightEngineTestSupport" }) {
        engines.dependencies.append("ModelwrightPostgres")
        engines.swiftSettings = (engines.swiftSettings ?? []) + [.define("MODELWRIGHT_POSTGRES")]
    }
    // The corpus end-to-end test opens its databases on PostgreSQL with the engine's own connection.
    if let trips = package.targets.first(where: { $0.name == "TripsTests" }) {
        trips.dependencies.append("ModelwrightPostgres")
        trips.swiftSettings = (trips.swiftSettings ?? []) + [.define("MODELWRIGHT_POSTGRES")]
    }
}
