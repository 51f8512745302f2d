/// How to reach a PostgreSQL server, and the limits a connection keeps to.
///
/// ```swift
/// var configuration = PostgresConfiguration("postgresql://app@db.example.com/trips?sslmode=verify-full")
/// configuration.statementTimeout = .seconds(5)
/// let connection = try await PostgresConnection(configuration)
/// ```
///
/// The connection string is libpq's: a `postgresql://` URL or `key=value` pairs. TLS is libpq's
/// own `sslmode` (and `sslrootcert`, …) in that string; a password may sit in it, or come from
/// `PGPASSWORD` or `~/.pgpass` as libpq reads them. No error text ever shows the password.
public struct PostgresConfiguration: Sendable {
    /// libpq's connection string: a URL or `key=value` pairs.
    public var connectionString: String
    /// How long connecting may take before it fails (libpq's `connect_timeout`, whole seconds,
    /// at least 2, at most Int32.max); `nil` keeps the connection string's own or libpq's default (wait forever).
    public var connectTimeout: Duration? = .seconds(10)
    /// How long one statement may run before the server stops it (`statement_timeout`); `nil`
    /// keeps the server's setting. Past PostgreSQL's limit (Int32.max milliseconds, about 24 days)
    /// it is that limit.
    public var statementTimeout: Duration?
    /// The name the server shows for the connection (`application_name`).
    public var applicationName = "modelwright"

    /// Whether a connection fixes `search_path` to exactly the store's schema
    /// (`PostgresConnection.storeSchema(in:)`): set on the connections a store opens.
    var pinsStoreSchema = false

    /// A configuration for `connectionString`, with a 10-second connect timeout.
    public init(_ connectionString: String) {
        self.connectionString = connectionString
    }
}

// MARK: - CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable

// Printed, dumped or interpolated, a configuration shows its connection string without the password.
extension PostgresConfiguration: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The configuration with the password replaced by `***`.
    public var description: String {
        let timeouts = [
            connectTimeout.map { "connectTimeout: \($0)" }, statementTimeout.map { "statementTimeout: \($0)" },
        ]
        return "PostgresConfiguration(\"\(Redaction(connectionString: connectionString).apply(connectionString))\""
            + timeouts.compactMap { $0.map { ", " + $0 } }.joined() + ", applicationName: \"\(applicationName)\")"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The configuration's fields, the connection string without its password.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "connectionString": Redaction(connectionString: connectionString).apply(connectionString),
                "connectTimeout": connectTimeout as Any, "statementTimeout": statementTimeout as Any,
                "applicationName": applicationName,
            ])
    }
}

extension Duration {
    /// Whole milliseconds, rounded up so a small timeout never becomes 0 (which means none);
    /// saturating at Int64's bounds, so `.seconds(Int64.max)` is a very long time, not a crash.
    var roundedUpMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1_000)
        if overflow { return seconds < 0 ? .min : .max }
        let fraction = (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        let (total, overflowAgain) = milliseconds.addingReportingOverflow(fraction)
        return overflowAgain ? .max : total
    }
}
