/// The text of one schema file, with what it takes to turn byte offsets into lines and columns.
package struct SourceFile: Sendable {
    /// The path shown in diagnostics, as the user gave it.
    package let path: String
    /// The file's UTF-8 bytes.
    package let bytes: [UInt8]
    /// The largest schema file read, in bytes: every check is linear or n·log n, and this keeps
    /// even those within a couple of seconds.
    package static let maximumSize = 16 * 1024 * 1024
    /// The byte offset at which each line starts; a line ends at LF, CR or CRLF.
    private let lineStarts: [Int]

    /// Wraps a file's bytes.
    package init(path: String, bytes: [UInt8]) {
        self.path = path
        self.bytes = bytes
        // A pointer and a counted loop: at -Onone (the build plugin's tool is a debug build),
        // enumerating a large model's bytes through generic iterators took tens of milliseconds.
        var starts = [0]
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                // LF, CR and CRLF each end one line, as in Swift and in the lexer.
                let byte = base[offset]
                offset += 1
                if byte == UInt8(ascii: "\r"), offset < buffer.count, base[offset] == UInt8(ascii: "\n") {
                    offset += 1
                }
                if byte == UInt8(ascii: "\n") || byte == UInt8(ascii: "\r") {
                    starts.append(offset)
                }
            }
        }
        lineStarts = starts
    }

    /// Wraps a file's text.
    package init(path: String, text: String) {
        self.init(path: path, bytes: Array(text.utf8))
    }

    /// The line and column (both from 1; the column counts UTF-8 bytes, as compilers do) of an offset.
    package func location(of offset: Int) -> SourcePosition {
        var low = 0
        var high = lineStarts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if lineStarts[middle] <= offset {
                low = middle
            } else {
                high = middle - 1
            }
        }
        return SourcePosition(line: low + 1, column: offset - lineStarts[low] + 1)
    }

    /// The text between two offsets.
    func text(_ range: Range<Int>) -> String {
        String(decoding: bytes[range], as: UTF8.self)
    }
}

/// Where a syntax node sits in its file: byte offsets, half-open.
package struct SourceRange: Sendable, Hashable {
    /// The offset of the node's first byte.
    package let start: Int
    /// The offset just past the node's last byte.
    package let end: Int

    /// Creates a range.
    package init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }

    /// The range covering both.
    func union(_ other: SourceRange) -> SourceRange {
        SourceRange(start: min(start, other.start), end: max(end, other.end))
    }
}
