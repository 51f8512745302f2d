import Foundation
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

/// No error text shows a password, however the connection fails and however the password is
/// spelled: passwords drawn at random (URL delimiters, quotes, percent signs, spaces, non-ASCII),
/// each tried on every way of failing a connection can.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresCredentialTests {
    static let passwordCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 500 : 30

    private static func password(_ random: inout SplitMix64) -> String {
        let pieces = ["a", "Z", "7", "@", ":", "/", "?", "#", "%", "%2", "&", "=", " ", "'", "\"", "\\", "é", "🙂", "-"]
        // A distinctive start, so a match in a message cannot be a coincidence of short text.
        return "Qx9" + (0..<random.size(in: 4...20)).map { _ in random.pick(pieces) }.joined()
    }

    /// Every way a connection string with `password` can fail, with the string.
    private static func failures(for password: String, cluster: PostgresCluster) -> [(String, String)] {
        let encoded = password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let quoted =
            "'" + password.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
        return [
            ("wrong password, URL", cluster.url(password: password)),
            ("wrong password, key=value", "host=127.0.0.1 port=\(cluster.port) user=postgres password=\(quoted)"),
            ("unreachable server", "postgresql://postgres:\(encoded)@127.0.0.1:1/postgres"),
            ("port not a number", "postgresql://postgres:\(encoded)@127.0.0.1:port/postgres"),
            ("password not percent-encoded", "postgresql://postgres:\(password)%zz@127.0.0.1:\(cluster.port)/x"),
            ("unknown parameter", "postgresql://postgres:\(encoded)@127.0.0.1:\(cluster.port)/x?bogus=\(encoded)"),
            ("unknown database", "postgresql://postgres:\(encoded)@127.0.0.1:\(cluster.port)/no_such_db"),
            ("unterminated quote", "host=127.0.0.1 password='\(password)"),
        ]
    }

    @Test func noConnectionErrorShowsThePassword() async throws {
        let cluster = try #require(PostgresCluster.shared)
        var random = SplitMix64(seed: 0x5EC12E7)
        var tried = 0
        for _ in 0..<Self.passwordCount {
            let password = Self.password(&random)
            let spellings = [
                password, password.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? password,
                password.addingPercentEncoding(withAllowedCharacters: .urlPasswordAllowed) ?? password,
            ]
            for (failure, string) in Self.failures(for: password, cluster: cluster) {
                var configuration = PostgresConfiguration(string)
                configuration.connectTimeout = .seconds(2)
                do {
                    _ = try await PostgresConnection(configuration)
                    Issue.record("\(failure) connected")
                } catch {
                    let text = "\(error)" + String(reflecting: error)
                    for spelling in spellings {
                        #expect(!text.contains(spelling), "\(failure): \(text)")
                    }
                    tried += 1
                }
            }
        }
        #expect(tried == Self.passwordCount * 8)
    }

    /// libpq's own complaints about a connection string quote the part they could not read (a
    /// piece of the password); none of it reaches an error, which names at most a known option.
    @Test(arguments: [
        ("postgresql://127.0.0.1:PORT/postgres?user=postgres&password=Qx9sEcret%zz", "Qx9sEcret"),
        ("postgresql://127.0.0.1:PORT/postgres?user=postgres&password=%CC%81Qx9sEcret%zz", "Qx9sEcret"),
        ("postgresql://postgres:\u{301}Qx9sEcret%zz@127.0.0.1:PORT/postgres", "Qx9sEcret"),
        ("host=127.0.0.1 port=Qx9sEc password=Qx9sEc", "Qx9sEc"),
        ("host=127.0.0.1 port=PORT user=postgres password=Qx9s ret", "ret"),
        ("host=127.0.0.1 port=PORT user=postgres password='Qx9sEcret", "Qx9sEcret"),
        ("postgresql://postgres@127.0.0.1:PORT/postgres?Qx9sEcret=1", "Qx9sEcret"),
    ])
    func aConnectionStringLibpqCannotReadIsReportedWithoutItsText(string: String, secret: String) async throws {
        let cluster = try #require(PostgresCluster.shared)
        var configuration = PostgresConfiguration(string.replacingOccurrences(of: "PORT", with: "\(cluster.port)"))
        configuration.connectTimeout = .seconds(2)
        await #expect {
            _ = try await PostgresConnection(configuration)
        } throws: { error in
            guard case PostgresError.invalidConnectionString = error else { return false }
            return !"\(error)".contains(secret)
        }
        await #expect {
            _ = try await PostgresListener(configuration, channels: ["x"])
        } throws: { error in
            guard case PostgresError.invalidConnectionString = error else { return false }
            return !"\(error)".contains(secret)
        }
    }

    /// A short password is not cut out of unrelated words, and is still never shown.
    @Test(arguments: ["on", "e", "ec", "ted"])
    func aShortPasswordDoesNotMangleTheMessage(password: String) async throws {
        var configuration = PostgresConfiguration("postgresql://postgres:\(password)@127.0.0.1:1/postgres")
        configuration.connectTimeout = .seconds(2)
        await #expect {
            _ = try await PostgresConnection(configuration)
        } throws: { error in
            "\(error)".contains("Connection refused") && !"\(error)".contains("***")
        }
        #expect(!"\(configuration)".contains(":\(password)@"))
    }

    /// Printing, dumping or interpolating a configuration never shows its password.
    @Test(arguments: [
        "postgresql://postgres:Qx9sEcret@127.0.0.1/postgres", "host=127.0.0.1 password=Qx9sEcret",
        "host=127.0.0.1 password='Qx9 sEcret'", "postgresql://127.0.0.1/postgres?password=Qx9sEcret",
        "postgresql://postgres:\u{301}Qx9sEcret@127.0.0.1/postgres",
    ])
    func aPrintedConfigurationHidesThePassword(string: String) {
        let configuration = PostgresConfiguration(string)
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in ["\(configuration)", String(reflecting: configuration), dumped] {
            #expect(!text.contains("Qx9"), "\(text)")
            #expect(text.contains("127.0.0.1"), "\(text)")
        }
    }

    @Test func theRightPasswordConnectsAndAWrongOneSaysAuthenticationFailed() async throws {
        let cluster = try #require(PostgresCluster.shared)
        _ = try await PostgresConnection(PostgresConfiguration(cluster.url()))
        await #expect {
            try await PostgresConnection(PostgresConfiguration(cluster.url(password: "not-it")))
        } throws: { error in
            guard case PostgresError.connectionFailed(let reason) = error else { return false }
            return reason.contains("password authentication failed")
        }
    }
}
