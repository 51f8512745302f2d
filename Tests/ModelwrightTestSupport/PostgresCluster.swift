import Foundation

#if MODELWRIGHT_POSTGRES
    import ModelwrightPostgres
#endif

/// The throwaway PostgreSQL cluster of the tests of one process, started on first use and shared
/// by every suite, stopped and removed when the process exits. It is the product's
/// `ThrowawayCluster` (the one way a cluster is started, which `plan --engine postgres` uses too);
/// this type only keeps one per process and says why there is none.
///
/// When the server binaries are missing, or the package was built without the PostgreSQL engine,
/// ``shared`` is `nil` and ``unavailableReason`` says why.
package final class PostgresCluster: Sendable {
    #if MODELWRIGHT_POSTGRES
        private let server: ThrowawayCluster

        private init(_ server: ThrowawayCluster) {
            self.server = server
        }

        /// The loopback port the server listens on.
        package var port: Int { server.port }
        /// The superuser's password, which every connection needs, over TCP or the unix socket.
        package var password: String { server.password }
        /// The cluster's folder (data, socket, log).
        package var folder: String { server.folder }

        /// Runs `sql` with `psql`, a process of its own, on `database` over TCP; returns its output
        /// (unaligned, tuples only). Throws with psql's message when a statement fails.
        @discardableResult
        package func psql(_ sql: String, database: String) throws -> String {
            try server.psql(sql, database: database)
        }

        /// A `key=value` connection string for `database` on this cluster, over TCP with the password.
        package func connectionString(database: String = "postgres") -> String {
            server.connectionString(database: database)
        }

        /// A `postgresql://` URL for `database`, with `password` in it (the real one by default).
        package func url(database: String = "postgres", password: String? = nil) -> String {
            server.url(database: database, password: password)
        }

        /// A cluster of its own (not ``shared``) that serves TLS with `certificate` and `key` (PEM
        /// files, copied into the cluster's folder), removed when the process exits like the shared one.
        package static func withTLS(certificate: String, key: String) throws -> PostgresCluster {
            PostgresCluster(try ThrowawayCluster(tls: (certificate, key)))
        }

        private static let state: (cluster: PostgresCluster?, reason: String?) = {
            do {
                return (PostgresCluster(try ThrowawayCluster()), nil)
            } catch {
                let reason = "PostgreSQL tests skipped: \(error)"
                FileHandle.standardError.write(Data((reason + "\n").utf8))
                return (nil, reason)
            }
        }()
    #else
        // Without the engine there is never a cluster: these members exist so the suites that
        // skip themselves on `shared == nil` still compile.
        private init() {}

        /// The loopback port the server listens on.
        package var port: Int { 0 }
        /// The superuser's password.
        package var password: String { "" }
        /// The cluster's folder.
        package var folder: String { "" }

        /// Empty: there is no cluster without the engine.
        package func connectionString(database: String = "postgres") -> String { "" }

        /// Empty: there is no cluster without the engine.
        package func url(database: String = "postgres", password: String? = nil) -> String { "" }

        /// Throws: there is no cluster without the engine.
        @discardableResult
        package func psql(_ sql: String, database: String) throws -> String {
            throw CocoaError(.featureUnsupported)
        }

        /// Throws: there is no cluster without the engine.
        package static func withTLS(certificate: String, key: String) throws -> PostgresCluster {
            throw CocoaError(.featureUnsupported)
        }

        private static let state: (cluster: PostgresCluster?, reason: String?) = (
            nil, "PostgreSQL tests skipped: the PostgreSQL engine is not built (libpq's header was not found)"
        )
    #endif

    /// The cluster of this process, started on first use; `nil` when PostgreSQL is not installed
    /// or did not start (``unavailableReason`` says which, and is printed once).
    package static var shared: PostgresCluster? { state.cluster }

    /// Why ``shared`` is `nil`.
    package static var unavailableReason: String? { state.reason }
}
