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
            let bytes = Data(file.contents.utf8)
            if let existing = FileManager.default.contents(atPath: url.path), existing == bytes {
                continue
            }
            try bytes.write(to: url, options: .atomic)
            written.append(file.name)
        }
        return written
    }
}
