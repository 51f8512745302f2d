import Foundation

/// A store on an SQLite file (`path`) or in memory (`nil`): the engine every `Store(url:…)` and
/// `Store.inMemory` opens.
///
/// A file store has one writer and ``Store/readerCount`` read-only connections, is judged before
/// its first statement by ``StoreVerification`` (its files and its whole catalog), runs in
/// write-ahead-log mode (a new file is created in it; one with content is switched only once it
/// proved to be a store) and is checkpointed at close. An in-memory store is one connection.
struct SQLiteEngine: StoreEngine {
    /// The file, or `nil` for a private in-memory database.
    let path: String?

    var location: String { path ?? ":memory:" }

    var isShared: Bool { path != nil }

    var commitSignal: CommitSignal { path == nil ? .none : .dataVersion }

    func openWriter() throws -> SQLiteConnection {
        try SQLiteConnection(path: path)
    }

    func openReaders() throws -> [SQLiteConnection] {
        guard let path else { return [] }
        return try (0..<Store.readerCount).map { _ in try SQLiteConnection(path: path, readOnly: true) }
    }

    func prepareForOpening(_ writer: SQLiteConnection, layout: SchemaLayout, plan: MigrationPlan?) throws -> Int64 {
        // First, before this connection's first statement: it judges the log and its index as found.
        guard let path else { return 0 }
        let verified = try StoreVerification.verify(writer, path: path, layout: layout, plan: plan)
        // A new file is created in write-ahead-log mode, so no process has to convert it while
        // others have it open; a file with content is switched only once it proved to be a store.
        if try Self.pageCount(of: writer) == 0 {
            try writer.useWriteAheadLog()
        }
        return verified
    }

    /// The file's size in pages; the statement is finalized on return, so no read stays open.
    private static func pageCount(of connection: SQLiteConnection) throws -> Int64 {
        let statement = try connection.prepare(connection.dialect.pageCount)
        return try statement.step() ? statement.int64(0) : 0
    }

    func verifyAgain(_ writer: SQLiteConnection, layout: SchemaLayout, plan: MigrationPlan?, since verified: Int64)
        throws
    {
        guard let path, try StoreVerification.schemaCookie(on: writer) != verified else { return }
        try StoreVerification.verifySchema(writer, path: path, layout: layout, plan: plan)
    }

    func schemaVersion(of writer: SQLiteConnection) throws -> Int64 {
        try StoreVerification.schemaCookie(on: writer)
    }

    /// ``prepareForOpening(_:layout:plan:)`` verified the whole file already, letting through a
    /// store whose full-text index objects alone differ (a store of an earlier release lacks
    /// triggers added since): those are recreated here, in the opening transaction, before any
    /// row is read or written.
    func verifyOpened(_ writer: SQLiteConnection, layout: SchemaLayout) throws {
        try StoreVerification.restoreSearchObjects(writer, layout: layout)
    }

    func didCreateSchema(on writer: SQLiteConnection) throws {
        try StoreVerification.stampIdentity(on: writer)
    }

    func didOpen(_ writer: SQLiteConnection) throws {
        if path != nil { try writer.useWriteAheadLog() }
    }

    /// A file's checkpoint, which moves the log into the file so it is one self-contained file.
    func closingStatements(for writer: SQLiteConnection) throws -> [String] {
        path == nil ? [] : [writer.dialect.checkpoint]
    }
}
