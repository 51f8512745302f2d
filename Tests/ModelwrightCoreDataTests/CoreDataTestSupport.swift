import Foundation
import ModelwrightGenerator
import ModelwrightSchema
import Testing

@testable import ModelwrightCoreData

/// Fixtures, the shared corpus, and temporary bundles for the Core Data tests.
enum CoreDataTestSupport {
    /// The small bundles copied into this repository, so some import tests run in every clone.
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    /// `../shared/corpus` beside the package: real model histories, present on the team's machines
    /// but not in a user's clone.
    static let corpus = packageRoot.deletingLastPathComponent().appendingPathComponent("shared/corpus")

    /// Whether the corpus is there; the corpus tests are skipped when it is not.
    static var corpusIsAvailable: Bool {
        FileManager.default.fileExists(atPath: corpus.appendingPathComponent("README.md").path)
    }

    /// Every Core Data model in the corpus: each `.xcdatamodeld`, and each `.xcdatamodel` outside one.
    static var corpusModels: [String] {
        guard let owners = try? FileManager.default.contentsOfDirectory(atPath: corpus.path) else { return [] }
        return owners.sorted().flatMap { owner -> [String] in
            let folder = corpus.appendingPathComponent(owner)
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
            return names.sorted().filter { $0.hasSuffix(".xcdatamodeld") || $0.hasSuffix(".xcdatamodel") }.map {
                folder.appendingPathComponent($0).path
            }
        }
    }

    /// A fresh temporary folder path (not created), to be removed by the caller.
    static func temporaryFolder(_ name: String = "coredata") -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("modelwright-\(name)-\(UUID().uuidString)")
    }

    /// Writes a bundle `<name>.xcdatamodeld` with the given versions' `contents`, and an optional
    /// `.xccurrentversion` text, into a temporary folder; returns the bundle's path.
    static func makeBundle(
        _ name: String = "Test", versions: [String: String], currentVersionFile: String? = nil
    ) throws -> URL {
        let bundle = temporaryFolder().appendingPathComponent("\(name).xcdatamodeld")
        for (version, xml) in versions {
            let folder = bundle.appendingPathComponent("\(version).xcdatamodel")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data(xml.utf8).write(to: folder.appendingPathComponent("contents"))
        }
        if let currentVersionFile {
            try Data(currentVersionFile.utf8).write(to: bundle.appendingPathComponent(".xccurrentversion"))
        }
        return bundle
    }

    /// A `.xccurrentversion` plist naming `version`, or holding an empty dictionary when `nil`.
    static func currentVersion(_ version: String?) -> String {
        let body =
            version.map {
                "<dict>\n\t<key>_XCCurrentVersionName</key>\n\t<string>\($0).xcdatamodel</string>\n</dict>"
            } ?? "<dict/>"
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            \(body)
            </plist>
            """
    }

    /// A `contents` file holding the given entity elements.
    static func contents(_ body: String) -> String {
        """
        <?xml version="1.0" encoding="UTF-8" standalone="yes"?>
        <model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0" lastSavedToolsVersion="22758" systemVersion="23F79" minimumToolsVersion="Automatic" sourceLanguage="Swift" userDefinedModelVersionIdentifier="">
        \(body)
        </model>
        """
    }

    /// An import of `path` written to a temporary model folder, and that folder loaded.
    struct Imported {
        var result: CoreDataImporter.ImportedModel
        var folder: URL
        var loaded: FrontEndResult

        /// The text of version `number`.
        func text(_ number: Int) -> String {
            result.files.first { $0.name.hasSuffix(".v\(number).model") }?.text ?? ""
        }

        /// The warnings, each as `<file name>:line:column: message`.
        var warnings: [String] {
            result.diagnostics.filter { $0.severity == .warning }.map { diagnostic in
                let components = diagnostic.path.split(separator: "/")
                let file = components.suffix(2).joined(separator: "/")
                return "\(file):\(diagnostic.location.map(\.description) ?? "-"): \(diagnostic.message)"
            }
        }
    }

    static func importModel(
        _ path: String, options: CoreDataImporter.Options = .init(),
        sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) throws -> Imported {
        let bundle = try CoreDataBundle.open(path: path)
        let folder = temporaryFolder("import")
        var options = options
        options.folder = options.folder ?? folder.path
        let result = CoreDataImporter.importModel(bundle, options: options)
        #expect(
            !result.hasErrors, "import errors: \(result.diagnostics.filter { $0.severity == .error })",
            sourceLocation: sourceLocation)
        _ = try CoreDataImporter.write(result, to: folder.path)
        let loaded = FrontEnd.run(modelAt: folder.path)
        if options.folder == folder.path, !result.hasErrors {
            expectSameCheck(result.checked, loaded, sourceLocation: sourceLocation)
        }
        return Imported(result: result, folder: folder, loaded: loaded)
    }

    /// Expects what the import checked of its folder before writing it (`ImportedModel.checked`)
    /// to be what loading the written folder gives: the same diagnostics, the same versions with
    /// the same checksums, the same planned steps.
    static func expectSameCheck(
        _ checked: FrontEndResult?, _ loaded: FrontEndResult, sourceLocation: Testing.SourceLocation = #_sourceLocation
    ) {
        #expect(
            checked?.diagnostics.map(\.description) == loaded.diagnostics.map(\.description),
            sourceLocation: sourceLocation)
        #expect(
            checked?.model?.versions.map { "\($0.path) \($0.checksum)" }
                == loaded.model?.versions.map { "\($0.path) \($0.checksum)" },
            sourceLocation: sourceLocation)
        #expect(
            checked?.model?.steps.map { $0.operations.map(\.description) }
                == loaded.model?.steps.map { $0.operations.map(\.description) },
            sourceLocation: sourceLocation)
    }
}

/// The package's root folder, found from this file's path.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()
