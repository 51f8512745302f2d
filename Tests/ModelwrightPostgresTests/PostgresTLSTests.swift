import Foundation
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

/// TLS through libpq's own `sslmode`: a cluster serving a certificate signed by a throwaway CA
/// (made with `openssl`) takes `require`, `verify-ca` and `verify-full` connections that really
/// are encrypted, and a client trusting another CA is refused with a clear error that holds no
/// password.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresTLSTests {
    /// The files of a CA, a server certificate it signed for 127.0.0.1, and an unrelated CA.
    private struct Certificates {
        let folder: String
        var ca: String { folder + "/ca.crt" }
        var otherCA: String { folder + "/other-ca.crt" }
        var server: String { folder + "/server.crt" }
        var serverKey: String { folder + "/server.key" }
    }

    private static func openssl(_ arguments: [String], in folder: String) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: folder)
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        struct Failed: Error, CustomStringConvertible {
            let description: String
        }
        guard process.terminationStatus == 0 else { throw Failed(description: "openssl \(arguments[0]) failed") }
    }

    /// Makes the certificates, or returns `nil` (with the reason printed) when `openssl` is absent.
    private static func certificates() throws -> Certificates? {
        let path = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        guard path.contains(where: { FileManager.default.isExecutableFile(atPath: "\($0)/openssl") }) else {
            print("PostgresTLSTests skipped: openssl is not installed")
            return nil
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mw-tls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let days = ["-days", "2"]
        for name in ["ca", "other-ca"] {
            try openssl(
                [
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(name).key", "-out", "\(name).crt",
                    "-subj", "/CN=Modelwright test \(name)",
                ] + days, in: folder)
        }
        try openssl(
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr", "-subj",
                "/CN=127.0.0.1",
            ], in: folder)
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: folder + "/san.ext", atomically: true, encoding: .utf8)
        try openssl(
            [
                "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-out",
                "server.crt", "-extfile", "san.ext",
            ] + days, in: folder)
        return Certificates(folder: folder)
    }

    @Test func sslModesConnectEncryptedAndAWrongCAIsRefusedWithoutThePassword() async throws {
        guard let certificates = try Self.certificates() else { return }
        defer { try? FileManager.default.removeItem(atPath: certificates.folder) }
        let cluster = try PostgresCluster.withTLS(certificate: certificates.server, key: certificates.serverKey)
        let base = cluster.connectionString()
        for mode in [
            "sslmode=require", "sslmode=verify-ca sslrootcert=\(certificates.ca)",
            "sslmode=verify-full sslrootcert=\(certificates.ca)",
        ] {
            let connection = try await PostgresConnection(PostgresConfiguration(base + " " + mode))
            let ssl = try await connection.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
            #expect(ssl[0, 0] == .bool(true), "\(mode)")
            await connection.close()
        }
        // Without TLS the same server is reached in the clear: the checks above are not vacuous.
        let plain = try await PostgresConnection(PostgresConfiguration(base + " sslmode=disable"))
        #expect(try await plain.query("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")[0, 0] == .bool(false))
        for mode in ["verify-ca", "verify-full"] {
            await #expect {
                _ = try await PostgresConnection(
                    PostgresConfiguration(base + " sslmode=\(mode) sslrootcert=\(certificates.otherCA)"))
            } throws: { error in
                let text = "\(error)"
                return text.contains("certificate verify failed") && !text.contains(cluster.password)
                    && error as? PostgresError
                        == .connectionFailed(String(text.dropFirst("could not connect to PostgreSQL: ".count)))
            }
        }
    }
}
