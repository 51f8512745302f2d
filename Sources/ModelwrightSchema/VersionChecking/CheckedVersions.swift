/// What the check-versions stage produces: the versions of one model in version order, each
/// with a graph and no error, and (for a folder) checked against each other by ``VersionChecker``.
package struct CheckedVersions: Sendable {
    /// One version that passed.
    package struct Version: Sendable {
        /// The file it came from.
        package let path: String
        /// Its entity graph.
        package let graph: EntityGraph
    }

    /// The versions, oldest first.
    package let versions: [Version]

    /// Checks the resolved files of `sources` as versions of one model; `nil` when any file or
    /// check has an error, which `diagnostics` then holds.
    package static func check(
        _ files: [ResolvedFile], of sources: ModelSources, diagnostics: inout ModelDiagnostics
    ) -> CheckedVersions? {
        diagnostics.others += sources.problems
        var passed: [(graph: EntityGraph, file: ResolvedFile)] = []
        for file in files {
            if let graph = file.validGraph {
                passed.append((graph, file))
            } else {
                diagnostics.others += file.diagnostics
            }
        }
        passed.sort { $0.graph.version < $1.graph.version }
        // A single file has no other versions to be checked against.
        diagnostics.versions =
            sources.folder == nil
            ? passed.map(\.file.sink)
            : VersionChecker.check(
                passed.map { ($0.graph, $0.file.sink) }, isComplete: passed.count == sources.listedCount)
        guard !diagnostics.hasErrors, !passed.isEmpty else { return nil }
        return CheckedVersions(versions: passed.map { Version(path: $0.file.file.path, graph: $0.graph) })
    }
}
