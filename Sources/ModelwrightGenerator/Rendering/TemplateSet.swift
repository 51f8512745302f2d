import Foundation
import ModelwrightSchema
import ModelwrightTemplates
import Mustache

/// The templates of one run: the defaults from `Templates/`, with any the user overrides by
/// name (through the config file or a `--templates` folder).
package struct TemplateSet: Sendable {
    /// The templates, one per generated file kind.
    package static let names = FileNames.outputKinds

    /// The parsed templates by name.
    let templates: [String: MustacheTemplate]
    /// Every template file read, so the build plugin can declare them as inputs.
    package let files: [String]

    /// Loads the default templates, then the overrides: `overrides` maps names to files, and
    /// `folder` may hold `<Name>.mustache` files.
    /// `within`, when given, is the config file's folder that holds every override: each is read
    /// inside it without following links.
    package static func load(
        overrides: [String: String] = [:], within overridesFolder: String? = nil, folder: String? = nil
    ) throws -> TemplateSet {
        guard let defaults = TemplateFiles.folder() else {
            throw GeneratorError.invalidTemplate(
                path: "Templates",
                message: "the default templates were not found next to the executable; rebuild modelwright"
            )
        }
        var paths = Dictionary(
            uniqueKeysWithValues: names.map { ($0, defaults.appendingPathComponent("\($0).mustache").path) })
        // Where each override is confined: a `--templates` folder's files are read inside it, like
        // a config's, so a linked file there is refused rather than pasted into generated code.
        var roots: [String: String] = [:]
        if let folder {
            guard let confined = try? ConfinedFolder.open(folder, for: .reading) else {
                throw GeneratorError.invalidTemplate(
                    path: folder,
                    message: "the --templates folder cannot be opened; give a folder of <Name>.mustache files")
            }
            let given = names.filter { confined.kind(of: "\($0).mustache") != .missing }
            // A folder that overrides nothing is a mistake (a typo in its path or its file names),
            // not a request for the defaults.
            guard !given.isEmpty else {
                throw GeneratorError.invalidTemplate(
                    path: folder,
                    message:
                        "the --templates folder holds none of the templates; name them \(names.map { "\($0).mustache" }.joined(separator: ", "))"
                )
            }
            for name in given {
                paths[name] = URL(fileURLWithPath: folder).appendingPathComponent("\(name).mustache").path
                roots[name] = URL(fileURLWithPath: folder).path
            }
        }
        for (name, path) in overrides {
            paths[name] = path
            roots[name] = overridesFolder
        }
        var templates: [String: MustacheTemplate] = [:]
        for name in names {
            guard let path = paths[name] else { continue }
            let data: [UInt8]
            do {
                data = try read(path, confinedTo: roots[name])
            } catch {
                throw GeneratorError.invalidTemplate(path: path, message: "cannot read the template (\(error.reason))")
            }
            do {
                templates[name] = try MustacheTemplate(String(decoding: data, as: UTF8.self), name: path)
            } catch {
                throw GeneratorError.invalidTemplate(path: path, message: error.message)
            }
        }
        return TemplateSet(templates: templates, files: names.compactMap { paths[$0] })
    }

    /// The template at `path`; inside `root` (a config file's folder) when given, reached without
    /// following a link.
    private static func read(_ path: String, confinedTo root: String?) throws(BoundedFile.Failure) -> [UInt8] {
        let limit = SourceFile.maximumSize
        guard let root else { return try BoundedFile.read(path, limit: limit) }
        guard path.hasPrefix(root + "/") else { throw .cannotOpen }
        guard let folder = try? ConfinedFolder.open(root, for: .reading) else { throw .cannotOpen }
        return try folder.read(String(path.dropFirst(root.count + 1)), limit: limit)
    }
}
