import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The importer's file access: the user's files are reached through descriptors opened without
/// following a symbolic link and read only when they are regular files, so SQLite only ever opens
/// the importer's private copy, and a link, FIFO or device in the store's place is refused rather
/// than followed (or waited on forever).
enum CoreDataStoreFiles {
    /// The largest external data file read (Core Data keeps values over 100 KB outside the store).
    static let externalDataLimit = 1 << 30

    /// A descriptor of the regular file at `path`, or `nil` when nothing is there. The last
    /// component is never followed; the folders above it are the user's choice of place.
    static func openRegular(_ path: String) throws -> Int32? {
        let descriptor = openFile(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        if descriptor < 0 {
            let code = errno
            if code == ENOENT { return nil }
            throw CoreDataStoreImportError.unsafeFile(path: path, reason: reason(code))
        }
        do {
            try checkRegular(descriptor, path: path)
        } catch {
            close(descriptor)
            throw error
        }
        return descriptor
    }

    /// Copies the bytes read from `source` into a new file at `path`, which must not exist, in a
    /// folder of the temporary folder: a failed write names that folder.
    static func copy(_ source: Int32, from sourcePath: String, toPath path: String) throws {
        let target = openFile(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard target >= 0 else {
            throw CoreDataStoreImportError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(target) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw CoreDataStoreImportError.unsafeFile(path: sourcePath, reason: String(cString: strerror(errno)))
            }
            if count == 0 { return }
            var written = 0
            while written < count {
                let step = buffer.withUnsafeBytes { writeFile(target, $0.baseAddress! + written, count - written) }
                if step < 0 {
                    let code = errno
                    if code == EINTR { continue }
                    throw CoreDataStoreImportError.cannotWriteTemporaryCopy(
                        folder: URL(fileURLWithPath: path).deletingLastPathComponent().deletingLastPathComponent().path,
                        reason: writeFailure(code))
                }
                written += step
            }
        }
    }

    /// Why a write failed, in words that name the cause: a full disk or quota, or the process's
    /// file-size limit (`ulimit -f`, which fails the write with EFBIG once SIGXFSZ is ignored).
    static func writeFailure(_ code: Int32) -> String {
        let text = String(cString: strerror(code))
        if code == ENOSPC || code == EDQUOT { return "it is full (\(text))" }
        if code == EFBIG { return "the file reached this process's file-size limit, 'ulimit -f' (\(text))" }
        return text
    }

    /// The bytes of `name` in `components` (folders below `folder`), or `nil` when it is missing.
    /// No component is followed if it is a link: a link anywhere below `folder` is refused, and so
    /// is anything but a regular file of at most `limit` bytes.
    static func readConfined(_ name: String, in components: [String], below folder: String, limit: Int)
        throws(CoreDataValueError) -> Data?
    {
        var shown = folder
        var current = openFile(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard current >= 0 else { return nil }
        defer { close(current) }
        for component in components {
            shown += "/" + component
            let next = openat(current, component, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else {
                if errno == ENOENT { return nil }
                throw CoreDataValueError(
                    reason: "\(shown) cannot be read: \(confinedReason(errno, current, component))")
            }
            close(current)
            current = next
        }
        shown += "/" + name
        let file = openat(current, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC)
        guard file >= 0 else {
            if errno == ENOENT { return nil }
            throw CoreDataValueError(reason: "\(shown) cannot be read: \(confinedReason(errno, current, name))")
        }
        defer { close(file) }
        var status = stat()
        guard fstat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw CoreDataValueError(
                reason: "\(shown) is not a regular file (a folder, FIFO or device); it is not read")
        }
        guard Int(status.st_size) <= limit else {
            throw CoreDataValueError(reason: "\(shown) holds \(status.st_size) bytes, more than the \(limit) read")
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw CoreDataValueError(reason: "\(shown) cannot be read: \(String(cString: strerror(errno)))")
            }
            if count == 0 { return data }
            guard data.count + count <= limit else {
                throw CoreDataValueError(reason: "\(shown) holds more than the \(limit) bytes read")
            }
            data.append(contentsOf: buffer[0..<count])
        }
    }

    /// The file ``makeUniqueFolder(in:prefix:)`` writes first in each folder it makes: a folder
    /// without it was not made by an import, and no sweep touches it.
    static let ownerMarker = ".modelwright-import-owner"

    /// The only names an import writes in its folders: the marker, the copy of the user's store
    /// and the new store, each with SQLite's sibling files. A stale folder holding anything else
    /// is not the importer's alone, so it is left as it is.
    private static let ownedNames: Set<String> = {
        var names: Set<String> = [ownerMarker]
        for base in ["source.sqlite", "store"] {
            for suffix in ["", "-wal", "-shm", "-journal"] { names.insert(base + suffix) }
        }
        return names
    }()

    /// A new folder named `prefix`, this process's id and six random characters inside `parent`,
    /// created by this call alone (`mkdtemp` fails rather than reuse a name), for its owner only,
    /// holding the ``ownerMarker`` that lets a later run recognise it.
    static func makeUniqueFolder(in parent: String, prefix: String) throws -> URL {
        var template = Array((parent + "/" + prefix + "\(getpid())-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else {
            throw CoreDataStoreImportError.cannotWrite(
                path: parent, reason: "cannot create a folder in it (\(String(cString: strerror(errno))))")
        }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let marker = openFile(path + "/" + ownerMarker, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard marker >= 0 else {
            let reason = String(cString: strerror(errno))
            rmdir(path)
            throw CoreDataStoreImportError.cannotWrite(path: path, reason: "cannot create a file in it (\(reason))")
        }
        close(marker)
        return URL(fileURLWithPath: path)
    }

    /// Removes the folders ``makeUniqueFolder(in:prefix:)`` made in `parent` for a process that no
    /// longer runs (a killed import's copy of the user's data). A folder's name must start with
    /// `prefix` and end, after the last `tag` (after `prefix` when `tag` is empty), in
    /// `<pid>-XXXXXX`; it is removed only if it is this user's folder (not a link), holds the
    /// ``ownerMarker``, and holds nothing but regular files of the names an import writes. Those
    /// files are unlinked one by one and the folder removed, so a file the importer did not write
    /// is never deleted.
    static func removeStaleFolders(in parent: String, prefix: String, tag: String = "") {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent) else { return }
        for name in names.sorted() where name.hasPrefix(prefix) {
            let rest = name.dropFirst(prefix.count)
            let suffix: Substring
            if tag.isEmpty {
                suffix = rest
            } else {
                guard let range = rest.range(of: tag, options: .backwards) else { continue }
                suffix = rest[range.upperBound...]
            }
            let parts = suffix.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[1].count == 6, let pid = Int32(parts[0]), pid > 0, pid != getpid()
            else { continue }
            guard kill(pid, 0) != 0, errno == ESRCH else { continue }
            removeOwnedFolder(parent + "/" + name)
        }
    }

    /// Removes a folder ``makeUniqueFolder(in:prefix:)`` made for this run, its marker last: a run
    /// killed while it removes the folder leaves one that the next run's sweep still recognises.
    /// (Removed in any order, the marker could go first, and a folder holding a copy of the user's
    /// data stayed for good.)
    static func removeFolderMadeHere(_ folder: URL) {
        let path = folder.path
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        for entry in entries where entry != ownerMarker { unlink(path + "/" + entry) }
        unlink(path + "/" + ownerMarker)
        rmdir(path)
    }

    /// Removes `path` if it is a folder of this user that an import made and holds only files an
    /// import writes; leaves it untouched otherwise.
    private static func removeOwnedFolder(_ path: String) {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == getuid(),
            let entries = try? FileManager.default.contentsOfDirectory(atPath: path),
            entries.contains(ownerMarker)
        else { return }
        for entry in entries {
            var entryStatus = stat()
            guard ownedNames.contains(entry), lstat(path + "/" + entry, &entryStatus) == 0,
                entryStatus.st_mode & S_IFMT == S_IFREG
            else { return }
        }
        for entry in entries where entry != ownerMarker { unlink(path + "/" + entry) }
        unlink(path + "/" + ownerMarker)
        rmdir(path)
    }

    /// Flushes the file or folder at `path` to the disk (`fsync`): a file's contents, or a
    /// folder's entries.
    static func synchronize(_ path: String) throws {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CoreDataStoreImportError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else {
            throw CoreDataStoreImportError.cannotWrite(path: path, reason: String(cString: strerror(errno)))
        }
    }

    /// Gives the file at `temporary` the name `destination` only if nothing has that name (a hard
    /// link, which fails on any existing entry, even a dangling link), then drops the old name.
    static func placeWithoutReplacing(_ temporary: URL, at destination: URL) throws {
        guard link(temporary.path, destination.path) == 0 else {
            let code = errno
            if code == EEXIST { throw CoreDataStoreImportError.destinationExists(path: destination.path) }
            throw CoreDataStoreImportError.cannotWrite(path: destination.path, reason: String(cString: strerror(code)))
        }
        unlink(temporary.path)
    }

    /// Throws ``CoreDataStoreImportError/destinationInsideStore(path:store:)`` when `destination`
    /// names one of the files of the store at `store` (its `-wal`, `-shm` or `-journal`, or the
    /// store itself) or a path inside its `.<Name>_SUPPORT` folder. Folders are compared by device
    /// and inode, so another spelling of the store's folder (a link, `..`) is caught too; names are
    /// compared without case, as on a case-insensitive volume.
    static func checkOutside(store: URL, destination: URL) throws {
        var storeFolder = stat()
        guard stat(store.deletingLastPathComponent().path, &storeFolder) == 0 else { return }
        let base = store.lastPathComponent
        let siblings = Set(["", "-wal", "-shm", "-journal"].map { (base + $0).lowercased() })
        let supportName = ".\(store.deletingPathExtension().lastPathComponent)_SUPPORT"
        let support = supportName.lowercased()
        var supportFolder = stat()
        let supportExists =
            stat(store.deletingLastPathComponent().appendingPathComponent(supportName).path, &supportFolder) == 0
        let components = resolved(destination.standardizedFileURL.pathComponents)
        guard components.count > 1 else { return }
        for index in 1..<components.count {
            var folder = stat()
            let parent = NSString.path(withComponents: Array(components[0..<index]))
            guard stat(parent, &folder) == 0 else { continue }
            // A link elsewhere to the support folder (or one of its folders' own names) is inside it.
            if supportExists, folder.st_dev == supportFolder.st_dev, folder.st_ino == supportFolder.st_ino {
                throw CoreDataStoreImportError.destinationInsideStore(path: destination.path, store: store.path)
            }
            guard folder.st_dev == storeFolder.st_dev, folder.st_ino == storeFolder.st_ino else { continue }
            let name = components[index].lowercased()
            if name == support || (index == components.count - 1 && siblings.contains(name)) {
                throw CoreDataStoreImportError.destinationInsideStore(path: destination.path, store: store.path)
            }
        }
    }

    /// `components` with the longest existing leading path resolved (links and `..` followed), the
    /// rest appended as written.
    private static func resolved(_ components: [String]) -> [String] {
        for count in stride(from: components.count, through: 1, by: -1) {
            let leading = NSString.path(withComponents: Array(components[0..<count]))
            guard let real = realpath(leading, nil) else { continue }
            defer { free(real) }
            let resolvedLeading = URL(fileURLWithPath: String(cString: real)).pathComponents
            return resolvedLeading + components[count...]
        }
        return components
    }

    /// Whether anything, even a dangling link, has the name `path`.
    static func entryExists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    private static func checkRegular(_ descriptor: Int32, path: String) throws {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw CoreDataStoreImportError.unsafeFile(path: path, reason: String(cString: strerror(errno)))
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw CoreDataStoreImportError.unsafeFile(
                path: path, reason: "it is not a regular file (a folder, FIFO or device), so it is not read")
        }
    }

    /// Why `name` in the folder `folder` could not be opened: a link is named as one, whatever
    /// error the system gave for it.
    private static func confinedReason(_ code: Int32, _ folder: Int32, _ name: String) -> String {
        var status = stat()
        if fstatat(folder, name, &status, AT_SYMLINK_NOFOLLOW) == 0, status.st_mode & S_IFMT == S_IFLNK {
            return "it is a symbolic link, and nothing outside the store's folder is read"
        }
        return String(cString: strerror(code))
    }

    private static func reason(_ code: Int32) -> String {
        code == ELOOP
            ? "it is a symbolic link, which the importer does not follow; give the path of the file itself"
            : String(cString: strerror(code))
    }
}

// The C calls whose names Foundation's types shadow.
private func openFile(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
    #if canImport(Glibc)
        Glibc.open(path, flags, mode)
    #else
        Darwin.open(path, flags, mode)
    #endif
}

private func writeFile(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.write(descriptor, bytes, count)
    #else
        Darwin.write(descriptor, bytes, count)
    #endif
}
