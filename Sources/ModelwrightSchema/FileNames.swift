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

    /// What a name in a model folder says about it, as a version file: `Trips.v3.model` is one,
    /// `Trips.v3.Model` is one misspelt (read, and the version check asks for the exact name),
    /// `Trips.v3.mdl` and `Trips.v3.model.bak` are named like one but not read.
    enum VersionFileName: Equatable {
        /// A schema file (its extension is `model` in any case), which the folder reader reads.
        case schema
        /// Named `<Model>.v<N>` and something else: `expected` is the name it would have as a
        /// version; `isBackup` when the rest looks like an editor's or a tool's backup.
        case lookalike(expected: String, isBackup: Bool)
        /// Any other file.
        case unrelated
    }

    /// The suffixes of backup copies: `Trips.v3.model.bak`, `Trips.v3.model~`.
    private static let backupExtensions: Set<String> = ["bak", "backup", "old", "orig", "rej", "save", "swp", "tmp"]

    /// Classifies the name of a file in a model folder (see ``VersionFileName``).
    /// - Parameters:
    ///   - name: the file's name.
    ///   - models: the model names the folder's schema files spell; one matching the name's
    ///     model in another case is the one `expected` uses (`trips.v3.mdl` beside
    ///     `Trips.v1.model` is to be `Trips.v3.model`).
    /// - Returns: what the name is as a version file.
    static func versionFileName(_ name: String, models: [String] = []) -> VersionFileName {
        if name.lowercased().hasSuffix("." + versionExtension) { return .schema }
        guard let (written, number, _) = versionPrefix(of: name) else { return .unrelated }
        let model = models.first { $0.lowercased() == written.lowercased() } ?? String(written)
        let lastExtension = name.split(separator: ".").last.map { $0.lowercased() } ?? ""
        let isBackup = name.hasSuffix("~") || backupExtensions.contains(lastExtension)
        return .lookalike(expected: "\(model).v\(number).\(versionExtension)", isBackup: isBackup)
    }

    /// The version number a name starting `<Model>.v<N>` (any case) says, such as 3 for
    /// `Trips.v3.model` or `trips.V3.mdl`; `nil` for any other name.
    static func versionNumber(inName name: String) -> Int? {
        versionPrefix(of: name).flatMap { Int($0.number) }
    }

    /// Splits `<Model>.v<digits>` off the start of `name` when the digits end the name or are
    /// followed by something other than a letter or digit (so `Trips.version.txt` is not one).
    private static func versionPrefix(of name: String) -> (model: Substring, number: String, rest: Substring)? {
        guard let dot = name.firstIndex(of: "."), dot != name.startIndex else { return nil }
        let model = name[..<dot]
        guard model.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) else { return nil }
        let afterDot = name[name.index(after: dot)...]
        guard let v = afterDot.first, v == "v" || v == "V" else { return nil }
        let digits = afterDot.dropFirst().prefix { $0.isASCII && $0.isNumber }
        guard !digits.isEmpty else { return nil }
        let rest = afterDot.dropFirst(1 + digits.count)
        if let next = rest.first, next.isLetter || next.isNumber { return nil }
        // `v03` is version 3; digits too many for an Int are kept as written.
        let trimmed = digits.drop { $0 == "0" }
        let number = trimmed.isEmpty ? "0" : String(trimmed)
        return (model, number, rest)
    }
}
