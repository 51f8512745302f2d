import Foundation

/// Starts the next version of a model as a copy of its current one.
package enum NewVersion {
    /// The text of version N+1, copied from version N: the header's number raised, and what
    /// described the step *into* version N removed (`@renamed(from:)` annotations and the
    /// `migration from` block with its doc comment), since the new step starts with no changes.
    package static func text(after version: LoweredVersion) throws -> String {
        guard version.number < Parser.maximumVersion else { throw VersionLimitReached(version: version.number) }
        // Read again as the pipeline read it: never through a link.
        var bytes = try ConfinedFolder.readFile(atPath: version.path, limit: SourceFile.maximumSize)
        let graph = version.graph
        var removals: [Range<Int>] = []
        for entity in graph.entities {
            let ranges =
                [entity.renameRange] + entity.attributes.map(\.renameRange) + entity.relationships.map(\.renameRange)
            for range in ranges.compactMap({ $0 }) {
                // The space before the annotation goes too.
                let start =
                    range.start > 0 && bytes[range.start - 1] == UInt8(ascii: " ") ? range.start - 1 : range.start
                removals.append(start..<range.end)
            }
        }
        if let migration = graph.migration {
            var start = lineStart(of: migration.range.start, in: bytes)
            // Its doc comment lines and the blank line before them.
            while start > 0 {
                let previous = lineStart(of: start - 1, in: bytes)
                let line = String(decoding: bytes[previous..<start], as: UTF8.self).trimmingCharacters(
                    in: .whitespacesAndNewlines)
                guard line.hasPrefix("///") || line.isEmpty else { break }
                start = previous
            }
            var end = migration.range.end
            while end < bytes.count,
                bytes[end] == UInt8(ascii: "\n") || bytes[end] == UInt8(ascii: "\r") || bytes[end] == UInt8(ascii: " ")
            { end += 1 }
            removals.append(start..<end)
        }
        // One pass that copies what is kept: removing the ranges one by one moved the rest of
        // the file each time, quadratic in a file with many '@renamed'.
        var kept: [UInt8] = []
        kept.reserveCapacity(bytes.count)
        var next = 0
        for range in removals.sorted(by: { $0.lowerBound < $1.lowerBound }) where range.upperBound > next {
            kept.append(contentsOf: bytes[next..<max(next, range.lowerBound)])
            next = range.upperBound
        }
        kept.append(contentsOf: bytes[min(next, bytes.count)...])
        bytes = kept
        var text = String(decoding: bytes, as: UTF8.self)
        if !text.hasSuffix("\n") { text += "\n" }
        // The header, `model Name version N`, comes before everything removed, so its offset holds.
        let headerStart = text.utf8.index(text.startIndex, offsetBy: min(graph.headerRange.start, text.utf8.count))
        if let range = text.range(
            of: "version\\s+\(version.number)\\b", options: .regularExpression,
            range: headerStart..<text.endIndex)
        {
            text.replaceSubrange(range, with: "version \(version.number + 1)")
        }
        return text
    }

    private static func lineStart(of offset: Int, in bytes: [UInt8]) -> Int {
        var index = offset
        while index > 0, bytes[index - 1] != UInt8(ascii: "\n"), bytes[index - 1] != UInt8(ascii: "\r") { index -= 1 }
        return index
    }
}

/// Why no version can follow the given one: it has the highest number a version may have.
package struct VersionLimitReached: LocalizedError, CustomStringConvertible {
    /// The current version's number.
    package let version: Int

    /// The message, for people.
    package var description: String {
        "version \(version) is the highest a model may have (\(Parser.maximumVersion)); no version can follow it"
    }

    /// The message, as Foundation's error reporting asks for it.
    package var errorDescription: String? { description }
}
