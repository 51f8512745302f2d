import ModelwrightSchema

extension RenderedFile {
    /// The pipeline's write stage: writes the rendered files into `folder` as one set, through the
    /// one writer every tool uses (``ConfinedFolder``), so they stay inside the folder, replace the
    /// old set together, and are rewritten only when their bytes change.
    /// - Returns: the names of the files written, in the order given.
    @discardableResult
    package static func write(_ files: [RenderedFile], to folder: String) throws(ConfinedFolder.Failure) -> [String] {
        try ConfinedFolder.open(folder, for: .writing).write(
            files.map { ConfinedFolder.OutputFile(path: $0.name, text: $0.contents) })
    }
}
