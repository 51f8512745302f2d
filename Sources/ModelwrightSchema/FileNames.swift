/// The names of the files Modelwright reads and writes, written once.
///
/// The schema front end, the generator and both plugins compile this one file: the generator
/// and the plugins through symbolic links to it, because a plugin cannot depend on a library.
/// So the build plugin declares exactly the outputs `generate` writes, and every tool names the
/// same config and lock files.
enum FileNames {
    /// The extension of schema files: `Trips.v3.model` is version 3 of the model `Trips`.
    static let versionExtension = "model"
    /// The lock file beside a model's versions, recording the released (frozen) ones.
    static let lock = "modelwright-lock.json"
    /// The generator's config file, in the model folder or the target folder above it.
    static let config = "modelwright-config.json"
    /// The generated files' kinds, one per template, in the order they are rendered.
    static let outputKinds = ["Records", "Queries", "Schema", "Migrations"]

    /// The Core Data facts `import-coredata` keeps beside a model's versions, for importing an app's
    /// Core Data store (the runtime's `CoreDataStoreModel`, as JSON): `Trips.coredata-store.json`.
    static func coreDataStoreModel(of model: String) -> String {
        "\(model).coredata-store.json"
    }

    /// The files generated for a model, such as `Trips+Records.swift`.
    static func outputs(forModel model: String) -> [String] {
        outputKinds.map { "\(model)+\($0).swift" }
    }

    /// The name version `number` of `model` has in its folder, such as `Trips.v3.model`.
    static func version(_ number: Int, of model: String) -> String {
        "\(model).v\(number).\(versionExtension)"
    }
}
