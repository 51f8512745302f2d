import Foundation

/// The size a binary property list grows to when Foundation reads it, measured on its bytes before
/// Foundation is asked: a binary property list may refer to one object from many places, so a
/// kilobyte can describe 2^60 objects (arrays or dictionaries sharing a child, nested), which
/// Foundation expands until the process runs out of memory. Other formats (XML, OpenStep) cannot
/// share an object, so their size is their length.
enum CoreDataPropertyListBound {
    /// The most objects a property list read by the importer may expand to.
    static let objectLimit = 1_000_000
    /// The deepest nesting of arrays, sets and dictionaries read.
    static let depthLimit = 512

    /// Throws when `data`, a binary property list, expands beyond ``objectLimit`` objects, nests
    /// deeper than ``depthLimit``, refers to itself, or has an offset outside its bytes. Any other
    /// data passes: Foundation then reads (or refuses) it.
    static func check(_ data: Data) throws(CoreDataValueError) {
        let bytes = [UInt8](data)
        guard bytes.count >= 40, bytes.starts(with: Array("bplist00".utf8)) else { return }
        var reader = Reader(bytes: bytes)
        try reader.measure()
    }

    private struct Reader {
        let bytes: [UInt8]
        var offsets: [Int] = []
        var referenceSize = 0
        /// The expanded size of each object measured so far; -1 while it is being measured.
        var sizes: [Int: Int] = [:]

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func measure() throws(CoreDataValueError) {
            let trailer = bytes.count - 32
            let offsetSize = Int(bytes[trailer + 6])
            referenceSize = Int(bytes[trailer + 7])
            let count = unsigned(at: trailer + 8, size: 8)
            let top = unsigned(at: trailer + 16, size: 8)
            let table = unsigned(at: trailer + 24, size: 8)
            guard (1...8).contains(offsetSize), (1...8).contains(referenceSize), count > 0, top < count,
                table >= 8, table <= trailer, count <= (trailer - table) / offsetSize
            else { throw malformed("its trailer") }
            offsets.reserveCapacity(count)
            for index in 0..<count {
                let offset = unsigned(at: table + index * offsetSize, size: offsetSize)
                guard offset >= 8, offset < table else { throw malformed("the offset of object \(index)") }
                offsets.append(offset)
            }
            let total = try size(of: top, depth: 0)
            guard total <= objectLimit else {
                throw CoreDataValueError(
                    reason:
                        "its property list expands to more than \(objectLimit) objects (objects shared many times); it is not read"
                )
            }
        }

        /// The number of objects `index` expands to, at most ``objectLimit`` + 1.
        private mutating func size(of index: Int, depth: Int) throws(CoreDataValueError) -> Int {
            if let known = sizes[index] {
                guard known >= 0 else {
                    throw CoreDataValueError(
                        reason: "its property list contains itself (object \(index)); it is not read")
                }
                return known
            }
            guard depth < depthLimit else {
                throw CoreDataValueError(
                    reason: "its property list nests deeper than \(depthLimit) levels; it is not read")
            }
            let offset = offsets[index]
            let marker = bytes[offset]
            let kind = marker >> 4
            // Arrays (A), ordered sets (B), sets (C) and dictionaries (D) refer to other objects.
            guard kind >= 0xA, kind <= 0xD else { return 1 }
            let (count, start) = try length(marker, at: offset)
            guard count <= bytes.count else { throw malformed("object \(index)") }
            let references = kind == 0xD ? count * 2 : count
            guard start + references * referenceSize <= bytes.count else { throw malformed("object \(index)") }
            sizes[index] = -1
            var total = 1
            for position in 0..<references {
                let child = unsigned(at: start + position * referenceSize, size: referenceSize)
                guard child < offsets.count else { throw malformed("a reference of object \(index)") }
                total += try size(of: child, depth: depth + 1)
                if total > objectLimit {
                    total = objectLimit + 1
                    break
                }
            }
            sizes[index] = total
            return total
        }

        /// The count in `marker`'s low nibble (or the integer after it, when the nibble is 15), and
        /// where the object's content starts.
        private func length(_ marker: UInt8, at offset: Int) throws(CoreDataValueError) -> (Int, Int) {
            let nibble = Int(marker & 0x0F)
            guard nibble == 0x0F else { return (nibble, offset + 1) }
            guard offset + 1 < bytes.count, bytes[offset + 1] >> 4 == 0x1 else { throw malformed("a length") }
            let size = 1 << Int(bytes[offset + 1] & 0x0F)
            guard size <= 8, offset + 2 + size <= bytes.count else { throw malformed("a length") }
            return (unsigned(at: offset + 2, size: size), offset + 2 + size)
        }

        /// The big-endian unsigned integer of `size` bytes at `offset`, clamped to `Int.max`.
        private func unsigned(at offset: Int, size: Int) -> Int {
            var value: UInt64 = 0
            for position in offset..<(offset + size) { value = value << 8 | UInt64(bytes[position]) }
            return value > UInt64(Int.max) ? Int.max : Int(value)
        }

        private func malformed(_ part: String) -> CoreDataValueError {
            CoreDataValueError(reason: "its binary property list is malformed (\(part) is out of range)")
        }
    }
}
