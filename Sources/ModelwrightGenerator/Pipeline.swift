import Foundation
import ModelwrightSchema

/// Modelwright in one function: a model's schema files in, the Swift an app compiles against
/// out. ``run(_:)`` names every stage in order; each stage produces the type named after it.
///
/// ```
///  read ─────────▶ parse ──────▶ resolve ──────▶ check versions ──▶ lower ─────────▶ check checksums ─▶ plan
///  ModelSources    ParsedFile    ResolvedFile    CheckedVersions    LoweredVersion                      PlannedModel
///
///  ─▶ build render context ─▶ render ───────▶ write
///     RenderContext           RenderedFile     (files written)
/// ```
///
/// The front end (read … plan) is `FrontEnd` in `ModelwrightSchema`, a folder per stage; this
/// function runs it and extends it with the back end (context, render, write). The CLI calls
/// this function for every command that reads a model, the plugins run the CLI, and the tests
/// call it; `validate`, `plan`, `lock` and `export-coredata` stop after planning
/// (``Goal/plan``), `generate --check` after rendering.
public enum Pipeline {
    /// How far a run goes.
    public enum Goal: Sendable, Equatable {
        /// Check every version and plan every step: what `validate` reports.
        case plan
        /// Also render the generated files, without writing them.
        case render
        /// Also write the rendered files into a folder, leaving unchanged files untouched.
        case write(to: String)
    }

    /// Runs the pipeline on the model folder (or single schema file) at `path`.
    /// - Parameters:
    ///   - path: a folder of `<Model>.v<N>.model` files, or one schema file.
    ///   - goal: the last stage to run.
    ///   - configPath: the generator's config file; without it, one in the model folder or the
    ///     folder above it is used if present.
    ///   - templatesFolder: a folder of `<Name>.mustache` files that replace the default templates.
    /// - Returns: every diagnostic, and the files rendered and written; no file is rendered or
    ///   written when a diagnostic is an error.
    /// - Throws: ``GeneratorError`` for a bad config file or template, or an error writing files.
    public static func run(
        modelAt path: String, through goal: Goal = .plan, configPath: String? = nil, templatesFolder: String? = nil
    ) throws -> PipelineResult {
        try run(Request(modelPath: path, goal: goal, configPath: configPath, templatesFolder: templatesFolder))
    }

    /// One run's input.
    package struct Request: Sendable {
        /// The model folder or schema file.
        package var modelPath: String
        /// The last stage to run.
        package var goal: Goal = .plan
        /// The config file, if given.
        package var configPath: String?
        /// A configuration to use in place of any file.
        package var config: GeneratorConfig?
        /// The template overrides folder, if given.
        package var templatesFolder: String?
        /// Versions 1 through this one count as released (see `FrontEnd.run(modelAt:releasing:)`).
        package var releasing: Int?

        /// A request for the model at `modelPath`.
        package init(
            modelPath: String, goal: Goal = .plan, configPath: String? = nil, config: GeneratorConfig? = nil,
            templatesFolder: String? = nil
        ) {
            self.modelPath = modelPath
            self.goal = goal
            self.configPath = configPath
            self.config = config
            self.templatesFolder = templatesFolder
        }
    }

    /// Runs every stage of `request`, in order: the front end (`FrontEnd.run(modelAt:)`,
    /// read … plan), then the back end.
    package static func run(_ request: Request) throws -> PipelineResult {
        let front = FrontEnd.run(modelAt: request.modelPath, releasing: request.releasing)
        guard let model = front.model, request.goal != .plan else { return PipelineResult(front) }

        let config = try request.config ?? GeneratorConfig.load(explicit: request.configPath, near: request.modelPath)
        let templates = try TemplateSet.load(
            overrides: config.templates, within: config.templateFolder, folder: request.templatesFolder)
        let context = try RenderContext(model: model, config: config)
        let rendered = try RenderedFile.render(context, with: templates, model: model.name)
        guard case .write(let folder) = request.goal else {
            return PipelineResult(front, files: rendered)
        }
        let written = try RenderedFile.write(rendered, to: folder)
        return PipelineResult(front, files: rendered, written: written)
    }
}

/// What a run of the ``Pipeline`` gave.
public struct PipelineResult: Sendable {
    /// Every problem found, file by file, in order.
    public let diagnostics: [Diagnostic]
    /// The planned model, when no version has an error.
    public let model: PlannedModel?
    /// The rendered files, when the run went that far.
    public let files: [RenderedFile]
    /// The names of the files written because their contents changed, in the order rendered.
    public let written: [String]

    init(_ front: FrontEndResult, files: [RenderedFile] = [], written: [String] = []) {
        self.diagnostics = front.diagnostics
        self.model = front.model
        self.files = files
        self.written = written
    }

    /// Whether any diagnostic is an error.
    public var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }
}
