import Modelwright
import ModelwrightSchema

/// `modelwright validate`: checks models and prints each version's shape and checksum.
enum ValidateCommand {
    /// How the command is called, after `modelwright`: its help and the tool's list of commands both show it.
    static let synopsis = "validate <model folder or file>..."

    /// What the command does, in one line, for the tool's list of commands.
    static let summary = "Check every version of each model and print its checksums."

    static let usage = """
        OVERVIEW: Check every version of each model and print its checksums.

        USAGE: modelwright \(synopsis)

        ARGUMENTS:
          <model folder or file>   A model folder holding one '<Model>.v<N>.model' file per version,
                                   or a single '.model' file (checked on its own, without the
                                   checks that compare versions).

        Diagnostics go to standard error as 'path:line:column: error|warning|note: message'.
        For each valid model, one line per version goes to standard output:
          <Model> v<N> (<file>): <n> entities, <n> attributes, <n> relationships, checksum <64 hex digits>

        OPTIONS:
          -h, --help   Show this help.
          --           Treat every later argument as a path, even one starting with '-'.

        Exit codes: 0 valid (warnings allowed), 1 problems in the input, 2 usage error.
        """

    static func run(_ arguments: [String], console: inout some Console) -> ExitCode {
        let options = arguments.prefix { $0 != "--" }
        if options.contains("-h") || options.contains("--help") {
            console.print(usage)
            return .success
        }
        if let option = options.first(where: { $0.hasPrefix("-") }) {
            console.printError("error: unknown option '\(option)'\n\n\(usage)")
            return .usage
        }
        let paths = options + arguments.dropFirst(options.count + 1)
        guard !paths.isEmpty else {
            console.printError("error: missing a model folder or file\n\n\(usage)")
            return .usage
        }
        var code = ExitCode.success
        for path in paths {
            guard let model = ModelFolder.plan(path, console: &console) else {
                code = .invalidInput
                continue
            }
            for version in model.versions {
                console.print(summary(of: version))
            }
        }
        return code
    }

    /// One line describing a valid version. The checksum is the one loading computed: hashing the
    /// schema again doubled the cost of validating a large model.
    static func summary(of version: LoweredVersion) -> String {
        let schema = version.schema
        let attributes = schema.entities.reduce(0) { $0 + $1.attributes.count }
        let relationships = schema.entities.reduce(0) { $0 + $1.relationships.count }
        return "\(schema.modelName) v\(schema.version) (\(version.path)): "
            + "\(count(schema.entities.count, "entity", "entities")), "
            + "\(count(attributes, "attribute", "attributes")), "
            + "\(count(relationships, "relationship", "relationships")), checksum \(version.checksum)"
    }

    private static func count(_ number: Int, _ singular: String, _ plural: String) -> String {
        "\(number) \(number == 1 ? singular : plural)"
    }
}
