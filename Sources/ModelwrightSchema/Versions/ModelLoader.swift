import Foundation
import Modelwright

/// What loading a model gave: the model when it is valid, and every diagnostic either way.
package struct ModelLoadResult: Sendable {
    /// The model, when no version has an error.
    package let model: Model?
    /// Every problem found, file by file, in order.
    package let diagnostics: [Diagnostic]

    /// Whether any diagnostic is an error.
    package var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }
}

/// Reads a model from disk: a folder holding one `<Model>.v<N>.model` file per version, or a
/// single schema file.
package enum ModelLoader {
    /// The extension of schema files.
    package static let fileExtension = "model"
    /// Files compiled ahead of loading, by path: the Core Data importer compiles every version
    /// it writes, and loading the folder it wrote reuses each file still holding the same bytes.
    package struct CompiledFiles: Sendable {
        package var byPath: [String: (graph: EntityGraph?, sink: DiagnosticSink, version: ModelVersion?)] = [:]

        /// No files.
        package init() {}
    }

    /// Loads every version in a model folder, or the one version in a schema file.
    package static func load(path: String) -> ModelLoadResult {
        load(path: path, reusing: CompiledFiles())
    }

    /// The path of a file in a folder, as loading the folder spells it.
    package static func path(of name: String, in folder: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// ``load(path:)``, reusing the files in `compiled` whose bytes are those on disk.
    package static func load(path: String, reusing compiled: CompiledFiles) -> ModelLoadResult {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return failure(path, "no such file or folder")
        }
        guard isDirectory.boolValue else {
            return load(files: [path], checkingVersions: false, reusing: compiled)
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            return failure(path, "cannot read the folder: \(error.localizedDescription)")
        }
        let files = names.filter { $0.hasSuffix("." + fileExtension) }.sorted().map { Self.path(of: $0, in: path) }
        guard !files.isEmpty else {
            return failure(
                path, "the folder holds no '.\(fileExtension)' files; name each version '<Model>.v<N>.\(fileExtension)'"
            )
        }
        return load(files: files, checkingVersions: true, folder: path, reusing: compiled)
    }

    private static func load(
        files: [String], checkingVersions: Bool, folder: String? = nil, reusing known: CompiledFiles
    ) -> ModelLoadResult {
        var diagnostics: [Diagnostic] = []
        var compiled: [(graph: EntityGraph, sink: DiagnosticSink)] = []
        var lowered: [String: ModelVersion] = [:]
        // Files are read and compiled in parallel (a long history has a hundred of them), then
        // gathered in file order, so diagnostics come out the same on every run.
        let outcomes = files.parallelMap { compileFile($0, reusing: known) }
        for outcome in outcomes {
            switch outcome {
            case .problem(let diagnostic): diagnostics.append(diagnostic)
            case .compiled(let graph?, let sink, let version) where !sink.hasErrors:
                compiled.append((graph, sink))
                lowered[sink.file.path] = version
            case .compiled(_, let sink, _): diagnostics += sink.diagnostics
            }
        }
        compiled.sort { $0.graph.version < $1.graph.version }
        var sinks =
            checkingVersions
            ? VersionChecker.check(compiled, isComplete: compiled.count == files.count) : compiled.map(\.sink)
        guard !diagnostics.contains(where: { $0.severity == .error }), !sinks.contains(where: \.hasErrors),
            let first = compiled.first
        else {
            return ModelLoadResult(model: nil, diagnostics: diagnostics + sinks.flatMap(\.diagnostics))
        }
        let versions = compiled.map { (path: $0.sink.file.path, graph: $0.graph, known: lowered[$0.sink.file.path]) }
            .parallelMap { version in
                version.known
                    ?? ModelVersion(
                        path: version.path, graph: version.graph, schema: SchemaLowering.lower(version.graph))
            }
        if let folder {
            let (lock, problem) = LockFile.read(folder: folder)
            if let problem { diagnostics.append(problem) }
            if let lock { diagnostics += checkFrozen(versions, lock: lock, sinks: &sinks, folder: folder) }
        }
        // Stages are keyed by checksum. Adjacent versions with one checksum are one store version,
        // as Core Data versions with equal hashes are; the same checksum further apart is ambiguous.
        // A lone version has nothing to be confused with, and is not waited for: its checksum is
        // still being computed in the background, for the generator.
        var seenChecksums: [SchemaChecksum: Int] = [:]
        for (index, version) in versions.enumerated() where versions.count > 1 {
            let checksum = version.checksum
            if index > 0, versions[index - 1].checksum == checksum {
                sinks[index].warning(
                    "version \(version.number) has the same structure as version \(version.number - 1) (checksum \(checksum)): a store of either opens as the other and this step migrates nothing; if the data must change, change the structure or add '@coreData(versionHashModifier: \"…\")' to what changed",
                    at: version.graph.headerRange.start)
            } else if let earlier = seenChecksums[checksum] {
                sinks[index].error(
                    "version \(version.number) has the same structure as version \(earlier) (checksum \(checksum)), but the versions between differ, so a store with that checksum could be either; change something that shapes the store",
                    at: version.graph.headerRange.start)
            }
            seenChecksums[checksum] = version.number
        }
        guard !sinks.contains(where: \.hasErrors) else {
            return ModelLoadResult(model: nil, diagnostics: diagnostics + sinks.flatMap(\.diagnostics))
        }
        // Each step is planned on its own (each runs its own shadow check), so they run in parallel.
        let sinksBefore = sinks
        let freshSchemas = FreshSchemaCache()
        let planned = Array(versions.indices.dropFirst()).parallelMap { index in
            var sink = sinksBefore[index]
            let step = MigrationPlanner.plan(
                from: versions[index - 1], to: versions[index], sink: &sink, freshSchemas: freshSchemas)
            return (step, sink)
        }
        let steps = planned.map(\.0)
        for (index, entry) in zip(versions.indices.dropFirst(), planned) {
            sinks[index] = entry.1
        }
        diagnostics += sinks.flatMap(\.diagnostics)
        guard !diagnostics.contains(where: { $0.severity == .error }) else {
            return ModelLoadResult(model: nil, diagnostics: diagnostics)
        }
        return ModelLoadResult(
            model: Model(name: first.graph.modelName, versions: versions, steps: steps), diagnostics: diagnostics)
    }

    /// Reports every frozen version whose file changed or disappeared.
    private static func checkFrozen(
        _ versions: [ModelVersion], lock: LockFile, sinks: inout [DiagnosticSink], folder: String
    ) -> [Diagnostic] {
        var missing: [Diagnostic] = []
        let lockPath = (folder.hasSuffix("/") ? folder : folder + "/") + LockFile.fileName
        // By number, not a search per frozen version: a lock file may list any number of them.
        var indexByNumber: [Int: Int] = [:]
        for (index, version) in versions.enumerated() {
            indexByNumber[version.number] = indexByNumber[version.number] ?? index
        }
        var unreported = 0
        for frozen in lock.frozen {
            guard let index = indexByNumber[frozen.version] else {
                guard missing.count < DiagnosticSink.errorLimit else {
                    unreported += 1
                    continue
                }
                missing.append(
                    Diagnostic(
                        severity: .error,
                        message:
                            "version \(frozen.version) is frozen in the lock file, but its file '\(VersionChecker.fileName(model: lock.model, version: frozen.version))' is missing; released versions must stay, so stores created with them can be migrated",
                        path: lockPath, location: nil))
                continue
            }
            let checksum = versions[index].checksum.hexDigits
            guard checksum != frozen.checksum else { continue }
            let header = versions[index].graph.headerRange.start
            sinks[index].error(
                "version \(frozen.version) is frozen (released): \(LockFile.fileName) records checksum \(frozen.checksum), but this file now has checksum \(checksum); stores created with the released version would no longer open",
                at: header,
                notes: [
                    (
                        "undo the change here and make it in a new version instead: 'modelwright new-version \(folder)' starts version \((versions.last?.number ?? 0) + 1) as a copy of the current one",
                        header
                    )
                ]
            )
        }
        if unreported > 0 {
            missing.append(
                Diagnostic(
                    severity: .error,
                    message: "\(unreported) more frozen versions have no file; stopped reporting them",
                    path: lockPath, location: nil))
        }
        return missing
    }

    /// What reading and compiling one file gave.
    private enum FileOutcome: Sendable {
        case problem(Diagnostic)
        /// The graph and sink, and the version when one compiled ahead was reused.
        case compiled(EntityGraph?, DiagnosticSink, ModelVersion?)
    }

    private static func compileFile(_ path: String, reusing compiled: CompiledFiles) -> FileOutcome {
        // Read through a descriptor checked first: a FIFO or device named like a schema file
        // would block or never end, and a huge file is refused before it is read.
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path, limit: SchemaPipeline.maximumFileSize)
        } catch {
            let message =
                switch error {
                case .cannotOpen, .cannotRead: "cannot read the file"
                case .notARegularFile: "not a regular file (a folder, a FIFO or a device); a schema file is a text file"
                case .tooLarge(let size):
                    "the file is \(size) bytes; a schema file may hold at most \(SchemaPipeline.maximumFileSize) bytes (16 MiB)"
                }
            // A file too large to read is located at its start, where the reading stopped.
            let start: SourcePosition? =
                if case .tooLarge = error { SourcePosition(line: 1, column: 1) } else { nil }
            return .problem(Diagnostic(severity: .error, message: message, path: path, location: start))
        }
        // Compiling is a function of the path and the bytes, so a match is what compiling would give.
        if let known = compiled.byPath[path], known.sink.file.bytes == bytes {
            return .compiled(known.graph, known.sink, known.version)
        }
        let (graph, sink) = SchemaPipeline.compile(SourceFile(path: path, bytes: bytes))
        return .compiled(graph, sink, nil)
    }

    private static func failure(_ path: String, _ message: String) -> ModelLoadResult {
        ModelLoadResult(
            model: nil, diagnostics: [Diagnostic(severity: .error, message: message, path: path, location: nil)])
    }
}
