import Foundation

/// Which config file a model uses, written once: the CLI (through `GeneratorConfig`) and both
/// plugins compile this one file, the plugins through symbolic links because a plugin cannot
/// depend on a library. So the build plugin declares as an input exactly the config the
/// generator reads, and the command plugin passes the same one.
///
/// The nearest `modelwright-config.json` wins, searching the model folder first, then each folder
/// above it up to and including the target folder. A tool that does not know the target (the CLI
/// run by hand) searches the model folder and the folder right above it, the target in the
/// documented layout. A config file that is a symbolic link counts as present, so the generator
/// refuses it with an error instead of a tool skipping it in silence.
enum ConfigDiscovery {
    /// The folders searched for `modelFolder`'s config, nearest first: the model folder, then each
    /// folder above it up to and including `target`; when `target` is nil or not above the model
    /// folder, the model folder and the folder right above it.
    static func searchedFolders(forModelFolder modelFolder: URL, target: URL?) -> [URL] {
        let folder = modelFolder.standardizedFileURL
        guard folder.path != "/" else { return [folder] }
        guard let target = target?.standardizedFileURL, contains(target, folder) else {
            return [folder, folder.deletingLastPathComponent().standardizedFileURL]
        }
        var folders = [folder]
        var current = folder
        while current.path != target.path, current.path != "/" {
            current = current.deletingLastPathComponent().standardizedFileURL
            folders.append(current)
        }
        return folders
    }

    /// The config file `modelFolder`'s model uses, or nil when no searched folder holds one.
    static func configFile(forModelFolder modelFolder: URL, target: URL?) -> URL? {
        searchedFolders(forModelFolder: modelFolder, target: target)
            .map { $0.appendingPathComponent(FileNames.config) }
            .first { isPresent($0) }
    }

    /// Whether an entry exists at `url`, a symbolic link included (even one whose target is missing).
    private static func isPresent(_ url: URL) -> Bool {
        (try? FileManager.default.attributesOfItem(atPath: url.path)) != nil
    }

    /// Whether `folder` is `inner` or a folder above it.
    private static func contains(_ folder: URL, _ inner: URL) -> Bool {
        let base = folder.path.hasSuffix("/") ? folder.path : folder.path + "/"
        return inner.path == folder.path || inner.path.hasPrefix(base)
    }
}
