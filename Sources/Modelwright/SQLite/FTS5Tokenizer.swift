import CSQLite
import Foundation

/// SQLite FTS5's own tokenizer, set up exactly as the store's full-text indexes set it up, for
/// splitting text without a store: ``SearchTokenizer`` asks it, so a search evaluated in memory
/// (`SearchQuery.matches`) reads words as the index does, whatever the script, the Unicode version
/// of the scalars or the length of a word. Earlier, a rule written in Swift imitated it and
/// disagreed on combining marks of non-Latin scripts, scalars FTS5's Unicode 6.1 tables do not
/// know and words over 32,768 bytes: one implementation cannot disagree with itself.
///
/// The tokenizer comes from a process-wide in-memory connection, opened once, through the
/// `fts5_api` that `SELECT fts5(?1)` hands out. Each call creates its own tokenizer instance
/// (`unicode61` keeps a folding buffer in it, so one instance cannot serve two threads at once);
/// creating one costs a small allocation, no SQL.
enum FTS5Tokenizer {
    /// The `tokenize` option of every full-text index the store creates: `unicode61`, folding
    /// every diacritic it knows. The index's DDL and the in-memory tokenizer both read it.
    static let arguments = ["unicode61", "remove_diacritics", "2"]

    /// FTS5 cuts every token longer than this many bytes to this length, in the index and in
    /// queries alike (`FTS5_MAX_TOKEN_SIZE`), even inside a UTF-8 sequence.
    static let maximumTokenBytes = 32_768

    /// The tokens FTS5 makes of `text`, in order, each as the bytes it compares (cut to
    /// ``maximumTokenBytes``, as the index and the query parser cut them). Empty when this SQLite
    /// has no FTS5, where no store can search either.
    static func tokens(of text: String) -> [[UInt8]] {
        tokenize(text).map { $0.count > maximumTokenBytes ? Array($0.prefix(maximumTokenBytes)) : $0 }
    }

    /// The tokens FTS5's tokenizer returns for `text`, whole, as text: what a query is built from.
    static func words(of text: String) -> [String] {
        tokenize(text).map { String(decoding: $0, as: UTF8.self) }
    }

    private static func tokenize(_ text: String) -> [[UInt8]] {
        guard let found = shared else { return [] }
        return found.tokenize(text)
    }

    /// The connection the tokenizer belongs to, opened on first use and kept for the process.
    private static let shared: Found? = Found()

    /// The tokenizer module found on a private in-memory connection.
    ///
    /// `@unchecked Sendable`: every stored property is set once in `init` and never changes, and
    /// tokenizing only calls the module's functions, which touch neither the connection nor shared
    /// state (each call has its own tokenizer instance).
    private final class Found: @unchecked Sendable {
        private let connection: OpaquePointer
        private let module: fts5_tokenizer
        private let context: UnsafeMutableRawPointer?

        init?() {
            var handle: OpaquePointer?
            guard
                sqlite3_open_v2(
                    ":memory:", &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
                    == SQLITE_OK, let handle
            else {
                sqlite3_close(handle)
                return nil
            }
            guard let api = Self.api(of: handle) else {
                sqlite3_close(handle)
                return nil
            }
            var module = fts5_tokenizer()
            var context: UnsafeMutableRawPointer?
            guard let find = api.pointee.xFindTokenizer,
                find(api, FTS5Tokenizer.arguments[0], &context, &module) == SQLITE_OK,
                module.xCreate != nil, module.xDelete != nil, module.xTokenize != nil
            else {
                sqlite3_close(handle)
                return nil
            }
            connection = handle
            self.module = module
            self.context = context
        }

        deinit {
            sqlite3_close(connection)
        }

        /// The `fts5_api` of `handle`, handed out by the SQL function `fts5` through a pointer
        /// bound with the type name FTS5 expects.
        private static func api(of handle: OpaquePointer) -> UnsafeMutablePointer<fts5_api>? {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(handle, "SELECT fts5(?1)", -1, &statement, nil) == SQLITE_OK else { return nil }
            defer { sqlite3_finalize(statement) }
            var api: UnsafeMutablePointer<fts5_api>?
            // SQLite keeps the type name's pointer until the statement runs: a static string lives on.
            let type: StaticString = "fts5_api_ptr"
            let stepped = withUnsafeMutablePointer(to: &api) { pointer in
                type.utf8Start.withMemoryRebound(to: CChar.self, capacity: type.utf8CodeUnitCount + 1) { name in
                    sqlite3_bind_pointer(statement, 1, pointer, name, nil) == SQLITE_OK
                        && sqlite3_step(statement) == SQLITE_ROW
                }
            }
            return stepped ? api : nil
        }

        func tokenize(_ text: String) -> [[UInt8]] {
            guard let create = module.xCreate, let delete = module.xDelete, let run = module.xTokenize else {
                return []
            }
            var instance: OpaquePointer?
            let created = FTS5Tokenizer.withCStrings(Array(FTS5Tokenizer.arguments.dropFirst())) { arguments in
                create(context, arguments.baseAddress, Int32(arguments.count), &instance)
            }
            guard created == SQLITE_OK, let instance else { return [] }
            defer { delete(instance) }
            var tokens: [[UInt8]] = []
            var text = text
            text.withUTF8 { bytes in
                guard bytes.count <= Int(Int32.max) else { return }
                withUnsafeMutablePointer(to: &tokens) { collected in
                    _ = bytes.withMemoryRebound(to: CChar.self) { characters in
                        run(instance, collected, 0, characters.baseAddress, Int32(characters.count)) {
                            collected, _, token, count, _, _ in
                            let tokens = collected?.assumingMemoryBound(to: [[UInt8]].self)
                            if let token, count > 0 {
                                tokens?.pointee.append(
                                    Array(UnsafeRawBufferPointer(start: token, count: Int(count))))
                            }
                            return SQLITE_OK
                        }
                    }
                }
            }
            return tokens
        }
    }

    /// Runs `body` with `strings` as an array of C strings that live until it returns.
    private static func withCStrings<Result>(
        _ strings: [String], _ body: (UnsafeMutableBufferPointer<UnsafePointer<CChar>?>) -> Result
    ) -> Result {
        let copies = strings.map { strdup($0) }
        defer { for copy in copies { free(copy) } }
        var pointers = copies.map { $0.map { UnsafePointer($0) } }
        return pointers.withUnsafeMutableBufferPointer { body($0) }
    }
}
