import Foundation
import ModelwrightSchema

/// Writes import and export output the way the generator does: atomically, and only when the
/// bytes change, so build systems and version control see no change for an unchanged model.
enum FileOutput {
    /// Writes `data` to `url` unless the file already holds exactly it; returns whether it wrote.
    static func write(_ data: Data, to url: URL) throws -> Bool {
        if let existing = FileManager.default.contents(atPath: url.path), existing == data { return false }
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url, options: .atomic)
        return true
    }
}
