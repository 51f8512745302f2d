/// The byte offset at which each line of a file starts, to turn an offset into a line and a column
/// by binary search: built in one pass, so locating every element of a file stays linear overall.
///
/// A line ends at a line feed, a carriage return, or a CR LF pair, as in Swift and XML.
struct LineTable {
    private let starts: [Int]

    /// The table of `bytes`.
    init(_ bytes: [UInt8]) {
        var starts = [0]
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte == 0x0A {
                starts.append(index + 1)
            } else if byte == 0x0D {
                if index + 1 < count, bytes[index + 1] == 0x0A { index += 1 }
                starts.append(index + 1)
            }
            index += 1
        }
        self.starts = starts
    }

    /// The line and column (both from 1; the column counts UTF-8 bytes) of the byte at `offset`.
    func location(of offset: Int) -> CoreDataLocation {
        var low = 0
        var high = starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= offset {
                low = middle
            } else {
                high = middle - 1
            }
        }
        return CoreDataLocation(line: low + 1, column: max(offset - starts[low], 0) + 1)
    }
}
