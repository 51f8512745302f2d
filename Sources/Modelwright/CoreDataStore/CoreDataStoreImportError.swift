/// Why a Core Data store could not be imported. The Core Data store is untouched in every case,
/// and no new store is left at the destination.
public enum CoreDataStoreImportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file is not a Core Data SQLite store (not SQLite, truncated, or without Core Data's tables).
    case notACoreDataStore(path: String, reason: String)
    /// One of the store's files is a symbolic link, a FIFO, a device or a folder, or cannot be
    /// opened: the importer reads regular files only, and never follows a link.
    case unsafeFile(path: String, reason: String)
    /// The import could not create or write a file or folder it needs.
    case cannotWrite(path: String, reason: String)
    /// The copy of the store could not be written in the system's temporary folder `folder`
    /// (full, or past the process's file-size limit): the import copies the store there first.
    case cannotWriteTemporaryCopy(folder: String, reason: String)
    /// The store is in write-ahead-log mode and its log is provably lost: its `-wal` is not
    /// beside it (or holds no frame) while its `-shm` says the log holds pages, or the main file
    /// has not even Core Data's tables (which a clean close would have checkpointed into it).
    case missingWriteAheadLog(path: String)
    /// The store is in write-ahead-log mode, has no `-wal` (or one SQLite reads no frame of) and
    /// holds no object. Either it is empty
    /// and its last connection closed cleanly (SQLite then deletes the log), or its objects were
    /// in a `-wal` that was not copied with it. No byte tells the two apart: `Z_PRIMARYKEY`'s
    /// `Z_MAX` is written by the same transactions as the objects, so it was in the lost log too.
    /// An app that reads its own store where Core Data left it (not a copy) knows it is the first
    /// case, and may take this error as "nothing to import".
    case emptyWithoutWriteAheadLog(path: String)
    /// The store's metadata contradicts itself: a summary of the entity version hashes
    /// (`NSStoreModelVersionHashesDigest`, `NSStoreModelVersionChecksumKey`) disagrees with the
    /// hashes, so the store is damaged.
    case corruptMetadata(path: String, reason: String)
    /// The store was written by a Core Data whose metadata this importer does not read.
    case unsupportedFramework(path: String, reason: String)
    /// No version of the model has the store's entity version hashes: each difference names an
    /// entity, against the version closest to the store.
    case noMatchingVersion(path: String, closestVersion: String, differences: [String])
    /// The store's layout disagrees with the matched version (a table, column or entity id).
    case layoutMismatch(path: String, problem: String)
    /// A stored value cannot be read as its attribute's type.
    case unreadableValue(entity: String, attribute: String, primaryKey: Int64, reason: String)
    /// The migration plan has no schema for the version the store was imported at.
    case versionNotInPlan(schemaVersion: Int)
    /// A store already exists at the destination.
    case destinationExists(path: String)
    /// The destination is one of the Core Data store's own files (`-wal`, `-shm`, `-journal`) or
    /// inside its `_SUPPORT` folder, where Core Data would take the new store for its own.
    case destinationInsideStore(path: String, store: String)
    /// The written store did not pass verification; it was removed.
    case verificationFailed(problems: [String])

    /// A sentence naming the file, entity or attribute, and what to do.
    public var description: String {
        switch self {
        case .notACoreDataStore(let path, let reason):
            "\(path) is not a Core Data SQLite store: \(reason)"
        case .unsafeFile(let path, let reason):
            "\(path) cannot be read safely: \(reason)"
        case .cannotWrite(let path, let reason):
            "\(path) cannot be written: \(reason); choose an output in a folder you can write"
        case .cannotWriteTemporaryCopy(let folder, let reason):
            "the temporary folder \(folder), where the import first copies the store, cannot take the copy: \(reason); free space there (or raise the limit), or set TMPDIR to a folder with room for the store and its -wal"
        case .missingWriteAheadLog(let path):
            "\(path) is in write-ahead-log mode, but \(path)-wal is missing (or empty) and without it the store holds no objects: Core Data keeps its latest saves in the -wal; copy the store with its -wal and -shm files"
        case .corruptMetadata(let path, let reason):
            "\(path) is damaged: \(reason); Core Data writes them together, so the version that wrote the store cannot be told. Import from a backup of the store"
        case .emptyWithoutWriteAheadLog(let path):
            "\(path) holds no object and has no -wal (or one that holds no frame): either it is empty and was closed cleanly, or its objects were in a -wal that was not copied with it, and nothing in the file tells which. If it is a copy, copy it again with its -wal and -shm files; if it is the store where Core Data left it, it is empty and there is nothing to import"
        case .unsupportedFramework(let path, let reason):
            "\(path) was written by a Core Data this importer does not read: \(reason)"
        case .noMatchingVersion(let path, let closest, let differences):
            "no version of the model wrote \(path); against the closest version, '\(closest)', the store's entity hashes differ for: \(differences.joined(separator: "; ")). Was a model version edited after it shipped? Restore the version that wrote the store, then import the model again"
        case .layoutMismatch(let path, let problem):
            "\(path) does not have the layout of the version its hashes match: \(problem)"
        case .unreadableValue(let entity, let attribute, let primaryKey, let reason):
            "the value of '\(entity).\(attribute)' in row Z_PK \(primaryKey) cannot be imported: \(reason)"
        case .versionNotInPlan(let version):
            "the migration plan has no schema for version \(version), which the store matched; pass the app's full plan"
        case .destinationExists(let path):
            "\(path) already exists; the import writes a new store only: move it away or open it"
        case .destinationInsideStore(let path, let store):
            "\(path) is one of the files of the Core Data store \(store) or inside its support folder, which Core Data reads, rolls back or deletes as its own; choose an output outside the store's files"
        case .verificationFailed(let problems):
            "the imported store did not verify and was removed: \(problems.joined(separator: "; "))"
        }
    }
}
