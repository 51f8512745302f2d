import Foundation
import Modelwright
import ModelwrightSchema

/// Imports a Core Data model (every version of an `.xcdatamodeld`, or a bare `.xcdatamodel`) as
/// schema files, one `<Model>.v<N>.model` per version, numbered 1…N in the bundle's order.
///
/// ```swift
/// let bundle = try CoreDataBundle.open(path: "WooCommerce.xcdatamodeld")
/// let result = CoreDataImporter.importModel(bundle) { number, count, name in
///     print("importing version \(number) of \(count) (\(name))…")
/// }
/// try CoreDataImporter.write(result, to: "Models/WooCommerce")
/// ```
///
/// Modelwright's newest version is the current one. When `.xccurrentversion` names an older
/// version, the versions after it are drafts as far as Core Data is concerned: they are reported
/// and left out, unless ``Options/includesVersionsAfterCurrent`` asks for them, in which case the
/// newest of them becomes current.
package enum CoreDataImporter {
    /// How to import.
    package struct Options: Sendable {
        /// The model's name; by default the bundle's name, made a valid type name.
        package var modelName: String?
        /// Whether versions after Core Data's current version are imported too.
        package var includesVersionsAfterCurrent: Bool
        /// The folder the files will be written to, when known: the import then runs the front
        /// end on the folder as it will read once they are written, for ``ImportedModel/checked``.
        package var folder: String?

        /// Creates options.
        package init(modelName: String? = nil, includesVersionsAfterCurrent: Bool = false) {
            self.modelName = modelName
            self.includesVersionsAfterCurrent = includesVersionsAfterCurrent
        }
    }

    /// One schema file to write.
    package struct ImportedFile: Sendable, Equatable {
        /// Its name, `<Model>.v<N>.model`.
        package var name: String
        /// Its text.
        package var text: String
        /// The Core Data version it came from, such as `Model 37`.
        package var versionName: String
    }

    /// What an import gave.
    package struct ImportedModel: Sendable {
        /// The model's name in the schema files.
        package var modelName: String
        /// The files, version 1 first; empty when there were errors.
        package var files: [ImportedFile]
        /// Every problem and every construct that was not imported.
        package var diagnostics: [Diagnostic]
        /// The front end's result on ``Options/folder`` as it will read once the files are
        /// written (its other files and lock file included), when a folder was given and the
        /// import has no error: what `validate` will say of it.
        package var checked: FrontEndResult?

        /// What the Core Data store importer needs of every version (`<Model>.coredata-store.json`).
        package var storeModel = CoreDataStoreModel(versions: [])

        /// Whether any diagnostic is an error.
        package var hasErrors: Bool { diagnostics.contains { $0.severity == .error } }
    }

    /// Translates the versions of `bundle`, calling `progress` before each one.
    package static func importModel(
        _ bundle: CoreDataBundle,
        options: Options = Options(),
        progress: (_ number: Int, _ count: Int, _ versionName: String) -> Void = { _, _, _ in }
    ) -> ImportedModel {
        var diagnostics = bundle.notes
        var versions = bundle.versions
        let current = bundle.versions[bundle.currentIndex]
        let later = bundle.versions[(bundle.currentIndex + 1)...]
        if !later.isEmpty {
            if options.includesVersionsAfterCurrent {
                diagnostics.append(
                    Diagnostic(
                        severity: .warning,
                        message:
                            "Core Data's current version is '\(current.name)', but the versions after it are imported too, so the newest, '\(versions.last?.name ?? "")', is current in Modelwright",
                        path: bundle.path, location: nil))
            } else {
                versions = Array(bundle.versions[...bundle.currentIndex])
                for version in later {
                    diagnostics.append(
                        Diagnostic(
                            severity: .warning,
                            message:
                                "version '\(version.name)' comes after the current version '\(current.name)' and is not imported; pass --all-versions to import it (the newest version then becomes current)",
                            path: version.contentsPath, location: nil))
                }
            }
        }
        var models: [CoreDataModel] = []
        for read in readAll(versions) {
            switch read {
            case .success(let model):
                models.append(model)
            case .failure(let error):
                diagnostics.append(
                    Diagnostic(
                        severity: .error, message: error.message, path: error.path,
                        location: error.location.map { SourcePosition(line: $0.line, column: $0.column) }))
            }
        }
        var modelName = options.modelName ?? CoreDataNames.modelName(bundle.name)
        if let problem = NameRules.problem(withTypeName: modelName) {
            diagnostics.append(Diagnostic(severity: .error, message: problem, path: bundle.path, location: nil))
        }
        guard !diagnostics.contains(where: { $0.severity == .error }) else {
            return ImportedModel(modelName: modelName, files: [], diagnostics: diagnostics)
        }
        // Generated code has an `enum <Model>` beside a type per entity, so the two must differ.
        let entityNames = Set(models.flatMap { $0.entities.map { CoreDataNames.typeName($0.name) } })
        if entityNames.contains(modelName) || CoreDataNames.reservedTypeNames.contains(modelName) {
            let clash = modelName
            while entityNames.contains(modelName) || CoreDataNames.reservedTypeNames.contains(modelName) {
                modelName += "Model"
            }
            diagnostics.append(
                Diagnostic(
                    severity: .warning,
                    message:
                        "the model is named '\(modelName)' because '\(clash)' is \(entityNames.contains(clash) ? "one of its entities" : "a built-in type"); pass --name to choose another name",
                    path: bundle.path, location: nil))
        }
        var files: [ImportedFile] = []
        var perVersion: [[Diagnostic]] = []
        var previous: ImportedShape?
        var storeVersions: [CoreDataStoreModel.Version] = []
        let bundleName = URL(fileURLWithPath: bundle.path).lastPathComponent
        // Translation is sequential (each version's names depend on the previous one's); the
        // other cores compile each translated file for the migration blocks meanwhile.
        let compiled = ResultSlots<CoreDataMigrationBlocks.Version>(count: models.count)
        let compiling = DispatchGroup()
        for (index, model) in models.enumerated() {
            let number = index + 1
            let versionName = versions[index].name
            progress(number, models.count, versionName)
            let translated = CoreDataVersionTranslator.translate(
                model,
                modelName: modelName,
                number: number,
                header: "Imported from Core Data: version '\(versionName)' of \(bundleName).",
                previous: previous
            )
            perVersion.append(translated.diagnostics)
            previous = translated.shape
            storeVersions.append(
                CoreDataStoreFacts.version(of: model, named: versionName, number: number, shape: translated.shape))
            let file = ImportedFile(
                name: "\(modelName).v\(number).\(ModelSources.fileExtension)", text: translated.text,
                versionName: versionName)
            files.append(file)
            let path = options.folder.map { ModelSources.path(of: file.name, in: $0) } ?? file.name
            DispatchQueue.global().async(group: compiling) {
                compiled.set(CoreDataMigrationBlocks.version(of: file, at: path), at: index)
            }
        }
        compiling.wait()
        diagnostics += CoreDataWarningGroups.grouped(perVersion, versionNames: versions.map(\.name))
        let compiledVersions = compiled.values
        var result = ImportedModel(
            modelName: modelName,
            files: CoreDataMigrationBlocks.add(to: files, versions: compiledVersions.map(\.lowered)),
            diagnostics: diagnostics)
        result.storeModel = CoreDataStoreModel(versions: storeVersions)
        if let folder = options.folder {
            result.checked = check(result.files, in: folder, compiledWithoutBlocks: zip(files, compiledVersions))
        }
        return result
    }

    /// Runs the front end on `folder` as it will read once `final` is written into it. A file the
    /// migration blocks left as it was compiled is not resolved again (101 of WooCommerce's 117);
    /// the others, and the folder's other files, are.
    private static func check(
        _ final: [ImportedFile], in folder: String,
        compiledWithoutBlocks: some Sequence<(ImportedFile, CoreDataMigrationBlocks.Version)>
    ) -> FrontEndResult {
        var unchanged: [String: ResolvedFile] = [:]
        for (file, (compiledFile, version)) in zip(final, compiledWithoutBlocks) where file.text == compiledFile.text {
            unchanged[version.resolved.file.path] = version.resolved
        }
        let compiledByPath = unchanged
        let sources = ModelSources.read(
            folder,
            afterWriting: final.map { SourceFile(path: ModelSources.path(of: $0.name, in: folder), text: $0.text) })
        let resolved = sources.files.parallelMap { compiledByPath[$0.path] ?? ResolvedFile.compile($0) }
        return FrontEnd.run(resolved, of: sources)
    }

    /// Reads every version's XML, several at a time: parsing is most of an import's work, and
    /// each version's file is independent of the others. Results come back in version order.
    private static func readAll(_ versions: [CoreDataBundle.Version]) -> [Swift.Result<
        CoreDataModel, CoreDataReader.Failure
    >] {
        versions.parallelMap { version in
            Swift.Result<CoreDataModel, CoreDataReader.Failure> { () throws(CoreDataReader.Failure) in
                try CoreDataReader.read(version)
            }
        }
    }

    /// Writes the files of `result` into `folder`, creating it, and rewriting only files whose
    /// bytes change. Returns the names written; a newer version file left from an earlier import
    /// is reported, not deleted.
    package static func write(_ result: ImportedModel, to folder: String) throws(ConfinedFolder.Failure) -> (
        written: [String], stale: [String]
    ) {
        let output = try ConfinedFolder.open(folder, for: .writing)
        var outputs = result.files.map { ConfinedFolder.OutputFile(path: $0.name, text: $0.text) }
        if !result.files.isEmpty {
            outputs.append(
                ConfinedFolder.OutputFile(
                    path: FileNames.coreDataStoreModel(of: result.modelName),
                    text: CoreDataStoreFacts.text(of: result.storeModel)))
        }
        let written = try output.write(outputs)
        let expected = Set(result.files.map(\.name))
        let stale = try output.names().filter {
            $0.hasSuffix(".\(ModelSources.fileExtension)") && !expected.contains($0)
        }.sorted()
        return (written, stale)
    }
}
