import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A throwaway PostgreSQL cluster: `initdb` into a temporary folder, a free loopback port, the
/// unix socket in that folder, stopped and removed by ``remove()`` or when the process exits.
/// `plan --engine postgres` starts one when no server is named, and the tests start one per
/// process (their `PostgresCluster.shared`), the same way.
///
/// When the process runs as root, the server runs as the `postgres` user (PostgreSQL refuses root),
/// which then owns the folder. A watchdog process stops the server and removes the folder if this
/// process dies without cleaning up, and every start removes what dead runs left. Starting throws,
/// saying why, when the server binaries are missing or the server does not start.
package final class ThrowawayCluster: Sendable {
    /// The loopback port the server listens on.
    package let port: Int
    /// The superuser's password, which every connection needs, over TCP or the unix socket.
    package let password: String
    /// The cluster's folder (data, socket, log).
    package let folder: String

    /// A `key=value` connection string for `database` on this cluster, over TCP with the password.
    package func connectionString(database: String = "postgres") -> String {
        "host=127.0.0.1 port=\(port) user=postgres password=\(password) dbname=\(database)"
    }

    /// A `postgresql://` URL for `database`, with `password` in it (the real one by default).
    package func url(database: String = "postgres", password: String? = nil) -> String {
        let secret = (password ?? self.password).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        return "postgresql://postgres:\(secret)@127.0.0.1:\(port)/\(database)"
    }

    /// Runs `sql` with `psql`, a process of its own, on `database` over TCP; returns its output
    /// (unaligned, tuples only). Throws with psql's message when a statement fails.
    @discardableResult
    package func psql(_ sql: String, database: String) throws -> String {
        try Self.run(
            binaries + "/psql",
            [
                "-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", database, "-X", "-q", "-A", "-t",
                "-v", "ON_ERROR_STOP=1", "-c", sql,
            ],
            environment: ["PGPASSWORD=" + password])
    }

    private struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The folder with `initdb`, `pg_ctl` and `postgres`: `MODELWRIGHT_PG_BIN`, then Debian's
    /// versioned folders, newest first, then `PATH`.
    private static func binaries() -> String? {
        var candidates: [String] = []
        if let folder = ProcessInfo.processInfo.environment["MODELWRIGHT_PG_BIN"] { candidates.append(folder) }
        let debian = "/usr/lib/postgresql"
        let versions = ((try? FileManager.default.contentsOfDirectory(atPath: debian)) ?? [])
            .compactMap(Int.init).sorted(by: >)
        candidates += versions.map { "\(debian)/\($0)/bin" }
        candidates += (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        candidates += ["/opt/homebrew/bin", "/usr/local/bin"]
        return candidates.first { FileManager.default.isExecutableFile(atPath: "\($0)/initdb") }
    }

    private let binaries: String
    private let runAsPostgres: Bool

    /// Starts a cluster; with `tls`, it serves TLS with the certificate and key (PEM files, copied
    /// into the cluster's folder).
    package init(tls: (certificate: String, key: String)? = nil) throws {
        guard let binaries = Self.binaries() else {
            throw Failure(
                description:
                    "no initdb found (install PostgreSQL's server, such as Debian's postgresql package, or set MODELWRIGHT_PG_BIN to the folder of its programs)"
            )
        }
        self.binaries = binaries
        runAsPostgres = getuid() == 0
        Self.removeStaleClusters()
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("modelwright-pg-\(getpid())-\(UInt32.random(in: 0...UInt32.max))").path
        self.folder = folder
        password = "pw-" + UUID().uuidString
        // Only the cluster's owner may enter the folder, read the password or reach the socket:
        // anyone else who could connect would be a superuser, with a shell through COPY TO PROGRAM.
        try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        try "\(getpid())".write(toFile: folder + "/owner.pid", atomically: true, encoding: .utf8)
        var tlsOptions = ""
        if let tls {
            // The server refuses a key that others may read.
            for (source, name) in [(tls.certificate, "server.crt"), (tls.key, "server.key")] {
                try FileManager.default.copyItem(atPath: source, toPath: folder + "/" + name)
                try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: folder + "/" + name)
            }
            tlsOptions =
                " -c ssl=on -c ssl_cert_file=\(Self.shellQuoted(folder + "/server.crt"))"
                + " -c ssl_key_file=\(Self.shellQuoted(folder + "/server.key"))"
        }
        guard
            FileManager.default.createFile(
                atPath: folder + "/pwfile", contents: Data((password + "\n").utf8),
                attributes: [.posixPermissions: 0o600])
        else { throw Failure(description: "could not write the password file in \(folder)") }
        if runAsPostgres {
            try Self.run("/bin/chown", ["-R", "postgres", folder])
        }
        let runAsPostgres = self.runAsPostgres
        let password = self.password
        func run(_ program: String, _ arguments: [String]) throws {
            // The password travels in the environment, which other users cannot read, not the arguments.
            try Self.run(
                program, arguments, binaries: binaries, runAsPostgres: runAsPostgres,
                environment: ["PGPASSWORD=" + password])
        }
        try run(
            "initdb",
            [
                "-D", folder + "/data", "-U", "postgres", "--auth-local=scram-sha-256", "--auth-host=scram-sha-256",
                "--pwfile=" + folder + "/pwfile", "-E", "UTF8", "--locale=C", "--no-sync",
            ])
        var started: Int?
        for _ in 0..<5 where started == nil {
            let port = try Self.freePort()
            // pg_ctl hands `-o` to a shell: the folder is quoted, so a TMPDIR with a space works.
            let options =
                "-p \(port) -k \(Self.shellQuoted(folder)) -c unix_socket_permissions=0700 "
                + "-c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
                + "-c full_page_writes=off -c max_connections=500" + tlsOptions
            if (try? run("pg_ctl", ["-D", folder + "/data", "-o", options, "-l", folder + "/log", "-w", "start"]))
                != nil
            {
                started = port
            }
        }
        guard let started else {
            let log = (try? String(contentsOfFile: folder + "/log", encoding: .utf8)) ?? ""
            Self.remove(folder: folder, binaries: binaries, runAsPostgres: runAsPostgres)
            throw Failure(description: "the server did not start: \(log.suffix(500))")
        }
        port = started
        // Every database the tests create copies template1, so each has unaccent.
        try run(
            "psql",
            [
                "-h", folder, "-p", String(port), "-U", "postgres", "-d", "template1", "-q", "-c",
                "CREATE EXTENSION IF NOT EXISTS unaccent",
            ])
        startWatchdog()
        let cluster = (folder, binaries, runAsPostgres)
        Self.atExit.withLock { $0.append(cluster) }
        atexit {
            for (folder, binaries, runAsPostgres) in ThrowawayCluster.atExit.withLock({ $0 }) {
                ThrowawayCluster.remove(folder: folder, binaries: binaries, runAsPostgres: runAsPostgres)
            }
        }
    }

    /// Stops the server and removes its folder now, rather than when the process exits.
    package func remove() {
        let folder = folder
        Self.atExit.withLock { clusters in clusters.removeAll { $0.0 == folder } }
        Self.remove(folder: folder, binaries: binaries, runAsPostgres: runAsPostgres)
    }

    private static let atExit = LockedClusters()

    /// A watchdog that outlives a crash of this process: it waits for this process to end, then
    /// stops the server and removes the folder.
    private func startWatchdog() {
        let stop = stopCommand(folder: folder, binaries: binaries, runAsPostgres: runAsPostgres)
        let script =
            "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; \(stop); rm -rf \(Self.shellQuoted(folder))"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }

    private func stopCommand(folder: String, binaries: String, runAsPostgres: Bool) -> String {
        Self.stopCommand(folder: folder, binaries: binaries, runAsPostgres: runAsPostgres)
    }

    private static func stopCommand(folder: String, binaries: String, runAsPostgres: Bool) -> String {
        let command =
            "\(shellQuoted(binaries + "/pg_ctl")) -D \(shellQuoted(folder + "/data")) -m immediate -w stop >/dev/null 2>&1"
        return runAsPostgres
            ? "runuser -u postgres -- \(command) || su postgres -s /bin/sh -c \(shellQuoted(command))" : command
    }

    /// `text` as one word for `/bin/sh`, whatever it holds (spaces, quotes).
    private static func shellQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    private static func remove(folder: String, binaries: String, runAsPostgres: Bool) {
        _ = try? run("/bin/sh", ["-c", stopCommand(folder: folder, binaries: binaries, runAsPostgres: runAsPostgres)])
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Clusters whose test process is gone (it was killed before its exit handler ran).
    private static func removeStaleClusters() {
        let temporary = FileManager.default.temporaryDirectory.path
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? []
        where name.hasPrefix("modelwright-pg-") {
            let folder = temporary + "/" + name
            guard
                let owner = (try? String(contentsOfFile: folder + "/owner.pid", encoding: .utf8)).flatMap({ Int32($0) }
                ),
                kill(owner, 0) != 0, errno == ESRCH
            else { continue }
            guard let binaries = binaries() else { return }
            remove(folder: folder, binaries: binaries, runAsPostgres: getuid() == 0)
        }
    }

    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw Failure(description: "no socket for a free port") }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(descriptor, address, length) == 0 && getsockname(descriptor, address, &length) == 0
            }
        }
        guard bound else { throw Failure(description: "no free loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs one of the server's programs, as `postgres` when the tests run as root.
    private static func run(
        _ program: String, _ arguments: [String], binaries: String, runAsPostgres: Bool, environment: [String] = []
    ) throws {
        let path = binaries + "/" + program
        if runAsPostgres {
            try Self.run("/sbin/runuser", ["-u", "postgres", "--", path] + arguments, environment: environment)
        } else {
            try Self.run(path, arguments, environment: environment)
        }
    }

    /// Runs `executable` and waits for it, its output in a file. Not through `Process`: a server
    /// that `pg_ctl start` leaves running inherits the descriptors `Process` watches for the
    /// child's end, and the wait would then never return.
    @discardableResult
    private static func run(_ executable: String, _ arguments: [String], environment: [String] = []) throws -> String {
        let outputPath = FileManager.default.temporaryDirectory
            .appendingPathComponent("modelwright-pg-output-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: outputPath) }
        #if canImport(Glibc)
            var actions = posix_spawn_file_actions_t()
        #else
            var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var inherited: [String] = []
        var entry = environ
        while let variable = entry.pointee {
            inherited.append(String(cString: variable))
            entry += 1
        }
        let envp = (inherited + environment).map { strdup($0) } + [nil]
        defer { for variable in envp { free(variable) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard spawned == 0 else { throw Failure(description: "could not run \(executable): error \(spawned)") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        // Exited normally with status 0: the low seven bits (the signal) and the status byte are 0.
        guard status == 0 else {
            throw Failure(
                description: "\(executable) \(arguments.prefix(3).joined(separator: " ")) failed: \(text.suffix(400))")
        }
        return text
    }
}

/// The clusters the exit handler removes.
private final class LockedClusters: @unchecked Sendable {
    // @unchecked: the one field is behind `lock`.
    private let lock = NSLock()
    private var clusters: [(String, String, Bool)] = []

    func withLock<T>(_ body: (inout [(String, String, Bool)]) -> T) -> T {
        lock.withLock { body(&clusters) }
    }
}
