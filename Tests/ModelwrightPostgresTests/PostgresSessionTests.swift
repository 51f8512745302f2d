import Foundation
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

/// What the connection fixes for itself whatever the environment: session settings results
/// depend on, text that is really UTF-8, values and names PostgreSQL would silently cut short.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresSessionTests {
    /// A connection string's own `options`, and the database's defaults, cannot change how results
    /// are spelled.
    @Test func sessionSettingsArePinnedAgainstOptionsAndDatabaseDefaults() async throws {
        var configuration = try await makeDatabase()
        let admin = try await PostgresConnection(configuration)
        let database = try await admin.query("SELECT current_database()")
        guard case .text(let name) = database[0, 0] else { throw PostgresError.closed }
        try await admin.execute("ALTER DATABASE \(name) SET bytea_output = escape")
        try await admin.execute("ALTER DATABASE \(name) SET DateStyle = 'SQL, DMY'")
        let pinned = [
            "client_encoding": "UTF8", "extra_float_digits": "3", "bytea_output": "hex",
            "standard_conforming_strings": "on", "search_path": "pinned",
        ]
        configuration.connectionString +=
            " options='-c client_encoding=LATIN1 -c extra_float_digits=0 -c standard_conforming_strings=off"
            + " -c search_path=pinned'"
        let connection = try await PostgresConnection(configuration)
        for (setting, value) in pinned {
            // The string's own options still apply where the connection does not pin the setting.
            #expect(try await connection.query("SHOW \(setting)", format: .text)[0, 0] == .text(value), "\(setting)")
        }
        let dateStyle = try await connection.query("SHOW DateStyle", format: .text)[0, 0]
        #expect(dateStyle == .text("ISO, MDY") || dateStyle == .text("ISO, DMY"))
        let bytes = try await connection.query("SELECT '\\x00ff'::bytea", format: .text)
        #expect(bytes[0, 0] == .bytes(Data([0, 255])))
    }

    @Test func textThatIsNotUTF8IsAnErrorNotAReplacementCharacter() async throws {
        let admin = try await PostgresConnection(makeDatabase())
        let name = "mw_ascii_\(UUID().uuidString.prefix(8).lowercased())"
        try await admin.execute(
            "CREATE DATABASE \(name) ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0")
        var configuration = try await makeDatabase()
        configuration.connectionString = configuration.connectionString.replacingOccurrences(
            of: #"dbname=mw_[0-9a-f]+"#, with: "dbname=\(name)", options: .regularExpression)
        let connection = try await PostgresConnection(configuration)
        for format in [PostgresConnection.ResultFormat.binary, .text] {
            // The server refuses to send it as UTF-8 (22021), or the connection refuses to read it.
            await #expect(throws: PostgresError.self, "\(format)") {
                let rows = try await connection.query(
                    "SELECT convert_from('\\x41ff42'::bytea, 'SQL_ASCII')", format: format)
                _ = try rows.value(row: 0, column: 0)
            }
        }
    }

    @Test(arguments: ["12\u{0}345", "\u{0}", "1.5\u{0}"])
    func aNumericHoldingNULIsRefused(text: String) async throws {
        let connection = try await makeConnection()
        await #expect(throws: PostgresError.self) { try await connection.query("SELECT $1::numeric", [.numeric(text)]) }
    }

    @Test(arguments: [64, 70, 200])
    func aListenerRefusesAChannelNamePostgreSQLWouldCut(length: Int) async throws {
        let configuration = try await makeDatabase()
        let channel = String(repeating: "c", count: length)
        await #expect(throws: PostgresError.self) { _ = try await PostgresListener(configuration, channels: [channel]) }
        // 63 bytes is the longest name, and it is kept.
        _ = try await PostgresListener(configuration, channels: [String(repeating: "é", count: 31)])
    }
}

/// The test cluster is no gift to other users of the machine: its folder, password file and
/// socket are its owner's alone, and every connection, over the socket too, needs the password.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresClusterTests {
    @Test func onlyItsOwnerCanReachTheClusterAndOnlyWithThePassword() async throws {
        let cluster = try #require(PostgresCluster.shared)
        func permissions(_ path: String) throws -> Int {
            try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
        }
        #expect(try permissions(cluster.folder) == 0o700)
        #expect(try permissions(cluster.folder + "/pwfile") == 0o600)
        let connection = try await PostgresConnection(PostgresConfiguration(cluster.connectionString()))
        #expect(try await connection.query("SHOW unix_socket_permissions", format: .text)[0, 0] == .text("0700"))
        for host in [cluster.folder, "127.0.0.1"] {
            var configuration = PostgresConfiguration(
                "host='\(host)' port=\(cluster.port) user=postgres dbname=postgres")
            configuration.connectTimeout = .seconds(2)
            await #expect(throws: PostgresError.self, "\(host)") { _ = try await PostgresConnection(configuration) }
        }
    }
}
