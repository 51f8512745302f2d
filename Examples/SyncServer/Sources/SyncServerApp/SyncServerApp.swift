import Foundation
import Hummingbird
import NIOCore
import Notes

#if MODELWRIGHT_POSTGRES
    import ModelwrightPostgres
#endif

/// The example sync server: one route, `POST /sync`, that authenticates the request's bearer token
/// and hands its body to ``SyncServer/handle(_:credentials:)``.
///
/// ```
/// SyncServerApp [--host 127.0.0.1] [--port 8080] [--sqlite sync-server.sqlite | --postgres URL]
///               [--token TOKEN=USER]...
/// ```
///
/// Each setting may also come from the environment: `HOST`, `PORT`, `SYNC_SQLITE`, `DATABASE_URL`
/// (a PostgreSQL URL) and `SYNC_TOKENS` (`token=user,token=user`). Port 0 takes any free port;
/// the server prints the address it listens on as its first line, `listening on http://…/sync`.
@main
struct SyncServerApp {
    static func main() async throws {
        let settings: Settings
        do {
            settings = try Settings(
                arguments: Array(CommandLine.arguments.dropFirst()), environment: ProcessInfo.processInfo.environment)
        } catch {
            FileHandle.standardError.write(Data("SyncServerApp: \(error)\n".utf8))
            exit(2)
        }
        let store = try settings.openStore()

        // The app's authentication: a bearer token to the user it was issued to. A real server
        // would look the token up in its sessions or verify a signed one; the sync server only
        // needs the closure's answer, or nil to refuse the request.
        let tokens = settings.tokens
        let authenticate: SyncServer.Authenticate = { credentials in credentials.flatMap { tokens[$0] } }
        // Each user's rows: notes and tags whose `owner` is the user. A push that touches any other
        // row is refused whole; a pull returns only these.
        let owned: SyncServer.Scope = { user, row in row.values["owner"] == .text(user) }
        let server = try await SyncServer(
            store: store, authenticate: authenticate, scopes: ["Note": owned, "Tag": owned])

        let traffic = Traffic()
        let router = Router()
        router.post("sync") { request, _ -> Response in
            var request = request
            let body = try await request.collectBody(upTo: settings.maximumBodyBytes)
            let start = ContinuousClock.now
            let answer = await server.handle(Data(body.readableBytesView), credentials: request.bearerToken)
            let isPush = body.readableBytesView.starts(with: Array("{\"push\"".utf8))
            await traffic.record(
                received: body.readableBytes, sent: answer.count, took: ContinuousClock.now - start, isPush: isPush)
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: answer)))
        }
        // What the benchmarks read: the bytes of every sync body in and out, and the server's peak
        // resident memory.
        router.get("stats") { _, _ -> Response in
            let json = await traffic.json()
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(string: json)))
        }

        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname(settings.host, port: settings.port)),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? settings.port
                // Unbuffered, so a script that waits for this line sees it at once.
                FileHandle.standardOutput.write(
                    Data("listening on http://\(settings.host):\(port)/sync (\(settings.storeDescription))\n".utf8))
            })
        try await app.runService()
    }
}

extension Request {
    /// The token of an `Authorization: Bearer …` header, if the request has one.
    fileprivate var bearerToken: String? {
        guard let value = headers[.authorization], value.lowercased().hasPrefix("bearer ") else { return nil }
        return String(value.dropFirst("bearer ".count))
    }
}

/// The bytes of sync bodies received and sent since the server started, the time spent answering
/// pushes and pulls (from the body read to the answer encoded), and the process's CPU time.
private actor Traffic {
    private var requests = 0
    private var received = 0
    private var sent = 0
    private var pushing: Duration = .zero
    private var pulling: Duration = .zero

    func record(received: Int, sent: Int, took: Duration, isPush: Bool) {
        requests += 1
        self.received += received
        self.sent += sent
        if isPush { pushing += took } else { pulling += took }
    }

    func json() -> String {
        "{\"requests\":\(requests),\"receivedBytes\":\(received),\"sentBytes\":\(sent),"
            + "\"peakResidentBytes\":\(peakResidentBytes()),\"cpuSeconds\":\(cpuSeconds()),"
            + "\"pushSeconds\":\(Self.seconds(pushing)),\"pullSeconds\":\(Self.seconds(pulling))}"
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The process's CPU time (user and system) so far, in seconds.
    private func cpuSeconds() -> Double {
        var usage = rusage()
        #if os(Linux)
            getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
            getrusage(RUSAGE_SELF, &usage)
        #endif
        let seconds = { (time: timeval) in Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }

    /// The process's peak resident memory (`VmHWM`), where `/proc` tells it; 0 elsewhere.
    private func peakResidentBytes() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmHWM:") {
            let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
            return kilobytes * 1024
        }
        return 0
    }
}
