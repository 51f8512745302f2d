import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes generated files as a set, so that builds stay incremental and output is never mixed:
/// a file whose bytes are unchanged is not touched (its modification date stays, so nothing
/// downstream rebuilds), and the changed files replace the old ones together.
///
/// The changed files are first written beside their targets under temporary names; then a
/// journal listing them is written, the files are renamed into place, and the journal removed.
/// A run that stops before the journal exists changed nothing; one that stops after it is
/// completed by the next run, which also removes any temporary file a stopped run left. A file
/// the compiler sees is therefore always from one run: the old set or the new one.
package enum OutputWriter {
    /// The journal of a set being renamed into place: one file name per line.
    static let journalName = ".modelwright-pending"
    /// What marks a temporary file: the file's name with this after it, behind a dot.
    static let temporarySuffix = ".modelwright-new"

    /// Writes each file that differs from what is on disk, creating the folder if needed.
    /// - Returns: the names of the files written, in the order given.
    @discardableResult
    package static func write(_ files: [RenderedFile], to directory: URL) throws -> [String] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try recover(directory)
        var changed: [String] = []
        do {
            for file in files where try writeTemporary(file, in: directory) {
                changed.append(file.name)
            }
        } catch {
            // Nothing was renamed yet: removing the temporary files leaves the old set as it was.
            for file in files { try? FileManager.default.removeItem(at: temporary(file.name, in: directory)) }
            throw error
        }
        guard !changed.isEmpty else { return [] }
        let journal = directory.appendingPathComponent(journalName)
        try Data(changed.map { $0 + "\n" }.joined().utf8).write(to: journal, options: .atomic)
        try recover(directory)
        return changed
    }

    /// Writes `file` under its temporary name when it differs from the file on disk; returns
    /// whether it did.
    private static func writeTemporary(_ file: RenderedFile, in directory: URL) throws -> Bool {
        let url = directory.appendingPathComponent(file.name)
        var contents = file.contents
        // The file's bytes are compared and written where the string keeps them: a large
        // model's files are megabytes, and copying them into `Data` first took a tenth of
        // the serial part of a run.
        return try contents.withUTF8 { bytes in
            let data =
                bytes.baseAddress.map {
                    Data(bytesNoCopy: UnsafeMutablePointer(mutating: $0), count: bytes.count, deallocator: .none)
                } ?? Data()
            if let existing = FileManager.default.contents(atPath: url.path), existing == data {
                return false
            }
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), isFolder.boolValue {
                throw CocoaError(.fileWriteFileExists, userInfo: [NSFilePathErrorKey: url.path])
            }
            try data.write(to: temporary(file.name, in: directory))
            return true
        }
    }

    /// Finishes a set whose journal exists by renaming its temporary files into place, then
    /// removes the journal and every temporary file left by a run that stopped before its journal.
    static func recover(_ directory: URL) throws {
        let journal = directory.appendingPathComponent(journalName)
        if let listed = FileManager.default.contents(atPath: journal.path) {
            for name in String(decoding: listed, as: UTF8.self).split(separator: "\n").map(String.init) {
                let source = temporary(name, in: directory)
                guard FileManager.default.fileExists(atPath: source.path) else { continue }
                guard rename(source.path, directory.appendingPathComponent(name).path) == 0 else {
                    throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: source.path])
                }
            }
            try FileManager.default.removeItem(at: journal)
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasPrefix(".") && name.hasSuffix(temporarySuffix) {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }

    /// Where `name` is written before it is renamed into place: hidden, and not a `.swift` file,
    /// so no build picks it up.
    private static func temporary(_ name: String, in directory: URL) -> URL {
        directory.appendingPathComponent("." + name + temporarySuffix)
    }
}
