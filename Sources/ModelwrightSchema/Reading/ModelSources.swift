import Foundation

/// What the read stage produces: the bytes of a model's schema files, and its lock file.
///
/// A model is a folder holding one `<Model>.v<N>.model` file per version, or a single schema
/// file. Reading goes through ``BoundedFile``, so a FIFO, a device or a huge file named like a
/// schema file is a located error rather than a hang.
package struct ModelSources: Sendable {
    /// The extension of schema files.
    package static let fileExtension = FileNames.versionExtension

    /// The model folder, or `nil` when the path named a single file (which gets no checks across
    /// versions and no lock file).
    package let folder: String?
    /// The files read, in file-name order.
    package let files: [SourceFile]
    /// How many schema files the folder lists, read or not: when some could not be read, the
    /// versions they hold must not be reported missing.
    package let listedCount: Int
    /// The folder's lock file, when it has one that reads.
    package let lock: LockFile?
    /// What could not be read: the path itself, a file, the lock file.
    package let problems: [Diagnostic]

    /// The path of a file in a folder, as reading the folder spells it.
    package static func path(of name: String, in folder: String) -> String {
        folder.hasSuffix("/") ? folder + name : folder + "/" + name
    }

    /// Reads every schema file in a model folder, or the one file `path` names.
    ///
    /// Inside a folder, every file is read through ``ConfinedFolder``: a symbolic link named like a
    /// schema file or the lock file is refused unread, so a folder from a pull request cannot make
    /// the tools read (and quote in an error) a file elsewhere on the machine.
    package static func read(_ path: String) -> ModelSources {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return failure(path, "no such file or folder")
        }
        guard isDirectory.boolValue else {
            let outcome = readFile(path) { () throws(BoundedFile.Failure) in
                try BoundedFile.read(path, limit: SourceFile.maximumSize)
            }
            return ModelSources(
                folder: nil, files: outcome.file.map { [$0] } ?? [], listedCount: 1, lock: nil,
                problems: outcome.problem.map { [$0] } ?? [])
        }
        let folder: ConfinedFolder
        let names: [String]
        do {
            folder = try ConfinedFolder.open(path, for: .reading)
            names = try folder.names()
        } catch {
            return failure(path, "cannot read the folder: \(error.message)")
        }
        // A schema file whose extension is only cased wrong (`Trips.v3.Model`) is read: the
        // version check then names the file it must be, from the header it holds.
        let files = names.filter { FileNames.versionFileName($0) == .schema }
        let models = files.compactMap { $0.split(separator: ".").first.map(String.init) }
        let lookalikes =
            names.compactMap { lookalike($0, in: path, models: models) }
            + nestedVersionFiles(in: folder, at: path, root: path)
        guard !files.isEmpty else {
            // The lock file is still checked: a tool about to fill the folder (an import) stops
            // before writing when the folder would not read afterwards.
            let empty = failure(
                path, "the folder holds no '.\(fileExtension)' files; name each version '<Model>.v<N>.\(fileExtension)'"
            )
            let lockProblem = LockFile.read(in: folder).problem
            return ModelSources(
                folder: nil, files: [], listedCount: 0, lock: nil,
                problems: empty.problems + lookalikes + (lockProblem.map { [$0] } ?? []))
        }
        // Files are read in parallel (a long history has a hundred of them), in file order.
        let outcomes = files.parallelMap { name in
            readFile(Self.path(of: name, in: path)) { () throws(BoundedFile.Failure) in
                try folder.read(name, limit: SourceFile.maximumSize)
            }
        }
        var problems = outcomes.compactMap(\.problem) + lookalikes
        let (lock, lockProblem) = LockFile.read(in: folder)
        if let lockProblem { problems.append(lockProblem) }
        // A file named like a version but not read (`Trips.v3.mdl`) may be the version the others
        // lack: it is listed, so that gap is not reported on top of the file's own error.
        let unreadLookalikes = lookalikes.filter { $0.severity == .error }.count
        return ModelSources(
            folder: path, files: outcomes.compactMap(\.file), listedCount: files.count + unreadLookalikes, lock: lock,
            problems: problems)
    }

    /// The sources the folder `path` will read as once `written` (schema files named by their
    /// paths in it) are written into it: what it holds now (its other versions, its lock file)
    /// with the files of the same names replaced. A tool that writes a model folder checks what
    /// it writes this way, from the bytes it holds, rather than by reading them back.
    package static func read(_ path: String, afterWriting written: [SourceFile]) -> ModelSources {
        let replaced = Set(written.map(\.path))
        var isDirectory: ObjCBool = false
        let now =
            FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
            ? read(path) : nil
        let kept = (now?.files ?? []).filter { !replaced.contains($0.path) }
        // A file that does not read now is still listed, unless it is one being replaced. (A folder
        // with no schema file yet reads with no lock file: the lock is then read on its own.)
        let unreadable = (now?.problems ?? []).filter { $0.path != path && !replaced.contains($0.path) }
        let unreadableVersions = unreadable.filter { $0.path.hasSuffix("." + fileExtension) }.count
        return ModelSources(
            folder: path, files: (kept + written).sorted { $0.path < $1.path },
            listedCount: kept.count + written.count + unreadableVersions,
            lock: now?.lock ?? (try? ConfinedFolder.open(path, for: .reading)).flatMap { LockFile.read(in: $0).lock },
            problems: unreadable)
    }

    /// The diagnostic for a file `name` in the folder `folder` that is named like a version file
    /// but is not one, so is not read (`Trips.v3.mdl`: an error; `Trips.v3.model.bak`: a warning,
    /// a backup beside its version being common); `nil` for any other name. Located at the
    /// file's start, so an editor opens the file the diagnostic is about.
    private static func lookalike(_ name: String, in folder: String, models: [String]) -> Diagnostic? {
        guard case .lookalike(let expected, let isBackup) = FileNames.versionFileName(name, models: models) else {
            return nil
        }
        let message =
            isBackup
            ? "'\(name)' looks like a backup of a version file and is not read: only files named '<Model>.v<N>.\(fileExtension)' are versions; delete it, or rename it to '\(expected)' if it is a version"
            : "'\(name)' is named like a version file but is not read: a version file must be named '\(expected)'; rename it, or move it out of the model folder"
        return Diagnostic(
            severity: isBackup ? .warning : .error, message: message, path: path(of: name, in: folder),
            location: SourcePosition(line: 1, column: 1))
    }

    /// How deep below a model folder ``nestedVersionFiles(in:at:)`` looks.
    private static let nestedDepth = 4

    /// An error for each schema file in a subfolder of the model folder (up to ``nestedDepth``
    /// folders down; hidden folders and links are passed over): such a file is not read, and the
    /// build plugin gives it to the command of the model folder above it, so `generate` reports it
    /// here once, at the file, instead of SwiftPM reporting the outputs a second command would
    /// duplicate, without a location.
    private static func nestedVersionFiles(
        in folder: ConfinedFolder, at path: String, root: String, depth: Int = 1
    ) -> [Diagnostic] {
        guard depth <= nestedDepth, let names = try? folder.names() else { return [] }
        return names.filter { !$0.hasPrefix(".") && folder.kind(of: $0) == .folder }.flatMap { name -> [Diagnostic] in
            let subpath = Self.path(of: name, in: path)
            guard let subfolder = try? ConfinedFolder.open(subpath, for: .reading) else { return [] }
            var found =
                (try? subfolder.names())?.filter {
                    FileNames.versionFileName($0) == .schema && subfolder.kind(of: $0) == .file
                }.map { file in
                    Diagnostic(
                        severity: .error,
                        message:
                            "'\(file)' is in a subfolder of the model folder and is not read: version files must be directly in the model folder '\(root)'; move it there, or out of the target (an older copy belongs in version control, not beside the versions)",
                        path: Self.path(of: file, in: subpath), location: SourcePosition(line: 1, column: 1))
                } ?? []
            found += linkedEntries(in: subfolder, at: subpath, root: root, isModelFolder: false)
            found += nestedVersionFiles(in: subfolder, at: subpath, root: root, depth: depth + 1)
            return found
        } + (depth == 1 ? linkedEntries(in: folder, at: path, root: root, isModelFolder: true) : [])
    }

    /// An error for each symbolic link that would hide versions: a link to a folder, anywhere in
    /// the model folder, and a link named like a version file in a subfolder (a broken one too).
    /// No link is followed, so what such a link holds is never read; the error says so, at the
    /// link, instead of the folder being passed over in silence. (A link named like a version
    /// file directly in the model folder is refused where the files are read.)
    private static func linkedEntries(
        in folder: ConfinedFolder, at path: String, root: String, isModelFolder: Bool
    ) -> [Diagnostic] {
        guard let names = try? folder.names() else { return [] }
        return names.filter { !$0.hasPrefix(".") && folder.kind(of: $0) == .symbolicLink }.compactMap { name in
            let linkPath = Self.path(of: name, in: path)
            var isDirectory: ObjCBool = false
            let target = FileManager.default.fileExists(atPath: linkPath, isDirectory: &isDirectory)
            let message: String
            var severity = Diagnostic.Severity.error
            if target && isDirectory.boolValue {
                // A warning: a link to a folder may hold anything (a build folder, notes); it is not
                // followed, so nothing in it is read, and the user hears why its files are ignored.
                severity = .warning
                message =
                    "'\(name)' is a symbolic link to a folder, and Modelwright follows no link in a model folder: nothing in it is read; move its version files into the model folder '\(root)', or the link out of it"
            } else if !isModelFolder && FileNames.versionFileName(name) == .schema {
                message =
                    "'\(name)' is a symbolic link\(target ? "" : " to nothing (a broken link)") in a subfolder of the model folder, and Modelwright follows no link there: it is not read; put the version file itself directly in the model folder '\(root)'"
            } else {
                return nil
            }
            return Diagnostic(
                severity: severity, message: message, path: linkPath, location: SourcePosition(line: 1, column: 1))
        }
    }

    private static func readFile(
        _ path: String, _ read: () throws(BoundedFile.Failure) -> [UInt8]
    ) -> (file: SourceFile?, problem: Diagnostic?) {
        do {
            return (SourceFile(path: path, bytes: try read()), nil)
        } catch {
            let message =
                switch error {
                case .cannotOpen, .cannotRead: "cannot read the file"
                case .notARegularFile: "not a regular file (a folder, a FIFO or a device); a schema file is a text file"
                case .symbolicLink:
                    "the file is a symbolic link; Modelwright reads only the files inside a model folder and follows no link there: replace the link with the file itself"
                case .hardLink:
                    "the file has more than one name (a hard link), so it may be a file from elsewhere; Modelwright reads only a model folder's own files: replace it with a copy"
                case .tooLarge(let size):
                    "the file is \(size) bytes; a schema file may hold at most \(SourceFile.maximumSize) bytes (16 MiB)"
                }
            // A file too large to read is located at its start, where the reading stopped.
            let start: SourcePosition? =
                if case .tooLarge = error { SourcePosition(line: 1, column: 1) } else { nil }
            return (nil, Diagnostic(severity: .error, message: message, path: path, location: start))
        }
    }

    private static func failure(_ path: String, _ message: String) -> ModelSources {
        ModelSources(
            folder: nil, files: [], listedCount: 0, lock: nil,
            problems: [Diagnostic(severity: .error, message: message, path: path, location: nil)])
    }
}
