import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// Longer than 500 lines on purpose: the one owner of every system call that touches a file in a
// folder (opening each component without following links, exclusive temporaries, renames, the
// journal); keeping them together keeps the rule "no path is followed" checkable in one read.

/// A folder a tool reads from or writes into, held open, in which every file is reached from the
/// folder's descriptor, one path component at a time, without following a symbolic link: the one
/// way Modelwright's tools touch files inside a folder that came with a pull request.
///
/// Every file a tool writes (`generate` and the recovery of its journal, `import-coredata`,
/// `export-coredata`, `new-version`, `lock`, and through `generate` the command plugin) goes
/// through ``write(_:)``; model folders are read through ``read(_:limit:)``. So a hostile folder
/// cannot redirect a write or a read elsewhere, by construction:
///
/// - a name is a relative path whose components are neither empty, `.` nor `..`, and hold no NUL;
/// - each component is opened with `O_NOFOLLOW` relative to the folder before it (`openat`), so a
///   symbolic link at any level is refused, never followed;
/// - a file is written under a temporary name created with `O_EXCL | O_NOFOLLOW` (a link or file
///   planted there is removed with `unlinkat` first, which never follows it), then renamed into
///   place with `renameat` within its opened parent;
/// - the journal of a set being renamed may list only the names the current run writes; any other
///   journal is refused and nothing is renamed.
///
/// The folder itself is opened by ``open(_:for:)``: for reading, as the user named it; for writing,
/// without following a link in any component of a relative path, or in the last component of an
/// absolute one (the path above it is the user's own choice of place).
package final class ConfinedFolder: Sendable {
    /// The journal of a set being renamed into place: one relative path per line.
    package static let journalName = ".modelwright-pending"
    /// What marks a temporary file: the file's name with this after it, behind a dot.
    package static let temporarySuffix = ".modelwright-new"
    /// The longest file name most file systems hold, in bytes (`NAME_MAX`).
    private static let maximumNameLength = 255

    /// The folder's path as given, for messages.
    package let path: String
    private let descriptor: Int32

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close(descriptor) }

    /// Why a folder or a file in it could not be used; the message never quotes a file's content.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
        /// The file or folder.
        package var path: String
        /// What is wrong, and what to do.
        package var message: String

        /// Creates a failure.
        package init(path: String, message: String) {
            self.path = path
            self.message = message
        }

        /// `path: error: message`, the path escaped (it comes from the file system).
        package var description: String { "\(DiagnosticText.escapedPath(path)): error: \(message)" }

        /// The description, as Foundation's error reporting asks for it.
        package var errorDescription: String? { description }
    }

    /// What a folder is opened for.
    package enum Access: Sendable {
        /// A folder the user named that exists already (a model folder, which `lock` and
        /// `new-version` also write into): its path is followed as named, links included; what is
        /// inside is not.
        case reading
        /// An output folder the tool fills: missing folders are created; the path above the last
        /// component is followed as named, the last component (after resolving `.` and `..` in
        /// the text) must not be a symbolic link.
        case writing
        /// An output folder read to compare (`generate --check`): the rule of ``writing``, with
        /// nothing created.
        case checkingOutput
    }

    /// What stands at a name.
    package enum EntryKind: Sendable, Equatable {
        /// Nothing.
        case missing
        /// A regular file.
        case file
        /// A folder.
        case folder
        /// A symbolic link (never followed).
        case symbolicLink
        /// A FIFO, a device or a socket.
        case other
    }

    /// One file to write: its path inside the folder and its bytes.
    package struct OutputFile: Sendable {
        /// The relative path, such as `Trips+Records.swift` or `Trips 2.xcdatamodel/contents`.
        package var path: String
        private var contents: Contents

        private enum Contents: Sendable {
            case text(String)
            case data(Data)
        }

        /// A file holding `text` as UTF-8.
        package init(path: String, text: String) {
            self.path = path
            contents = .text(text)
        }

        /// A file holding `data`.
        package init(path: String, data: Data) {
            self.path = path
            contents = .data(data)
        }

        /// Calls `body` with the file's bytes, without copying a string's UTF-8 (a large model's
        /// files are megabytes).
        fileprivate func withBytes<T>(_ body: (UnsafeRawBufferPointer) throws(Failure) -> T) throws(Failure) -> T {
            var result: Result<T, Failure>?
            switch contents {
            case .text(var text):
                text.withUTF8 { buffer in
                    result = Result { () throws(Failure) in try body(UnsafeRawBufferPointer(buffer)) }
                }
            case .data(let data):
                data.withUnsafeBytes { buffer in result = Result { () throws(Failure) in try body(buffer) } }
            }
            // Both closures above always run.
            guard let result else { throw Failure(path: path, message: "internal error: the file's bytes were lost") }
            return try result.get()
        }
    }

    // MARK: - Opening

    /// Opens the folder at `path` for `access`.
    package static func open(_ path: String, for access: Access) throws(Failure) -> ConfinedFolder {
        var trimmed = path
        while trimmed.count > 1 && trimmed.hasSuffix("/") { trimmed.removeLast() }
        guard !trimmed.isEmpty, !trimmed.utf8.contains(0) else {
            throw Failure(path: path, message: "a folder's path must not be empty or hold a NUL")
        }
        switch access {
        case .reading:
            let descriptor = systemOpen(trimmed, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw Failure(path: path, message: "cannot open the folder (\(String(cString: strerror(errno))))")
            }
            return ConfinedFolder(descriptor: descriptor, path: trimmed)
        case .writing:
            return try openOutput(trimmed, creating: true)
        case .checkingOutput:
            return try openOutput(trimmed, creating: false)
        }
    }

    /// Opens the output folder at `path`: the path above its last component is the user's choice
    /// of place and is followed as named (a linked `.build`, a checkout reached through a link);
    /// the last component, the folder a checkout commits as `Generated`, is never followed. `.`
    /// and `..` components are resolved in the text first, so `link/.` is refused like `link`.
    private static func openOutput(_ path: String, creating: Bool) throws(Failure) -> ConfinedFolder {
        let normalised = lexicallyNormalised(path)
        var components = normalised.split(separator: "/").map(String.init)
        // `.`, `..`, `../..` and `/`: folders the current folder's own place leads to, never a link.
        guard let last = components.last, last != ".." else {
            return try open(normalised, for: .reading)
        }
        components.removeLast()
        let absolute = normalised.hasPrefix("/")
        let parent =
            components.isEmpty ? (absolute ? "/" : ".") : (absolute ? "/" : "") + components.joined(separator: "/")
        if creating {
            // The output folder's own name is where a tool's file names come from (an exported
            // bundle's versions): one with a control character is refused before anything exists.
            if last.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
                throw Failure(
                    path: path,
                    message: "the folder's name holds a control character (such as a newline); choose another name")
            }
            do {
                try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
            } catch {
                throw Failure(path: parent, message: "cannot create the folder (\(error.localizedDescription))")
            }
        }
        let start = try open(parent, for: .reading)
        let folder = try start.subfolder(last, creating: creating, shownAs: normalised)
        return ConfinedFolder(descriptor: try folder.takeDescriptor(), path: path)
    }

    /// `path` with its `.` components and each `..` that follows a named component removed, in
    /// the text only (so the folder opened is the one checked); empty components dropped.
    package static func lexicallyNormalised(_ path: String) -> String {
        var components: [Substring] = []
        for component in path.split(separator: "/", omittingEmptySubsequences: true) where component != "." {
            if component == "..", let previous = components.last, previous != ".." {
                components.removeLast()
            } else if component == ".." && path.hasPrefix("/") && components.isEmpty {
                continue  // `/..` is `/`.
            } else {
                components.append(component)
            }
        }
        let joined = components.joined(separator: "/")
        if path.hasPrefix("/") { return "/" + joined }
        return joined.isEmpty ? "." : joined
    }

    /// A duplicate of the descriptor, for a folder that outlives this one.
    private func takeDescriptor() throws(Failure) -> Int32 {
        let copy = dup(descriptor)
        guard copy >= 0 else { throw Failure(path: path, message: "cannot open the folder (too many open files)") }
        return copy
    }

    /// The folder `name` inside this one, created if asked and missing; a symbolic link or a file
    /// there is refused.
    private func subfolder(_ name: String, creating: Bool, shownAs shown: String) throws(Failure) -> ConfinedFolder {
        var descriptor = openat(self.descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if descriptor < 0 && errno == ENOENT && creating {
            if mkdirat(self.descriptor, name, 0o777) != 0 && errno != EEXIST {
                throw Failure(path: shown, message: "cannot create the folder (\(String(cString: strerror(errno))))")
            }
            descriptor = openat(self.descriptor, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        }
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            switch kind(of: name) {
            case .symbolicLink:
                throw Failure(
                    path: shown,
                    message:
                        "is a symbolic link; Modelwright writes only into real folders, so that a checkout cannot send its output elsewhere: replace the link with a folder, or name the folder it points to"
                )
            case .file, .other:
                throw Failure(path: shown, message: "is not a folder; remove it or choose another output folder")
            case .missing, .folder:
                throw Failure(path: shown, message: "cannot open the folder (\(reason))")
            }
        }
        return ConfinedFolder(descriptor: descriptor, path: shown)
    }

    // MARK: - Names

    /// Checks that `relativePath` names a place inside the folder: components neither empty, `.`
    /// nor `..`, no NUL, each short enough for its temporary name; and, for a file to write
    /// (`reading` false), no control character (a newline would split the journal, which then
    /// refuses every later run) and not a name the writer keeps for its journal and temporary
    /// files. A file only read may have any other name its folder holds (printed paths are escaped).
    package static func check(_ relativePath: String, in folder: String, reading: Bool = false) throws(Failure) {
        let shown = ModelSources.path(of: relativePath, in: folder)
        let components = relativePath.split(separator: "/", omittingEmptySubsequences: false)
        for component in components {
            guard !component.isEmpty, component != ".", component != "..",
                !component.utf8.contains(0),
                reading || !component.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
            else {
                throw Failure(
                    path: shown,
                    message:
                        "'\(DiagnosticText.escaped(relativePath))' is not a name inside the folder (an empty, '.' or '..' component, or a control character such as a newline or a NUL): rename it"
                )
            }
            guard component.utf8.count + 1 + temporarySuffix.utf8.count <= maximumNameLength else {
                throw Failure(path: shown, message: "the name is longer than a file system holds; shorten it")
            }
        }
        let leaf = components.last.map(String.init) ?? ""
        guard reading || (leaf != journalName && !leaf.hasSuffix(temporarySuffix)) else {
            throw Failure(path: shown, message: "the name is one Modelwright keeps for its own files; choose another")
        }
    }

    /// What stands at `name` (one component) in this folder, without following a link.
    package func kind(of name: String) -> EntryKind {
        var status = stat()
        guard fstatat(descriptor, name, &status, AT_SYMLINK_NOFOLLOW) == 0 else { return .missing }
        switch status.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .folder
        case S_IFLNK: return .symbolicLink
        default: return .other
        }
    }

    /// What stands at `relativePath`, reached without following a link; a link on the way is
    /// reported as `symbolicLink`.
    package func kind(atPath relativePath: String) -> EntryKind {
        guard (try? Self.check(relativePath, in: path, reading: true)) != nil else { return .missing }
        guard let (parent, leaf) = try? parent(of: relativePath, creating: false) else {
            return pathHasLink(relativePath) ? .symbolicLink : .missing
        }
        return parent.kind(of: leaf)
    }

    private func pathHasLink(_ relativePath: String) -> Bool {
        var folder = self
        for component in relativePath.split(separator: "/").dropLast().map(String.init) {
            if folder.kind(of: component) == .symbolicLink { return true }
            guard let next = try? folder.subfolder(component, creating: false, shownAs: component) else { return false }
            folder = next
        }
        return false
    }

    /// The names in the folder (not `.` and `..`), sorted.
    package func names() throws(Failure) -> [String] {
        let copy = dup(descriptor)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { close(copy) }
            throw Failure(path: path, message: "cannot list the folder (\(String(cString: strerror(errno))))")
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: MemoryLayout.size(ofValue: entry.pointee.d_name)) {
                    String(cString: $0)
                }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// The folder holding `relativePath` and the last component, reached without following links.
    private func parent(of relativePath: String, creating: Bool) throws(Failure) -> (ConfinedFolder, String) {
        var components = relativePath.split(separator: "/").map(String.init)
        let leaf = components.removeLast()
        var folder = self
        var shown = path
        for component in components {
            shown = ModelSources.path(of: component, in: shown)
            folder = try folder.subfolder(component, creating: creating, shownAs: shown)
        }
        return (folder, leaf)
    }

    // MARK: - Reading

    /// The bytes of the regular file at `relativePath`, at most `limit` of them, reached without
    /// following a symbolic link: a link, even to a file inside the folder, is refused unread, and
    /// so is a regular file with more than one name (a hard link).
    package func read(_ relativePath: String, limit: Int) throws(BoundedFile.Failure) -> [UInt8] {
        guard (try? Self.check(relativePath, in: path, reading: true)) != nil else { throw .cannotOpen }
        let parent: ConfinedFolder
        let leaf: String
        do {
            (parent, leaf) = try self.parent(of: relativePath, creating: false)
        } catch {
            throw pathHasLink(relativePath) ? .symbolicLink : .cannotOpen
        }
        if parent.kind(of: leaf) == .symbolicLink { throw .symbolicLink }
        let file = openat(parent.descriptor, leaf, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard file >= 0 else { throw errno == ELOOP ? .symbolicLink : .cannotOpen }
        defer { close(file) }
        // A second name for a file elsewhere (a hard link to a secret) is no file of this folder's
        // own; checked on the open file, so nothing can be swapped in between.
        var status = stat()
        guard fstat(file, &status) == 0 else { throw .cannotRead }
        if status.st_mode & S_IFMT == S_IFREG && status.st_nlink > 1 { throw .hardLink }
        return try BoundedFile.read(descriptor: file, limit: limit)
    }

    /// The file at `relativePath`, or `nil` when nothing stands there.
    package func readIfPresent(_ relativePath: String, limit: Int) throws(BoundedFile.Failure) -> [UInt8]? {
        guard kind(atPath: relativePath) != .missing else { return nil }
        return try read(relativePath, limit: limit)
    }

    /// Reads the file a user named by `path`: the folders above it as given, the file itself
    /// without following a link (a config file committed as a link to a secret stays unread).
    package static func readFile(atPath path: String, limit: Int) throws(BoundedFile.Failure) -> [UInt8] {
        let url = URL(fileURLWithPath: path)
        let folderPath = url.deletingLastPathComponent().path
        guard let folder = try? open(folderPath.isEmpty ? "." : folderPath, for: .reading) else { throw .cannotOpen }
        return try folder.read(url.lastPathComponent, limit: limit)
    }

    // MARK: - Writing

    /// Writes each file whose bytes differ from what is on disk, as one set: the changed files are
    /// written under temporary names, a journal listing them is written, they are renamed into
    /// place, and the journal is removed. A run that stops before the journal exists changed
    /// nothing; one that stops after it is completed by the next run that writes the same names.
    ///
    /// A symbolic link, a folder or a device where a file goes is refused, and so is a journal that
    /// lists a name this call does not write (a journal Modelwright did not write): nothing is
    /// renamed then. Missing folders inside are created, without following links.
    /// - Returns: the paths written, in the order given.
    @discardableResult
    package func write(_ files: [OutputFile]) throws(Failure) -> [String] {
        var expected: Set<String> = []
        for file in files {
            try Self.check(file.path, in: path)
            guard expected.insert(file.path).inserted else {
                throw Failure(path: ModelSources.path(of: file.path, in: path), message: "written twice in one set")
            }
        }
        try recover(expecting: expected)
        var changed: [String] = []
        do {
            for file in files where try writeTemporary(file) {
                changed.append(file.path)
            }
        } catch {
            // Nothing was renamed yet: removing the temporary files leaves the old set as it was.
            removeTemporaries(of: files.map(\.path))
            throw error
        }
        guard !changed.isEmpty else { return [] }
        let journal = OutputFile(path: Self.journalName, text: changed.map { $0 + "\n" }.joined())
        do {
            _ = try writeTemporary(journal, comparing: false)
            try rename(Self.journalName, in: self)
        } catch {
            removeTemporaries(of: files.map(\.path) + [Self.journalName])
            throw error
        }
        try recover(expecting: expected)
        return changed
    }

    /// Finishes a set whose journal exists by renaming its temporary files into place, then removes
    /// the journal and the temporary files of `expected` that a run stopped before its journal
    /// left. A journal listing anything outside `expected` is refused before anything is renamed.
    package func recover(expecting expected: Set<String>) throws(Failure) {
        let journalPath = ModelSources.path(of: Self.journalName, in: path)
        let listed: [String]
        do {
            guard let bytes = try readIfPresent(Self.journalName, limit: 1024 * 1024) else {
                removeTemporaries(of: Array(expected))
                return
            }
            listed = String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
        } catch {
            throw Failure(
                path: journalPath,
                message:
                    "the journal of an interrupted write cannot be read (\(error.reason)); Modelwright writes it as a regular file: delete it and run again"
            )
        }
        let foreign = listed.filter { !expected.contains($0) }
        if let first = foreign.first {
            throw Failure(
                path: journalPath,
                message:
                    "the journal of an interrupted write lists \(foreign.count) name\(foreign.count == 1 ? "" : "s") this run does not write, such as '\(DiagnosticText.escaped(first))'; Modelwright only lists the files it writes here, so the journal did not come from it and nothing was renamed: delete '\(Self.journalName)' (and any '.*\(Self.temporarySuffix)' file) and run again"
            )
        }
        for name in listed {
            guard let (parent, leaf) = try? parent(of: name, creating: false) else { continue }
            let temporary = Self.temporaryName(of: leaf)
            switch parent.kind(of: temporary) {
            case .missing: continue
            case .file: try rename(leaf, in: parent)
            case .folder, .symbolicLink, .other:
                throw Failure(
                    path: ModelSources.path(of: temporary, in: parent.path),
                    message:
                        "is not a regular file, so Modelwright did not write it and will not rename it into place: delete it and '\(Self.journalName)', and run again"
                )
            }
        }
        if unlinkat(descriptor, Self.journalName, 0) != 0 && errno != ENOENT {
            throw Failure(path: journalPath, message: "cannot remove the journal (\(String(cString: strerror(errno))))")
        }
        removeTemporaries(of: Array(expected))
    }

    private static func temporaryName(of leaf: String) -> String { "." + leaf + temporarySuffix }

    /// Renames `leaf`'s temporary file onto `leaf`, both in `folder`.
    private func rename(_ leaf: String, in folder: ConfinedFolder) throws(Failure) {
        guard renameat(folder.descriptor, Self.temporaryName(of: leaf), folder.descriptor, leaf) == 0 else {
            throw Failure(
                path: ModelSources.path(of: leaf, in: folder.path),
                message: "cannot put the new file in place (\(String(cString: strerror(errno))))")
        }
    }

    /// Removes the temporary files of `paths` where they are, never following a link; a folder
    /// planted under a temporary name is left (nothing is renamed from it).
    private func removeTemporaries(of paths: [String]) {
        for relativePath in paths {
            guard let (parent, leaf) = try? parent(of: relativePath, creating: false) else { continue }
            unlinkat(parent.descriptor, Self.temporaryName(of: leaf), 0)
        }
    }

    /// Writes `file` under its temporary name when it differs from the file on disk (or always,
    /// when not `comparing`); returns whether it did.
    private func writeTemporary(_ file: OutputFile, comparing: Bool = true) throws(Failure) -> Bool {
        let (parent, leaf) = try parent(of: file.path, creating: true)
        let shown = ModelSources.path(of: leaf, in: parent.path)
        return try file.withBytes { bytes throws(Failure) -> Bool in
            if comparing {
                switch parent.kind(of: leaf) {
                case .missing: break
                case .file:
                    if parent.holds(leaf, exactly: bytes) { return false }
                case .symbolicLink:
                    throw Failure(
                        path: shown,
                        message:
                            "is a symbolic link; Modelwright writes its files in place and never through a link: remove the link and run again"
                    )
                case .folder, .other:
                    throw Failure(
                        path: shown, message: "is not a regular file, so the generated file cannot go there: remove it")
                }
            }
            let temporary = Self.temporaryName(of: leaf)
            // Whatever stands under the temporary name (a file, or a link planted to send the write
            // elsewhere) is removed first, without following it; a folder there stops the write.
            if unlinkat(parent.descriptor, temporary, 0) != 0 && errno != ENOENT {
                throw Failure(
                    path: ModelSources.path(of: temporary, in: parent.path),
                    message: "cannot remove what stands under the temporary name; delete it and run again")
            }
            let handle = openat(
                parent.descriptor, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
            guard handle >= 0 else {
                throw Failure(path: shown, message: "cannot write the file (\(String(cString: strerror(errno))))")
            }
            var offset = 0
            while offset < bytes.count {
                let count = systemWrite(handle, bytes.baseAddress! + offset, bytes.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else {
                    let reason = String(cString: strerror(errno))
                    close(handle)
                    throw Failure(path: shown, message: "cannot write the file (\(reason))")
                }
                offset += count
            }
            guard close(handle) == 0 else {
                throw Failure(path: shown, message: "cannot write the file (\(String(cString: strerror(errno))))")
            }
            return true
        }
    }

    /// Whether the regular file `leaf` holds exactly `bytes`.
    private func holds(_ leaf: String, exactly bytes: UnsafeRawBufferPointer) -> Bool {
        let file = openat(descriptor, leaf, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard file >= 0 else { return false }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG, Int(status.st_size) == bytes.count,
            let existing = try? BoundedFile.read(descriptor: file, limit: bytes.count)
        else { return false }
        // `memcmp`, not a generic comparison: the tool runs as a debug build in the build plugin,
        // where comparing a large model's megabytes element by element took tens of milliseconds.
        return existing.withUnsafeBytes { existing in
            guard let left = existing.baseAddress, let right = bytes.baseAddress else {
                return existing.count == bytes.count
            }
            return memcmp(left, right, bytes.count) == 0
        }
    }
}

// The C calls whose names the folder's own methods shadow.
private func systemOpen(_ path: String, _ flags: Int32) -> Int32 {
    #if canImport(Glibc)
        Glibc.open(path, flags)
    #else
        Darwin.open(path, flags)
    #endif
}

private func systemWrite(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
    #else
        Darwin.write(descriptor, bytes, count)
    #endif
}
