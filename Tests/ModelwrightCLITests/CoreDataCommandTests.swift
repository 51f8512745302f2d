import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightCLI

/// `modelwright import-coredata` and `export-coredata`: progress, diagnostics as
/// `path:line:column`, write-if-changed, and exit codes 0 / 1 / 2.
@Suite(.heavy)
struct CoreDataCommandTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    private static let fixtures = root.appendingPathComponent("Tests/ModelwrightCoreDataTests/Fixtures")

    private static func run(_ arguments: [String]) -> (ExitCode, BufferConsole) {
        var console = BufferConsole()
        let code = ModelwrightCommand.run(arguments, console: &console)
        return (code, console)
    }

    private static func temporaryFolder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("coredata-cli-\(UUID().uuidString)")
    }

    @Test func importWritesOneFilePerVersionReportsProgressAndValidates() throws {
        let output = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: output) }
        let bundle = Self.fixtures.appendingPathComponent("SampleModel.xcdatamodeld").path
        let (code, console) = Self.run(["import-coredata", bundle, "--output", output.path, "--all-versions"])
        #expect(code == .success, "\(console.errors)")
        let expected = (1...3).map { "wrote \(output.appendingPathComponent("SampleModel.v\($0).model").path)" }
        #expect(console.output.split(separator: "\n").map(String.init) == expected)
        #expect(console.errors.contains("importing version 1 of 3 (SampleModel)…\n"))
        #expect(console.errors.contains("importing version 3 of 3 (SampleModel3)…\n"))
        #expect(
            console.errors.contains("SampleModel.xcdatamodel/contents:22:9: warning: 'preserveAfterDeletion=\"YES\"'"))
        #expect(!console.errors.contains("error:"))
        let v2 = try String(contentsOf: output.appendingPathComponent("SampleModel.v2.model"), encoding: .utf8)
        #expect(v2.contains("entity LuxuryCar: SportCar {\n    @renamed(from: ExpensiveSportCar)"))

        let (again, secondConsole) = Self.run(["import-coredata", bundle, "--output", output.path, "--all-versions"])
        #expect(again == .success)
        #expect(secondConsole.output.split(separator: "\n").allSatisfy { $0.hasPrefix("unchanged ") })
    }

    @Test func exportWritesABundleThatImportsBackAndRewritesNothingUnchanged() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let model = folder.appendingPathComponent("Model")
        let bundle = folder.appendingPathComponent("Trips.xcdatamodeld")
        let trips = Self.root.appendingPathComponent("Models/Trips").path
        let (code, console) = Self.run(["export-coredata", trips, "--output", bundle.path])
        #expect(code == .success, "\(console.errors)")
        #expect(console.output.contains("wrote \(bundle.path)/Trips 3.xcdatamodel/contents\n"))
        #expect(console.output.hasSuffix("wrote \(bundle.path)/.xccurrentversion\n"))
        // Trips uses what Core Data cannot hold: each is a warning at its place in the schema file.
        #expect(console.errors.contains("Trips.v3.model:"))
        #expect(console.errors.contains("warning: enum attribute 'User.role' is exported as its raw values (String)"))
        let contents = try String(
            contentsOf: bundle.appendingPathComponent("Trips 2.xcdatamodel/contents"), encoding: .utf8)
        #expect(contents.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<model type="))

        let (again, secondConsole) = Self.run(["export-coredata", trips, "--output", bundle.path])
        #expect(again == .success)
        #expect(secondConsole.output.split(separator: "\n").allSatisfy { $0.hasPrefix("unchanged ") })

        let (back, backConsole) = Self.run(["import-coredata", bundle.path, "--output", model.path])
        #expect(back == .success, "\(backConsole.errors)")
        #expect(FileManager.default.fileExists(atPath: model.appendingPathComponent("Trips.v3.model").path))
    }

    @Test func problemsInTheInputExitOne() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let version = folder.appendingPathComponent("Broken.xcdatamodeld/Broken.xcdatamodel")
        try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
        try Data("<?xml version=\"1.0\"?>\n<model>\n    <entity name=\"A\">\n</model>\n".utf8)
            .write(to: version.appendingPathComponent("contents"))
        let (code, console) = Self.run([
            "import-coredata", folder.appendingPathComponent("Broken.xcdatamodeld").path, "--output",
            folder.appendingPathComponent("Out").path,
        ])
        #expect(code == .invalidInput)
        #expect(console.errors.contains("Broken.xcdatamodel/contents:4:"))
        #expect(console.errors.contains("Broken.xcdatamodel/contents:4:1: error: </model> does not close <entity>"))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("Out").path))

        let (missing, missingConsole) = Self.run([
            "import-coredata", "/nonexistent/X.xcdatamodeld", "--output", "/tmp/x",
        ])
        #expect(missing == .invalidInput)
        #expect(missingConsole.errors == "/nonexistent/X.xcdatamodeld: error: no such file or folder\n")

        let brokenModel = folder.appendingPathComponent("Bad")
        try FileManager.default.createDirectory(at: brokenModel, withIntermediateDirectories: true)
        try Data("model Bad version 1\nentity A { b: Strin }\n".utf8).write(
            to: brokenModel.appendingPathComponent("Bad.v1.model"))
        let (exportCode, exportConsole) = Self.run([
            "export-coredata", brokenModel.path, "--output", folder.appendingPathComponent("Bad.xcdatamodeld").path,
        ])
        #expect(exportCode == .invalidInput)
        #expect(exportConsole.errors.contains("Bad.v1.model:2:15: error: unknown type 'Strin'"))
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("Bad.xcdatamodeld").path))
    }

    @Test func usageErrorsExitTwoAndHelpExplains() {
        #expect(Self.run(["import-coredata"]).0 == .usage)
        #expect(Self.run(["import-coredata", "X.xcdatamodeld"]).0 == .usage)
        #expect(Self.run(["import-coredata", "X.xcdatamodeld", "--output"]).0 == .usage)
        #expect(Self.run(["import-coredata", "X.xcdatamodeld", "--output", "o", "--strict"]).0 == .usage)
        #expect(Self.run(["export-coredata", "Models/Trips"]).0 == .usage)
        #expect(Self.run(["export-coredata", "Models/Trips", "--output", "Trips.momd"]).0 == .usage)
        let (code, console) = Self.run(["import-coredata", "--help"])
        #expect(code == .success)
        #expect(console.output.contains("USAGE: modelwright import-coredata <bundle.xcdatamodeld | model.xcdatamodel>"))
        #expect(
            Self.run(["export-coredata", "-h"]).1.output.contains(
                "USAGE: modelwright export-coredata <model folder> --output <Name.xcdatamodeld>"))
        #expect(
            Self.run(["--help"]).1.output.contains(
                "import-coredata <bundle.xcdatamodeld | model.xcdatamodel> --output <model folder>"))
    }

    @Test func malformedContentsExitOneWithALocatedErrorAndWriteNothing() throws {
        let cases: [(bytes: [UInt8], location: String)] = [
            (Array("<?xml?><model/>".utf8), ":1:1: error: the XML declaration has no version"),
            (
                Array("<?xml version=\"1.0\"?>\n<model><ent".utf8) + [0xFF] + Array("ity/></model>".utf8),
                ":2:12: error: invalid UTF-8"
            ),
            (Array("<!DOCTYPE m [<!ENTITY e \"x\">]><model/>".utf8), ":1:1: error: a document type declaration"),
        ]
        for (bytes, location) in cases {
            let folder = Self.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: folder) }
            let version = folder.appendingPathComponent("Bad.xcdatamodel")
            try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
            try Data(bytes).write(to: version.appendingPathComponent("contents"))
            let output = folder.appendingPathComponent("out")
            let (code, console) = Self.run(["import-coredata", version.path, "--output", output.path])
            #expect(code == .invalidInput)
            #expect(
                console.errors.contains(version.appendingPathComponent("contents").path + location), "\(console.errors)"
            )
            #expect(!FileManager.default.fileExists(atPath: output.path))
        }
    }

    /// Writes a bundle `Test.xcdatamodeld` into `folder` with the given versions' `contents`, each
    /// saved by the Xcode build given, and no `.xccurrentversion`.
    private static func makeBundle(in folder: URL, _ versions: [(name: String, build: String)]) throws -> URL {
        let bundle = folder.appendingPathComponent("Test.xcdatamodeld")
        for (name, build) in versions {
            let version = bundle.appendingPathComponent("\(name).xcdatamodel")
            try FileManager.default.createDirectory(at: version, withIntermediateDirectories: true)
            let contents = """
                <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
                <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="\(build)" systemVersion="23F79" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
                    <entity name="User" representedClassName="User" syncable="YES"><attribute name="name" attributeType="String"/></entity>
                </model>
                """
            try Data(contents.utf8).write(to: version.appendingPathComponent("contents"))
        }
        return bundle
    }

    @Test func aVersionXcode3SavedStopsTheImportUntilItIsSkipped() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try Self.makeBundle(in: folder, [("Test 2", "21754"), ("Test 3", "22758")])
        let legacy = bundle.appendingPathComponent("Test.xcdatamodel")
        try FileManager.default.createDirectory(at: legacy, withIntermediateDirectories: true)
        let archive = try PropertyListSerialization.data(
            fromPropertyList: ["$archiver": "NSKeyedArchiver", "$objects": ["$null"]], format: .binary, options: 0)
        try archive.write(to: legacy.appendingPathComponent("elements"))
        let output = folder.appendingPathComponent("Out")

        let (code, console) = Self.run(["import-coredata", bundle.path, "--output", output.path])
        #expect(code == .invalidInput)
        #expect(
            console.errors.hasPrefix(
                "\(legacy.path): error: version 'Test' was saved by Xcode 3 as a binary 'elements' archive"))
        #expect(console.errors.contains("pass --skip-version 'Test'"))
        #expect(!FileManager.default.fileExists(atPath: output.path))

        let (skipped, skippedConsole) = Self.run([
            "import-coredata", bundle.path, "--output", output.path, "--skip-version", "Test",
        ])
        #expect(skipped == .success, "\(skippedConsole.errors)")
        #expect(skippedConsole.errors.contains("\(legacy.path): warning: version 'Test' is skipped (--skip-version)"))
        #expect(skippedConsole.errors.contains("version order: Test 2, Test 3 (by name)\n"))
        #expect(skippedConsole.errors.contains("importing version 1 of 2 (Test 2)…"))
        #expect(
            skippedConsole.output.split(separator: "\n").map(String.init) == [
                "wrote \(output.appendingPathComponent("Test.v1.model").path)",
                "wrote \(output.appendingPathComponent("Test.v2.model").path)",
            ])
    }

    @Test func anAmbiguousOrderStopsTheImportAndAStatedOneIsFollowed() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try Self.makeBundle(
            in: folder, [("Old", "21754"), ("Old 2", "21754"), ("New v1", "21754"), ("New v2", "21754")])
        let output = folder.appendingPathComponent("Out")

        let (code, console) = Self.run(["import-coredata", bundle.path, "--output", output.path])
        #expect(code == .invalidInput)
        #expect(console.errors.hasPrefix("\(bundle.path): error: cannot tell the order of the versions"))
        #expect(console.errors.contains("pass --version-order"))
        #expect(!FileManager.default.fileExists(atPath: output.path))

        let list = folder.appendingPathComponent("order.txt")
        try Data("# oldest first\nOld\n  Old 2\n\nNew v1\nNew v2\n".utf8).write(to: list)
        for order in ["Old, Old 2,New v1 , New v2", "@\(list.path)"] {
            let (stated, statedConsole) = Self.run([
                "import-coredata", bundle.path, "--output", output.path, "--version-order", order,
            ])
            #expect(stated == .success, "\(statedConsole.errors)")
            #expect(
                statedConsole.errors.hasPrefix(
                    "version order: Old, Old 2, New v1, New v2 (as stated by --version-order)\nimporting version 1 of 4 (Old)…"
                ))
            let v4 = try String(contentsOf: output.appendingPathComponent("Test.v4.model"), encoding: .utf8)
            #expect(v4.contains("version 'New v2'"))
        }
    }

    @Test func badVersionListsAreUsageErrorsThatListTheVersions() throws {
        let folder = Self.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let bundle = try Self.makeBundle(in: folder, [("Test", "1"), ("Test 2", "2")])
        let output = folder.appendingPathComponent("Out").path
        let cases: [(arguments: [String], error: String)] = [
            (
                ["--version-order", "Test, Test 7"],
                "name 2 of --version-order is not a version of the bundle; its versions are: 'Test', 'Test 2'"
            ),
            (["--version-order", "Test"], "--version-order does not name 'Test 2'"),
            (["--version-order", " , "], "error: --version-order names no version"),
            (["--version-order", "@/nonexistent/order.txt"], "cannot read the file '/nonexistent/order.txt'"),
            (["--skip-version", "Test 9"], "--skip-version names 'Test 9', which is not a version of the bundle"),
            (["--skip-version"], "'--skip-version' needs a value"),
        ]
        for (arguments, error) in cases {
            let (code, console) = Self.run(["import-coredata", bundle.path, "--output", output] + arguments)
            #expect(code == .usage, "\(arguments)")
            #expect(console.errors.contains(error), "\(console.errors)")
            #expect(!FileManager.default.fileExists(atPath: output))
        }
        let help = Self.run(["import-coredata", "--help"]).1.output
        #expect(help.contains("--version-order <names>"))
        #expect(help.contains("--skip-version <name>"))
    }
}
