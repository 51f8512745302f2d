import ModelwrightSchema

/// Writes, for each imported version step, the migration block the planner needs: Core Data
/// migrated the step either lightweight (dropping removed data silently) or with a mapping model
/// the bundle does not hold, so the import says so explicitly.
///
/// - Data the step drops gets a `lossy Entity.property` line: Core Data's lightweight migration
///   drops it too.
/// - A change only the app's code can make (a new required attribute without a default, a type
///   change) gets one custom stage for the step, `toVersion<N>`, which the app implements, as
///   WooCommerce wrote mapping models for such steps.
enum CoreDataMigrationBlocks {
    /// One translated file taken through the front end alone: resolved, and lowered unless it has
    /// errors (then its steps get no block).
    struct Version: Sendable {
        /// The file resolved.
        let resolved: ResolvedFile
        /// Its version lowered, when it has no error.
        let lowered: LoweredVersion?
    }

    /// Adds the blocks to `files`; `versions` holds each file already lowered by ``version(of:at:)``,
    /// when the caller had a core to spare for it.
    static func add(to files: [CoreDataImporter.ImportedFile], versions: [LoweredVersion?]? = nil) -> [CoreDataImporter
        .ImportedFile]
    {
        var result = files
        // Versions compile, and steps diff, independently of each other: both run in parallel
        // (a long history has a hundred of each), then the blocks are added in order.
        let versions = versions ?? files.parallelMap { version(of: $0, at: $0.name).lowered }
        let unaccounted = Array(versions.indices).parallelMap { index in
            guard index > 0, let previous = versions[index - 1], let version = versions[index] else {
                return [(change: SchemaChange, lost: (entity: String, property: String?)?)]()
            }
            return MigrationPlanner.unaccounted(from: previous, to: version)
        }
        for (index, file) in files.enumerated() {
            guard index > 0, let previous = versions[index - 1], let version = versions[index] else { continue }
            // A block an export kept in the model's userInfo is the one the schema was written with.
            guard version.graph.migration == nil else { continue }
            let needed = unaccounted[index]
            guard !needed.isEmpty else { continue }
            let from = files[index - 1].versionName
            var lines = [
                "",
                "/// Core Data migrated '\(SchemaText.commentText(from))' to '\(SchemaText.commentText(file.versionName))' "
                    + "with a mapping model or by dropping data:",
                "/// these lines say so, and the app implements what Core Data's mapping did.",
                "migration from \(previous.number) {",
            ]
            let custom = needed.filter { $0.change.kind == .needsDefault || $0.change.kind == .needsCustomStage }
            if !custom.isEmpty {
                for entry in custom {
                    lines.append(
                        "    /// Needed by: \(SchemaText.commentText(entry.change.summary)) (\(entry.change.kind.rawValue))."
                    )
                }
                let description = "Convert the data as Core Data's mapping from '\(from)' to '\(file.versionName)' did"
                lines.append("    custom toVersion\(version.number) \(SchemaText.stringLiteral(description))")
            }
            var accepted: Set<String> = []
            for entry in needed where entry.change.kind == .lossy {
                guard let lost = entry.lost else { continue }
                let target = [lost.entity, lost.property].compactMap { $0 }.joined(separator: ".")
                guard accepted.insert(target).inserted else { continue }
                let reason = "\(entry.change.summary): dropped by Core Data's migration from '\(from)'"
                lines.append("    lossy \(target) \(SchemaText.stringLiteral(reason))")
            }
            lines.append("}")
            result[index].text += lines.joined(separator: "\n") + "\n"
        }
        return result
    }

    /// An imported file resolved at `path` and lowered on its own, through the front end.
    static func version(of file: CoreDataImporter.ImportedFile, at path: String) -> Version {
        let resolved = ResolvedFile.compile(SourceFile(path: path, text: file.text))
        return Version(resolved: resolved, lowered: FrontEnd.lower(resolved))
    }
}
