/// The front end in one place: a model's schema files in, every version checked, lowered into the
/// runtime's description and planned out. ``run(modelAt:)`` names every stage in order; each
/// stage consumes only what the stages before it produced.
///
/// ```
///  read ─────────▶ parse ──────▶ resolve ──────▶ check versions ──▶ lower ─────────▶ check checksums ─▶ plan
///  ModelSources    ParsedFile    ResolvedFile    CheckedVersions    LoweredVersion                      PlannedModel
/// ```
///
/// The generator's `Pipeline.run` runs this and goes on (render context, render, write); the
/// Core Data importer runs the same stages on the files it translates. Nothing else strings the
/// stages together.
package enum FrontEnd {
    /// Runs every stage on the model folder (or single schema file) at `path`; versions 1 through
    /// `releasing` count as released as the lock file's do (`modelwright lock` is releasing them).
    package static func run(modelAt path: String, releasing: Int? = nil) -> FrontEndResult {
        run(ModelSources.read(path), releasing: releasing)
    }

    /// Runs every stage after reading on `sources`: each file parsed and resolved (in
    /// parallel), then the versions checked, lowered and planned.
    package static func run(_ sources: ModelSources, releasing: Int? = nil) -> FrontEndResult {
        run(sources.files.parallelMap(ResolvedFile.compile), of: sources, releasing: releasing)
    }

    /// Runs the stages after resolving: `resolved` holds one resolved file for each file of
    /// `sources`, such as a tool that has just written and resolved them holds.
    package static func run(_ resolved: [ResolvedFile], of sources: ModelSources, releasing: Int? = nil)
        -> FrontEndResult
    {
        var diagnostics = ModelDiagnostics()
        // A released version cannot change: a rule newer than it is a warning there (the lock
        // check still refuses any edit of the file).
        let frozen = Set(sources.lock?.frozen.map(\.version) ?? [])
        let resolved = resolved.map { file in
            guard let version = file.graph?.version, frozen.contains(version) || version <= releasing ?? 0 else {
                return file
            }
            var file = file
            file.sink.relaxForReleasedVersion(
                "version \(version) is released (frozen in \(LockFile.fileName)), so this is a warning: "
                    + "its stores keep what they have; fix it in the next version")
            return file
        }
        guard let checked = CheckedVersions.check(resolved, of: sources, diagnostics: &diagnostics) else {
            return FrontEndResult(diagnostics: diagnostics)
        }
        let lowered = checked.versions.parallelMap(LoweredVersion.lower)
        guard VersionChecker.checkChecksums(lowered, of: sources, diagnostics: &diagnostics),
            let model = PlannedModel.plan(lowered, diagnostics: &diagnostics)
        else { return FrontEndResult(diagnostics: diagnostics) }
        return FrontEndResult(diagnostics: diagnostics, model: model)
    }

    /// Lowers one resolved file on its own, with no other version to check it against (the Core
    /// Data importer diffs each translated version against the one before it); `nil` when the
    /// file has an error.
    package static func lower(_ resolved: ResolvedFile) -> LoweredVersion? {
        resolved.validGraph.map { LoweredVersion.lower(CheckedVersions.Version(path: resolved.file.path, graph: $0)) }
    }
}

/// What a run of the ``FrontEnd`` gave: every diagnostic and, when no version has an error, the
/// planned model (each version's checked graph and lowered `SchemaDescription`, and each step's
/// plan).
package struct FrontEndResult: Sendable {
    /// Every problem found, file by file, in order.
    package let diagnostics: [Diagnostic]
    /// The planned model, when no version has an error.
    package let model: PlannedModel?

    /// The result of a run that produced `diagnostics` and, if it got that far, `model`.
    package init(diagnostics: ModelDiagnostics, model: PlannedModel? = nil) {
        self.diagnostics = diagnostics.all
        self.model = model
    }

    /// Whether any diagnostic is an error.
    package var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }
}
