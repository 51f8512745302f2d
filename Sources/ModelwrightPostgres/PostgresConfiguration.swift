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
    /// at least 2); `nil` keeps the connection string's own or libpq's default (wait forever).
    public var connectTimeout: Duration? = .seconds(10)
    /// How long one statement may run before the server stops it (`statement_timeout`); `nil`
    /// keeps the server's setting.
    public var statementTimeout: Duration?
    /// The name the server shows for the connection (`application_name`).
    public var applicationName = "modelwright"

    /// A configuration for `connectionString`, with a 10-second connect timeout.
    public init(_ connectionString: String) {
        self.connectionString = connectionString
    }
}

extension Duration {
    /// Whole milliseconds, rounded up so a small timeout never becomes 0 (which means none).
    var roundedUpMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }
}
