/// One generated input: the files of a model folder or a Core Data bundle, the commands it goes
/// through, and the mutations that made it, so a failure can be told and made again.
struct FuzzInput: Sendable {
    /// Which front end the input feeds.
    enum Kind: String, Sendable {
        /// `.model` schema files, through `validate`, `plan` and `generate`.
        case schema
        /// A Core Data `contents` file, through `import-coredata` (then `generate` when it imports).
        case xml
    }

    /// One file of the input, by its path relative to the input's folder.
    struct File: Sendable {
        /// The path relative to the input's folder, such as `Trips/Trips.v3.model`.
        var path: String
        /// What the file holds.
        var bytes: [UInt8]
    }

    /// The input's number in its campaign.
    let index: Int
    /// Which front end the input feeds.
    let kind: Kind
    /// Every file to write before running the commands.
    var files: [File]
    /// The model folder (schema) or the Core Data bundle or version folder (XML), relative to the
    /// input's folder.
    var target: String
    /// The mutated schema file, which `validate` also checks on its own; `nil` for XML.
    var singleFile: String?
    /// What was done to the seed, in order, such as `seed Trips.v3.model` and `byteFlip(3 at 120)`.
    var mutations: [String]

    /// The commands the input goes through, as the CLI spells them (relative to the input folder).
    var commands: [String] {
        switch kind {
        case .schema:
            var commands = ["validate \(target)"]
            if let singleFile { commands.append("validate \(singleFile)") }
            return commands + ["plan \(target)", "generate \(target) --output out"]
        case .xml:
            return ["import-coredata \(target) --output imported", "generate imported --output out"]
        }
    }
}
