// swift-tools-version: 6.1
import Foundation
import PackageDescription

// An example sync server: Modelwright's SyncServer behind a Hummingbird route, in its own package so
// that Modelwright itself keeps zero dependencies. From this directory:
//
//     swift run SyncServerApp --port 8080                        # SQLite in ./sync-server.sqlite
//     swift run SyncServerApp --port 8080 --postgres postgresql://app@localhost/notes
//     swift run SyncDevices check --url http://127.0.0.1:8080/sync   # 3 devices, 2 users, over HTTP

// SwiftPM names a path dependency after its directory, so the clone's folder name (two levels up)
// is the package identity that `.product(name:package:)` and `.plugin(name:package:)` must use.
let modelwright = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().lastPathComponent

// Modelwright builds its PostgreSQL engine only where libpq's header is installed (see its
// Package.swift); the server offers `--postgres` exactly then.
let libpqHeaders = [
    "/usr/include/postgresql/libpq-fe.h", "/usr/include/libpq-fe.h", "/opt/homebrew/opt/libpq/include/libpq-fe.h",
    "/usr/local/opt/libpq/include/libpq-fe.h", "/usr/local/include/libpq-fe.h",
]
let postgresSetting = ProcessInfo.processInfo.environment["MODELWRIGHT_POSTGRES"]
let withPostgres =
    postgresSetting == "1" || (postgresSetting != "0" && libpqHeaders.contains(where: FileManager.default.fileExists))

let package = Package(
    name: "SyncServerExample",
    platforms: [.macOS(.v14), .iOS(.v17)],
    dependencies: [
        .package(path: "../.."),
        // Without its default traits Hummingbird leaves out swift-configuration, which this example
        // does not use: a smaller first build.
        .package(url: "https://github.com/hummingbird-project/hummingbird", exact: "2.28.1", traits: []),
        // Hummingbird's own dependency, named for the bound address the server prints.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
    ],
    targets: [
        // The model the server and the devices share: the build plugin generates its code from
        // Sources/Notes/Models on every build.
        .target(
            name: "Notes",
            dependencies: [.product(name: "Modelwright", package: modelwright)],
            plugins: [.plugin(name: "ModelwrightPlugin", package: modelwright)]
        ),
        // The server: a bearer token to a user, each user's notes as their scope, SyncServer.handle.
        .executableTarget(
            name: "SyncServerApp",
            dependencies: [
                "Notes", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
                + (withPostgres ? [.product(name: "ModelwrightPostgres", package: modelwright)] : []),
            swiftSettings: withPostgres ? [.define("MODELWRIGHT_POSTGRES")] : []
        ),
        // Devices over URLSessionSyncTransport: the CI check (3 devices converge, a second user sees
        // nothing of the first's) and the benchmarks (a burst of offline changes, a trickle).
        .executableTarget(name: "SyncDevices", dependencies: ["Notes"]),
    ],
    swiftLanguageModes: [.v6]
)
