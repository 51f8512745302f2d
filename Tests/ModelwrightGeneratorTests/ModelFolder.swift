import Foundation
import ModelwrightGenerator
import ModelwrightSchema

/// A model written to a temporary folder, loaded and generated as the CLI would, for tests that
/// look at what the generator makes of a small schema.
struct ModelFolder {
    let url: URL

    /// Writes `files` (file name → contents) into a fresh temporary folder.
    init(_ files: [String: String]) throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("model-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        for (name, contents) in files {
            try Data(contents.utf8).write(to: url.appendingPathComponent(name))
        }
    }

    /// The loaded model, or the diagnostics that stopped it.
    func model() throws -> PlannedModel {
        let result = FrontEnd.run(modelAt: url.path)
        guard let model = result.model else {
            throw GeneratorError.noModel(result.diagnostics.map(\.description).joined(separator: "\n"))
        }
        return model
    }

    /// Every generated file's contents, by file name, from the default templates or those of
    /// `templates`, a folder of `<Name>.mustache` overrides.
    func generate(config: GeneratorConfig = GeneratorConfig(), templates: URL? = nil) throws -> [String: String] {
        let result = try Pipeline.run(
            Pipeline.Request(modelPath: url.path, goal: .render, config: config, templatesFolder: templates?.path))
        guard result.model != nil else {
            throw GeneratorError.noModel(result.diagnostics.map(\.description).joined(separator: "\n"))
        }
        let files = result.files
        return Dictionary(uniqueKeysWithValues: files.map { ($0.name, $0.contents) })
    }

    func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
