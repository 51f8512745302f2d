import Foundation

/// A list of values carried as one bound argument: what a list test (`IN`) binds on an engine that
/// takes the whole list as one array parameter (``SQLDialect/bindsListsAsArrays``), so a statement's
/// parameter count no longer grows with the list. The engine's binding unpacks it when the
/// parameter is an array, and converts each value as it converts a single one.
///
/// The bytes are the runtime's own: a marker, then per value a tag and its payload (integers and
/// doubles as 8 big-endian bytes, text and bytes behind a 4-byte length).
package enum SQLValueList {
    /// What the argument starts with, so nothing else bound to an array parameter reads as a list.
    private static let marker: [UInt8] = Array("MWLIST\u{1}".utf8)

    /// `values` as one argument.
    package static func argument(_ values: [SQLValue]) -> SQLValue {
        var bytes = marker
        bytes.reserveCapacity(marker.count + values.count * 13)
        for value in values {
            switch value {
            case .null:
                bytes.append(0)
            case .integer(let integer):
                bytes.append(1)
                append(UInt64(bitPattern: integer), to: &bytes)
            case .real(let double):
                bytes.append(2)
                append(double.bitPattern, to: &bytes)
            case .text(let text):
                bytes.append(3)
                append(UInt32(text.utf8.count), to: &bytes)
                bytes += text.utf8
            case .blob(let data):
                bytes.append(4)
                append(UInt32(data.count), to: &bytes)
                bytes += data
            }
        }
        return .blob(Data(bytes))
    }

    /// The values of an argument made by ``argument(_:)``; `nil` for any other value.
    package static func values(of argument: SQLValue) -> [SQLValue]? {
        guard case .blob(let data) = argument, data.starts(with: marker) else { return nil }
        let bytes = [UInt8](data)
        var index = marker.count
        var values: [SQLValue] = []
        func read(_ count: Int) -> ArraySlice<UInt8>? {
            guard count >= 0, bytes.count - index >= count else { return nil }
            defer { index += count }
            return bytes[index..<(index + count)]
        }
        func number(_ count: Int) -> UInt64? {
            read(count).map { $0.reduce(0) { $0 << 8 | UInt64($1) } }
        }
        while index < bytes.count {
            let tag = bytes[index]
            index += 1
            switch tag {
            case 0:
                values.append(.null)
            case 1:
                guard let bits = number(8) else { return nil }
                values.append(.integer(Int64(bitPattern: bits)))
            case 2:
                guard let bits = number(8) else { return nil }
                values.append(.real(Double(bitPattern: bits)))
            case 3, 4:
                guard let length = number(4), let payload = read(Int(length)) else { return nil }
                values.append(tag == 3 ? .text(String(decoding: payload, as: UTF8.self)) : .blob(Data(payload)))
            default:
                return nil
            }
        }
        return values
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.bigEndian) { bytes += $0 }
    }
}
