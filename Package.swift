// swift-tools-version: 6.0
import PackageDescription

// Modelwright has no package dependencies: everything below comes from this package or
// from the Swift toolchain (Foundation, FoundationXML, Dispatch, Testing) and the system's SQLite.
let package = Package(
    name: "Modelwright",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Modelwright", targets: ["Modelwright"]),
        .library(name: "ModelwrightSchema", targets: ["ModelwrightSchema"]),
        .library(name: "ModelwrightGenerator", targets: ["ModelwrightGenerator"]),
        .executable(name: "modelwright", targets: ["ModelwrightCLI"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(name: "Modelwright", dependencies: ["CSQLite"]),
        .target(name: "ModelwrightSchema", dependencies: ["Modelwright"]),
        .target(name: "ModelwrightGenerator", dependencies: ["ModelwrightSchema", "Modelwright"]),
        .executableTarget(
            name: "ModelwrightCLI",
            dependencies: ["ModelwrightSchema", "ModelwrightGenerator"],
            path: "Sources/modelwright"
        ),
        .testTarget(name: "ModelwrightTests", dependencies: ["Modelwright"]),
        .testTarget(name: "ModelwrightSchemaTests", dependencies: ["ModelwrightSchema"]),
        .testTarget(name: "ModelwrightGeneratorTests", dependencies: ["ModelwrightGenerator"]),
        .testTarget(name: "ModelwrightCLITests", dependencies: ["ModelwrightCLI"]),
    ],
    swiftLanguageModes: [.v6]
)
