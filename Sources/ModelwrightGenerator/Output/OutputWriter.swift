import Foundation

/// One file the generator produces: its name inside the output folder and its full text.
public struct GeneratedFile: Sendable, Equatable {
    /// The file's name, such as `Trips+Records.swift`.
    public let name: String
    /// The file's contents.
    public let contents: String

    /// Creates a generated file.
    public init(name: String, contents: String) {
        self.name = name
        self.contents = contents
    }
}

/// Writes generated files so that builds stay incremental and output is never half-written:
/// a file whose bytes are unchanged is not touched (its modification date stays, so nothing
/// downstream rebuilds), and a changed file is replaced atomically.
public enum OutputWriter {
    /// Writes each file that differs from what is on disk, creating the folder if needed.
    /// - Returns: the names of the files written, in the order given.
    @discardableResult
    public static func write(_ files: [GeneratedFile], to directory: URL) throws -> [String] {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var written: [String] = []
        for file in files {
            let url = directory.appendingPathComponent(file.name)
            var contents = file.contents
            // The file's bytes are compared and written where the string keeps them: a large
            // model's files are megabytes, and copying them into `Data` first took a tenth of
            // the serial part of a run.
            let changed = try contents.withUTF8 { bytes in
                let data =
                    bytes.baseAddress.map {
                        Data(bytesNoCopy: UnsafeMutablePointer(mutating: $0), count: bytes.count, deallocator: .none)
                    } ?? Data()
                if let existing = FileManager.default.contents(atPath: url.path), existing == data {
                    return false
                }
                try data.write(to: url, options: .atomic)
                return true
            }
            if changed {
                written.append(file.name)
            }
        }
        return written
    }
}
