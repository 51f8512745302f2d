import Foundation
import Notes

#if MODELWRIGHT_POSTGRES
    import ModelwrightPostgres
#endif

/// The server's settings, from its arguments, else its environment, else the defaults.
struct Settings {
    var host = "127.0.0.1"
    var port = 8080
    var sqlitePath = "sync-server.sqlite"
    var postgresURL: String?
    /// Bearer tokens and the users they were issued to.
    var tokens: [String: String] = [:]
    var maximumBodyBytes = 256 << 20

    /// A setting the server cannot use, with what to write instead.
    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    init(arguments: [String], environment: [String: String]) throws {
        if let host = environment["HOST"] { self.host = host }
        if let port = environment["PORT"] { self.port = try Self.port(port, from: "PORT") }
        if let path = environment["SYNC_SQLITE"] { sqlitePath = path }
        postgresURL = environment["DATABASE_URL"]
        if let tokens = environment["SYNC_TOKENS"] {
            for pair in tokens.split(separator: ",") { try addToken(String(pair), from: "SYNC_TOKENS") }
        }
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            guard let value = remaining.popFirst() else {
                throw Problem(description: "\(flag) needs a value, as in `\(flag) \(Self.example(of: flag))`")
            }
            switch flag {
            case "--host": host = value
            case "--port": port = try Self.port(value, from: flag)
            case "--sqlite": sqlitePath = value
            case "--postgres": postgresURL = value
            case "--token": try addToken(value, from: flag)
            default:
                throw Problem(
                    description: "unknown option \(flag): the options are --host, --port, --sqlite, --postgres, --token"
                )
            }
        }
        if tokens.isEmpty {
            throw Problem(
                description: "no user can sign in: give tokens with `--token TOKEN=USER` or SYNC_TOKENS=token=user,…")
        }
    }

    /// Where the server keeps its data, for the line it prints when it starts.
    var storeDescription: String {
        postgresURL == nil ? "SQLite at \(sqlitePath)" : "PostgreSQL"
    }

    /// The server's store, at the model's newest version: PostgreSQL when a URL is given, SQLite
    /// otherwise. It records history, so rows the app's own code writes reach devices too.
    func openStore() throws -> Store {
        let plan = Notes.migrationPlan(NotesStages())
        let history = HistoryTracking.enabled(author: "server")
        if let postgresURL {
            #if MODELWRIGHT_POSTGRES
                return try Store(postgres: PostgresConfiguration(postgresURL), migrationPlan: plan, history: history)
            #else
                throw Problem(
                    description: "--postgres needs Modelwright's PostgreSQL engine, which builds where libpq's "
                        + "header is: install libpq-dev (apt) or libpq (brew) and build again")
            #endif
        }
        return try Store(url: URL(fileURLWithPath: sqlitePath), migrationPlan: plan, history: history)
    }

    private mutating func addToken(_ pair: String, from source: String) throws {
        let parts = pair.split(separator: "=", maxSplits: 1)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw Problem(description: "\(source): `\(pair)` is not TOKEN=USER, as in `secret-token=ines`")
        }
        tokens[String(parts[0])] = String(parts[1])
    }

    private static func port(_ text: String, from source: String) throws -> Int {
        guard let port = Int(text), (0...65_535).contains(port) else {
            throw Problem(description: "\(source): `\(text)` is not a port (0 to 65535; 0 takes any free one)")
        }
        return port
    }

    private static func example(of flag: String) -> String {
        switch flag {
        case "--port": "8080"
        case "--postgres": "postgresql://app@localhost/notes"
        case "--token": "secret-token=ines"
        default: "VALUE"
        }
    }
}
