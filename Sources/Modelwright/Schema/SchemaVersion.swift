/// One version of a model's schema as a migration plan refers to it: its number and checksum,
/// always at hand, and its ``SchemaDescription``, which may be kept as a ``SchemaArchive`` text and
/// decoded only when a migration first needs it.
///
/// Generated code keeps the current version as a typed `SchemaDescription` and every earlier one
/// archived, so a long history compiles as one string literal per version, and opening a store
/// decodes no version it does not migrate through:
///
/// ```swift
/// static let version1 = SchemaVersion(
///     version: 1,
///     checksum: "3f3082ed67f0347a377987a2340ea5f106bbc7a5f973946e9f1e51eb64b4249e",
///     archive: """
///         modelwright-schema-archive 2
///         model Trips 1
///         entity User
///         attribute username string
///         """
/// )
/// static let version2 = SchemaVersion(schema)  // the current version, typed
/// ```
///
/// An archived version is decoded once, whichever thread asks first, and the decoded schema's
/// checksum must be the one recorded beside it.
///
/// ## Topics
///
/// ### Identity
/// - ``version``
/// - ``checksum``
///
/// ### Structure
/// - ``schema()``
public struct SchemaVersion: Sendable {
    /// The version number, counted from 1.
    public let version: Int
    private let storage: Storage

    private enum Storage: Sendable {
        case described(SchemaDescription)
        case archived(ArchivedSchema, checksum: SchemaChecksum)
    }

    /// The version's checksum: for an archived version, the one recorded beside the archive, known
    /// without decoding it; otherwise computed from the schema (as `SchemaDescription.checksum` is,
    /// on every call).
    public var checksum: SchemaChecksum {
        switch storage {
        case .described(let schema): schema.checksum
        case .archived(_, let checksum): checksum
        }
    }

    /// A version whose schema is at hand, such as the current one or a hand-written plan's.
    public init(_ schema: SchemaDescription) {
        version = schema.version
        storage = .described(schema)
    }

    /// A version kept as a ``SchemaArchive`` text, with the checksum recorded when it was archived:
    /// how generated code keeps every version before the current one.
    @_spi(Generated) public init(version: Int, checksum: String, archive: String) {
        self.version = version
        storage = .archived(ArchivedSchema(archive), checksum: SchemaChecksum(hexDigits: checksum))
    }

    /// The version's schema, decoded from its archive on first use.
    ///
    /// - Throws: ``MigrationError/unreadableSchemaArchive(version:reason:)`` when the archive is not
    ///   one of this version, ``MigrationError/archivedSchemaMismatch(version:recordedChecksum:archiveChecksum:)``
    ///   when it decodes to a schema with another checksum than the recorded one.
    public func schema() throws -> SchemaDescription {
        switch storage {
        case .described(let schema): schema
        case .archived(let archive, let checksum): try archive.schema(version: version, checksum: checksum)
        }
    }

    /// Whether ``schema()`` has nothing left to decode: tests check that opening a store decodes
    /// only the versions it migrates through.
    package var isDecoded: Bool {
        switch storage {
        case .described: true
        case .archived(let archive, _): archive.isDecoded
        }
    }
}

/// An archive text and, once decoded, its schema (or why it could not be decoded): shared by the
/// copies of a ``SchemaVersion``, so each version is decoded at most once.
private final class ArchivedSchema: Sendable {
    private let text: String
    private let decoded = Locked<Result<SchemaDescription, MigrationError>?>(nil)

    init(_ text: String) {
        self.text = text
    }

    var isDecoded: Bool { decoded.withLock { $0 != nil } }

    func schema(version: Int, checksum: SchemaChecksum) throws -> SchemaDescription {
        try decoded.withLock { decoded in
            if let decoded { return decoded }
            let result = Result { try decode(version: version, checksum: checksum) }.mapError {
                $0 as? MigrationError ?? .unreadableSchemaArchive(version: version, reason: "\($0)")
            }
            decoded = result
            return result
        }.get()
    }

    private func decode(version: Int, checksum: SchemaChecksum) throws -> SchemaDescription {
        let schema = try SchemaArchive.schema(from: text)
        guard schema.version == version else {
            throw MigrationError.unreadableSchemaArchive(
                version: version, reason: "the archive holds version \(schema.version)")
        }
        let decodedChecksum = schema.checksum
        guard decodedChecksum == checksum else {
            throw MigrationError.archivedSchemaMismatch(
                version: version, recordedChecksum: checksum.hexDigits, archiveChecksum: decodedChecksum.hexDigits)
        }
        return schema
    }
}
