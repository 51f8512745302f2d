import Foundation

/// Core Data's value encodings (`coredata-store-format.md`, §5), read by the attribute's declared
/// type rather than by what SQLite happened to store, into the values a Modelwright store keeps.
enum CoreDataValues {
    /// The value of column `index` of the current row, for `attribute`, as a column of `type` keeps it.
    static func value(
        _ statement: SQLiteStatement, _ index: Int32, attribute: CoreDataStoreModel.Attribute, type: AttributeType,
        externalData: CoreDataExternalData
    ) throws -> SQLValue {
        let stored = statement.value(index)
        if stored == .null { return .null }
        func unreadable(_ reason: String) -> Error {
            CoreDataValueError(reason: reason)
        }
        switch attribute.typeCode {
        case 100, 200, 300, 800:
            guard let integer = integer(stored) else { throw unreadable("\(describe(stored)) is not an integer") }
            if type == .bool { return .integer(integer == 0 ? 0 : 1) }
            return .integer(integer)
        case 400:
            // Core Data reads a decimal column as text, which SQLite makes of a REAL with 15 digits.
            let text: String
            switch stored {
            // An integer's digits are already the decimal's text.
            case .integer(let value): return .text(String(value))
            case .real(let value): text = String(format: "%.15g", value)
            case .text(let value): text = value.trimmingCharacters(in: .whitespaces)
            default: throw unreadable("\(describe(stored)) is not a decimal number")
            }
            guard let decimal = Decimal(string: text, locale: posix), !decimal.isNaN else {
                throw unreadable("'\(text)' is not a decimal number")
            }
            return .text(decimal.description)
        case 500, 600, 900:
            switch stored {
            case .integer(let value): return .real(Double(value))
            case .real(let value): return .real(value)
            case .text(let value):
                // Swift reads 'nan', which SQLite would store as NULL: no number Core Data keeps.
                guard let number = Double(value), !number.isNaN else {
                    throw unreadable("'\(value)' is not a number")
                }
                return .real(number)
            default: throw unreadable("\(describe(stored)) is not a number")
            }
        case 700, 1200:
            switch stored {
            case .text(let value): return .text(value)
            case .blob(let bytes): return .text(String(decoding: bytes, as: UTF8.self))
            case .integer(let value): return .text(String(value))
            case .real(let value): return .text(String(value))
            case .null: return .null
            }
        case 1100:
            // Core Data reads anything but 16 bytes as nil.
            guard case .blob(let bytes) = stored, bytes.count == 16 else { return .null }
            return .blob(bytes)
        case 1000, 1800:
            var bytes: Data
            switch stored {
            case .blob(let blob): bytes = blob
            // Text affinity or a careless writer can leave the bytes, marker and all, as TEXT:
            // read as they are stored, valid UTF-8 or not.
            case .text: bytes = statement.data(index)
            default: throw unreadable("\(describe(stored)) is not binary data")
            }
            if attribute.allowsExternalStorage { bytes = try unwrapExternal(bytes, folder: externalData) }
            if case .codable(let typeName) = type {
                return .text(try CoreDataArchivedValue.json(of: bytes, typeName: typeName))
            }
            return .blob(bytes)
        default:
            throw unreadable("Core Data attribute type \(attribute.typeCode) is not imported")
        }
    }

    /// The locale numbers are written in, made once: an import reads every decimal of a store.
    private static let posix = Locale(identifier: "en_US_POSIX")

    /// The bytes of a value Core Data may keep outside the store: marker 1 then the bytes; marker 2
    /// then the NUL-terminated name of a file in `_EXTERNAL_DATA`; marker 3, a file-backed future,
    /// looked for in the same folder. Bytes with another first byte are taken as they are.
    private static func unwrapExternal(_ bytes: Data, folder: CoreDataExternalData) throws -> Data {
        guard let marker = bytes.first else { return bytes }
        switch marker {
        case 1:
            return bytes.dropFirst()
        case 2, 3:
            let nameBytes = bytes.dropFirst().prefix { $0 != 0 }
            let name = String(decoding: nameBytes, as: UTF8.self)
            // The name is a UUID: anything with a path separator would leave the folder.
            guard !name.isEmpty, !name.contains("/"), name != "..", name != "." else {
                throw CoreDataValueError(reason: "its external data reference '\(name)' is not a file name")
            }
            guard let data = try folder.read(name) else {
                throw CoreDataValueError(
                    reason:
                        "its data is kept outside the store, in \(folder.path(of: name)), which is missing; copy the store's _SUPPORT folder with it"
                )
            }
            return data
        default:
            return bytes
        }
    }

    private static func integer(_ value: SQLValue) -> Int64? {
        switch value {
        case .integer(let integer): integer
        case .real(let real): Int64(exactly: real.rounded(.towardZero))
        case .text(let text): Int64(text.trimmingCharacters(in: .whitespaces))
        default: nil
        }
    }

    private static func describe(_ value: SQLValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let integer): "the integer \(integer)"
        case .real(let real): "the number \(real)"
        case .text(let text): "the text '\(text.prefix(40))'"
        case .blob(let bytes): "\(bytes.count) bytes of data"
        }
    }
}

/// Where a store keeps external binary data: `.<Name>_SUPPORT/_EXTERNAL_DATA` below the store's
/// folder, each component opened without following a link, so a file there cannot lead out.
struct CoreDataExternalData {
    var storeFolder: String
    var components: [String]

    /// The bytes of the file `name`, or `nil` when it is missing.
    func read(_ name: String) throws(CoreDataValueError) -> Data? {
        try CoreDataStoreFiles.readConfined(
            name, in: components, below: storeFolder, limit: CoreDataStoreFiles.externalDataLimit)
    }

    /// The file's path, for messages.
    func path(of name: String) -> String {
        ([storeFolder] + components + [name]).joined(separator: "/")
    }
}

/// A value that cannot be read; the reader adds the entity, attribute and key.
struct CoreDataValueError: Error {
    var reason: String
}
