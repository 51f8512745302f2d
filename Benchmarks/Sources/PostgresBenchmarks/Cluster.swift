import Foundation

/// A failure of the benchmark run itself.
struct Failure: Error, CustomStringConvertible {
    let description: String
}

/// A throwaway PostgreSQL cluster: initdb into a temporary folder, a free loopback port, fsync
/// off, run as `postgres` when this runs as root (the server refuses root); `stop()` removes it.
struct Cluster {
    let folder: String
    let port: Int
    private let binaries: String
    private let asRoot = getuid() == 0
    /// Whether this run started the server (and stops it).
    private let isOwned: Bool

    /// The libpq connection string of the cluster's `postgres` database.
    var conninfo: String { "host=127.0.0.1 port=\(port) user=postgres dbname=postgres" }

    /// Starts a cluster; `logStatements` has the server log every statement (to read the SQL
    /// Modelwright sends), and keeps the folder.
    init(logStatements: Bool) throws {
        isOwned = true
        binaries =
            ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
            .compactMap(Int.init).sorted(by: >).map { "/usr/lib/postgresql/\($0)/bin" }.first ?? "/usr/bin"
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("mw-pg-bench-\(getpid())").path
        port = 20_000 + Int(getpid() % 20_000)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        if asRoot { try Self.run(["/bin/chown", "postgres", folder], asPostgres: false) }
        let logging = logStatements ? " -c log_statement=all" : ""
        guard
            try Self.run(
                [binaries + "/initdb", "-D", folder + "/data", "-U", "postgres", "--auth=trust", "--no-sync"],
                asPostgres: asRoot) == 0,
            try Self.run(
                [
                    binaries + "/pg_ctl", "-D", folder + "/data", "-l", folder + "/log", "-w", "-o",
                    "-p \(port) -k \(folder) -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off"
                        + logging, "start",
                ],
                asPostgres: asRoot) == 0
        else { throw Failure(description: "the cluster did not start (see \(folder)/log)") }
    }

    /// A server already running on loopback `port` (user `postgres`, trusted), for runs that
    /// cannot start processes themselves: valgrind does not follow the `posix_spawn` that starts one.
    init(runningOn port: Int) {
        isOwned = false
        self.port = port
        folder = ""
        binaries = ""
    }

    /// Stops the server and removes its folder, when this run started it.
    func stop(keepingFolder: Bool) {
        guard isOwned else { return }
        _ = try? Self.run(
            [binaries + "/pg_ctl", "-D", folder + "/data", "-m", "immediate", "stop"], asPostgres: asRoot)
        if !keepingFolder { try? FileManager.default.removeItem(atPath: folder) }
    }

    /// Runs a command, as `postgres` when asked, with its output to /dev/null. Not through
    /// `Process`, whose wait never ends when the server `pg_ctl` starts inherits the descriptors
    /// it watches.
    @discardableResult
    private static func run(_ command: [String], asPostgres: Bool) throws -> Int32 {
        let arguments = asPostgres ? ["/sbin/runuser", "-u", "postgres", "--"] + command : command
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in [0, 1, 2] {
            posix_spawn_file_actions_addopen(
                &actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        let argv = arguments.map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        var pid = pid_t()
        guard posix_spawn(&pid, arguments[0], &actions, nil, argv, environ) == 0 else {
            throw Failure(description: "could not run \(arguments[0])")
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        return status
    }
}
