/// What can go wrong in a store, in the schema's terms.
public enum StoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The store was created for a different schema; open it with a ``MigrationPlan`` to migrate it.
    case schemaMismatch(storeChecksum: String, storeVersion: Int?, expectedChecksum: String, expectedVersion: Int)
    /// The store records no version number (or one its checksum contradicts), and several versions
    /// have its checksum with steps between them that change data, so which one wrote it is unknown.
    case unresolvableStoreVersion(checksum: String, versions: [Int], reason: String)
    /// A write would give two records of `entity` the same values for a uniqueness constraint.
    case uniquenessViolation(entity: String, attributes: [String])
    /// A delete was refused by a `deny` rule: `relationship` of `entity` still reaches records.
    case deleteDenied(entity: String, relationship: String)
    /// A required to-one relationship would be left empty, for instance by `nullify` on its inverse.
    case requiredRelationshipEmpty(entity: String, relationship: String)
    /// A to-one relationship names a record that does not exist when the transaction commits.
    case danglingReference(entity: String, relationship: String)
    /// An update or delete named a record that does not exist.
    case recordNotFound(entity: String, id: String)
    /// The schema has no entity by this name (a record type and schema disagree).
    case unknownEntity(String)
    /// The entity has no attribute or relationship by this name.
    case unknownProperty(entity: String, property: String)
    /// An abstract entity cannot have records of its own.
    case abstractEntity(String)
    /// A request uses something the store cannot evaluate, with the reason.
    case unsupportedQuery(String)
    /// The database (an SQLite file or a PostgreSQL database) has tables Modelwright did not create, or the
    /// file is not a database at all.
    case notAStore(path: String)
    /// The store holds another model's data (the model name it records is `found`); it was left
    /// untouched. `path` is where it is: a file's path, or a server's URL without its password.
    case otherModel(found: String, expected: String, path: String)
    /// A value could not be written or read as its attribute's type.
    case invalidValue(entity: String, message: String)
    /// The store was closed with ``Store/close()``; open it again to read or write.
    case storeClosed
    /// An upsert's record matches different stored records of `entity`: each match names what it
    /// matched on (`["id"]`, or a uniqueness constraint's attributes).
    case ambiguousUpsert(entity: String, matches: [[String]])
    /// The store's history tables were written in a format this runtime does not read (a newer
    /// Modelwright's); the store is left as it is.
    case unsupportedHistoryFormat(found: String, supported: String)
    /// SQLite rolled back the whole transaction after `cause` (a full disk, an I/O error, a
    /// trigger's `RAISE(ROLLBACK)`): nothing the transaction wrote was saved, and every later
    /// operation in the same `performAndSave` closure, or migration stage, throws this error.
    ///
    /// The cause stays an ``SQLiteError``: a pattern that reads its `code` or `extendedCode`
    /// keeps compiling. Code that should not name an engine reads ``abortCause`` instead, which
    /// this case and ``transactionAbortedByEngine(cause:)`` both give.
    case transactionAborted(cause: SQLiteError)
    /// The engine (PostgreSQL) rolled back the whole transaction after `cause` (any failed
    /// statement aborts a PostgreSQL transaction): nothing it wrote was saved, and every later
    /// statement of it throws this error until it is rolled back. SQLite's aborts are
    /// ``transactionAborted(cause:)``; ``abortCause`` reads either.
    case transactionAbortedByEngine(cause: EngineFailure)
    /// The file at `path` holds tables, columns, indexes, triggers or views that the schema its
    /// metadata names does not create, or lacks some that it does: another program changed it.
    /// Each difference is one sentence. The file was left untouched.
    case unexpectedSchema(path: String, differences: [String])
    /// The store's file was moved, replaced or deleted while the store had it open; nothing more
    /// is written, since the write would go to a file no longer at `path`.
    case storeFileReplaced(path: String)
    /// The store, read with the write-ahead log found beside it without its index (`-shm`), is
    /// damaged: the log most likely belongs to another copy of the store; or a rollback journal
    /// (`-journal`) beside it holds an interrupted write that does not prove to be the store's
    /// own. Neither file was changed.
    case damagedStore(path: String, problems: [String])
    /// Writing `value` under `key` into the store's metadata table (`_modelwright_metadata`) did
    /// not change exactly one row, or reading the row back gives `found` (`nil`: no row) instead:
    /// a trigger or rule on the table changes or swallows its writes. The transaction that wrote
    /// it (a new store's schema, a migration stage) was rolled back, so the store never records a
    /// version its tables do not hold.
    case metadataNotRecorded(key: String, value: String, found: String?)

    /// Why the engine rolled back the transaction, in terms of no particular engine, when this
    /// error is ``transactionAborted(cause:)`` or ``transactionAbortedByEngine(cause:)``.
    public var abortCause: EngineFailure? {
        switch self {
        case .transactionAborted(let cause): cause.engineFailure
        case .transactionAbortedByEngine(let cause): cause
        default: nil
        }
    }

    /// A sentence that names the entity, attribute or relationship involved.
    public var description: String {
        switch self {
        case .schemaMismatch(let storeChecksum, let storeVersion, let expectedChecksum, let expectedVersion):
            "the store was created for schema \(storeVersion.map { "version \($0)" } ?? "(unknown version)") with checksum \(storeChecksum), but this app's schema is version \(expectedVersion) with checksum \(expectedChecksum)"
        case .unresolvableStoreVersion(let checksum, let versions, let reason):
            "the store records no version number that matches its checksum \(checksum), which versions \(versions.map(String.init).joined(separator: ", ")) share, and the steps between them change data (\(reason)); it was left untouched. Record the version that wrote it in the store's table \(SchemaSQL.metadataTable) (key 'version') and open it again"
        case .uniquenessViolation(let entity, let attributes):
            "another \(entity) already has the same \(attributes.joined(separator: ", ")) (uniqueness constraint on \(entity)(\(attributes.joined(separator: ", "))))"
        case .deleteDenied(let entity, let relationship):
            "cannot delete this \(entity): its relationship '\(relationship)' has the delete rule 'deny' and still reaches records"
        case .requiredRelationshipEmpty(let entity, let relationship):
            "the required relationship '\(relationship)' of \(entity) would be left empty"
        case .danglingReference(let entity, let relationship):
            "the relationship '\(relationship)' of \(entity) points at a record that does not exist"
        case .recordNotFound(let entity, let id):
            "no \(entity) with ID \(id)"
        case .unknownEntity(let name):
            "the schema has no entity '\(name)'"
        case .unknownProperty(let entity, let property):
            "the entity '\(entity)' has no attribute or relationship '\(property)'"
        case .abstractEntity(let name):
            "'\(name)' is abstract and cannot have records of its own"
        case .unsupportedQuery(let reason):
            "unsupported request: \(reason)"
        case .notAStore(let path):
            "\(path) is not a Modelwright store (a database with tables of its own, or a file that is not a "
                + "database at all); it was left untouched. Open an empty database, or the store Modelwright created"
        case .otherModel(let found, let expected, let path):
            "\(path) holds a store of the model '\(found)', not '\(expected)'; it was left untouched. Open it with "
                + "\(found)'s schema, or give this model a database of its own"
        case .invalidValue(let entity, let message):
            "invalid value for \(entity): \(message)"
        case .storeClosed:
            "the store was closed; open it again to read or write"
        case .ambiguousUpsert(let entity, let matches):
            "cannot upsert this \(entity): it matches different stored records by "
                + matches.map { "(\($0.joined(separator: ", ")))" }.joined(separator: " and ")
                + "; update them one by one, or make the record agree with one of them"
        case .unsupportedHistoryFormat(let found, let supported):
            "the store's history is in format \(found), and this version of Modelwright reads format \(supported); "
                + "open it with the Modelwright that wrote it, or without history"
        case .transactionAborted(let cause):
            "SQLite rolled back the whole transaction after an error (\(cause)); nothing it wrote was saved, "
                + "and the operations after the error did not run. Free space or fix the cause, then write again"
        case .transactionAbortedByEngine(let cause):
            "\(cause.engine) rolled back the whole transaction after an error (\(cause)); nothing it wrote was "
                + "saved, and the operations after the error did not run. Fix the cause, then write again"
        case .unexpectedSchema(let path, let differences):
            "\(path) is not a store as this app's schema creates it, so another program changed it; it was left "
                + "untouched. Restore a copy the app wrote, or delete it to start again. Differences: "
                + differences.prefix(20).joined(separator: "; ")
                + (differences.count > 20 ? "; and \(differences.count - 20) more" : "")
        case .damagedStore(let path, let problems):
            "\(path), read with the log (-wal or -journal) beside it, is damaged, most likely because the log "
                + "belongs to another copy of the store or another database; neither file was changed. Move the log "
                + "aside to open the store as it was before it, or restore a copy. Found: "
                + problems.prefix(5).joined(separator: "; ")
        case .metadataNotRecorded(let key, let value, let found):
            "the store's table \(SchemaSQL.metadataTable) did not record \(key) = \(value) (it holds "
                + (found.map { "\($0)" } ?? "no such row")
                + "): a trigger or rule on the table changes its writes. The transaction was rolled back and "
                + "nothing it wrote was kept. Drop the trigger or rule on \(SchemaSQL.metadataTable), then open "
                + "the store again"
        case .storeFileReplaced(let path):
            "the store's file at \(path) was moved, replaced or deleted while the store was open; nothing more was "
                + "written to it. Close the store and open the file again"
        }
    }
}
