import Foundation
import ModelwrightSchema

/// The access level of generated declarations.
package enum AccessLevel: String, Sendable, Codable {
    /// Visible to the app-side module only (the default).
    case `internal`
    /// Visible to modules that import the app-side library.
    case `public`
}

/// The generator's settings, read from `modelwright-config.json` in the target (or `--config`).
///
/// ```json
/// {
///     "accessLevel": "public",
///     "naming": { "typeSuffix": "Record", "types": { "Group": "StopGroup" } },
///     "templates": { "Records": "Templates/Records.mustache" }
/// }
/// ```
///
/// Unknown keys are an error, so a misspelt setting is never silently ignored.
package struct GeneratorConfig: Sendable, Equatable {
    /// The file name the build plugin looks for in a target.
    package static let fileName = FileNames.config

    /// The access level of generated declarations.
    package var accessLevel: AccessLevel
    /// How generated Swift types are named (storage names never change).
    package var naming: Naming
    /// Template overrides by template name (`Records`, `Queries`, `Schema`), as paths relative to the config file.
    package var templates: [String: String]
    /// The file the configuration was read from, which problems found while generating name.
    package var path: String?
    /// The folder that holds every template ``templates`` names, when they came from a config file:
    /// they are read inside it, through ``ConfinedFolder``.
    package var templateFolder: String?

    /// Creates a configuration.
    package init(
        accessLevel: AccessLevel = .internal, naming: Naming = Naming(), templates: [String: String] = [:],
        path: String? = nil
    ) {
        self.accessLevel = accessLevel
        self.naming = naming
        self.templates = templates
        self.path = path
    }

    /// The configuration at `explicit`, or else the config file ``ConfigDiscovery`` finds for the
    /// model folder (in it, or in the folder above it), or else the defaults.
    package static func load(explicit: String?, near modelPath: String) throws -> GeneratorConfig {
        let path =
            explicit ?? ConfigDiscovery.configFile(forModelFolder: URL(fileURLWithPath: modelPath), target: nil)?.path
        return try path.map { try load(from: URL(fileURLWithPath: $0)) } ?? GeneratorConfig()
    }

    /// Reads a configuration file, reporting unknown keys and bad values by name.
    package static func load(from url: URL) throws -> GeneratorConfig {
        // The config file itself is never read through a link (a committed link to a secret
        // would otherwise be parsed, and its first bytes could reach an error message).
        let data: [UInt8]
        do {
            data = try ConfinedFolder.readFile(atPath: url.path, limit: SourceFile.maximumSize)
        } catch {
            let reason =
                error == .symbolicLink
                ? "the config file is a symbolic link; Modelwright reads it only as a regular file: replace the link with the file"
                : "cannot read the config file (\(error.reason))"
            throw GeneratorError.invalidConfig(path: url.path, message: reason)
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(data)) as? [String: Any] else {
            throw GeneratorError.invalidConfig(path: url.path, message: "the file is not a JSON object")
        }
        let known: Set<String> = ["accessLevel", "naming", "templates"]
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw GeneratorError.invalidConfig(
                path: url.path,
                message: "unknown key '\(unknown)'; the keys are \(known.sorted().joined(separator: ", "))"
            )
        }
        var config = GeneratorConfig(path: url.path)
        if let level = object["accessLevel"] {
            guard let text = level as? String, let access = AccessLevel(rawValue: text) else {
                throw GeneratorError.invalidConfig(
                    path: url.path, message: "'accessLevel' must be \"internal\" or \"public\"")
            }
            config.accessLevel = access
        }
        if let naming = object["naming"] {
            config.naming = try Naming.parse(naming, configPath: url.path)
        }
        if let templates = object["templates"] {
            guard let map = templates as? [String: String] else {
                throw GeneratorError.invalidConfig(
                    path: url.path, message: "'templates' must map template names to paths")
            }
            let folder = url.deletingLastPathComponent()
            for (name, path) in map {
                guard TemplateSet.names.contains(name) else {
                    throw GeneratorError.invalidConfig(
                        path: url.path,
                        message:
                            "unknown template '\(DiagnosticText.escaped(name))'; the templates are \(TemplateSet.names.joined(separator: ", "))"
                    )
                }
                // A template a config names is a file of the target, like the config: a path
                // leading elsewhere would put another file's text into generated code (and the
                // compiler's errors). Templates kept elsewhere are given with --templates.
                guard !path.hasPrefix("/"), (try? ConfinedFolder.check(path, in: folder.path)) != nil else {
                    throw GeneratorError.invalidConfig(
                        path: url.path,
                        message:
                            "the template '\(DiagnosticText.escaped(path))' of '\(name)' must be a path inside the config file's folder, without '..' (such as 'Templates/\(name).mustache'); give a template kept elsewhere with --templates"
                    )
                }
                config.templates[name] = folder.appendingPathComponent(path).path
            }
            config.templateFolder = folder.path
        }
        return config
    }
}

/// What can stop generation, in the user's terms.
package enum GeneratorError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The config file is malformed.
    case invalidConfig(path: String, message: String)
    /// A template could not be read or parsed.
    case invalidTemplate(path: String, message: String)
    /// The model has no valid version to generate from.
    case noModel(String)

    package var description: String {
        switch self {
        case .invalidConfig(let path, let message): "\(DiagnosticText.escapedPath(path)): error: \(message)"
        case .invalidTemplate(let path, let message): "\(DiagnosticText.escapedPath(path)): error: \(message)"
        case .noModel(let name): "\(name): error: the model has no valid version to generate from"
        }
    }
}
