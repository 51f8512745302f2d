import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A tiny HTTP/1.1 server on loopback, for the test only: one request per connection, answered by
/// a closure with the body and the bearer token, then closed. `ProcessConvergenceTests` serves its
/// device processes through it too.
final class LoopbackHTTPServer: @unchecked Sendable {
    let port: UInt16
    private let socketDescriptor: Int32
    private let thread: Thread

    init(answer: @escaping @Sendable (Data, String?) async -> Data) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var size = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, size) }
        }
        guard bound == 0, listen(descriptor, 16) == 0 else { throw POSIXError(.EADDRINUSE) }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &size) }
        }
        port = UInt16(bigEndian: address.sin_port)
        socketDescriptor = descriptor
        thread = Thread {
            while true {
                let client = accept(descriptor, nil, nil)
                guard client >= 0 else { return }
                // A thread per connection: its reads and writes block, and on the cooperative pool
                // (two threads on a two-core machine) a few slow clients would stall every task.
                Thread { Self.serve(client, answer: answer) }.start()
            }
        }
        thread.start()
    }

    func stop() {
        shutdown(socketDescriptor, Int32(SHUT_RDWR))
        close(socketDescriptor)
    }

    private static func serve(_ client: Int32, answer: @escaping @Sendable (Data, String?) async -> Data) {
        defer { close(client) }
        var received = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let separator = Data("\r\n\r\n".utf8)
        var headerEnd: Range<Data.Index>?
        var length = 0
        var token: String?
        while true {
            let count = read(client, &buffer, buffer.count)
            guard count > 0 else { return }
            received.append(contentsOf: buffer[0..<count])
            if headerEnd == nil, let found = received.range(of: separator) {
                headerEnd = found
                let header = String(decoding: received[..<found.lowerBound], as: UTF8.self)
                for line in header.split(separator: "\r\n") {
                    let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                    guard parts.count == 2 else { continue }
                    if parts[0].lowercased() == "content-length" { length = Int(parts[1]) ?? 0 }
                    if parts[0].lowercased() == "authorization", parts[1].hasPrefix("Bearer ") {
                        token = String(parts[1].dropFirst("Bearer ".count))
                    }
                }
            }
            if let headerEnd, received.count - headerEnd.upperBound >= length { break }
        }
        guard let headerEnd else { return }
        let body = received[headerEnd.upperBound..<(headerEnd.upperBound + length)]
        let request = Data(body)
        let answered = Locked(Data())
        let done = DispatchSemaphore(value: 0)
        // The answer (and the server actor it calls) runs on a thread of its own: on the shared
        // pool it waited behind every test the run had started, past the devices' time limits.
        let executor = ThreadExecutor(name: "loopback-answer")
        defer { executor.finish() }
        Task(executorPreference: executor) { [token] in
            let reply = await answer(request, token)
            answered.withLock { $0 = reply }
            done.signal()
        }
        done.wait()
        let reply = answered.withLock { $0 }
        let head =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(reply.count)\r\nConnection: close\r\n\r\n"
        let bytes = Array(Data(head.utf8) + reply)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { write(client, $0.baseAddress, $0.count) }
            guard count > 0 else { return }
            sent += count
        }
    }
}

/// The HTTP adapter end to end: devices reach the server through `URLSessionSyncTransport` over
/// real HTTP on loopback, and refusals arrive as typed errors.
@Suite(.ownThread)
struct SyncHTTPTests {
    @Test func devicesSyncOverHTTPOnLoopback() async throws {
        let server = try await SyncServerTests.makeServer(
            try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "server")))
        let http = try LoopbackHTTPServer { body, token in await server.handle(body, credentials: token) }
        defer { http.stop() }
        let url = try #require(URL(string: "http://127.0.0.1:\(http.port)/sync"))
        let phone = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
        let laptop = try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app"))
        let phoneEngine = try await SyncEngine(
            store: phone, transport: URLSessionSyncTransport(url: url, credentials: "token-a"), pullLimit: 3)
        let laptopEngine = try await SyncEngine(
            store: laptop, transport: URLSessionSyncTransport(url: url, credentials: "token-a"), pullLimit: 3)
        try await phone.performAndSave { context in
            for index in 0..<7 { try context.insert(Card(title: "card \(index)", rating: Int64(index), owner: "a")) }
        }
        try await phoneEngine.sync()
        try await laptopEngine.sync()
        let cards = try await laptop.performQuery { try $0.fetch(Card.request()) }
        #expect(Set(cards.map(\.title)) == Set((0..<7).map { "card \($0)" }))

        let stranger = try await SyncEngine(
            store: try Store.inMemory(schema: SyncPlanner.schema, history: .enabled(author: "app")),
            transport: URLSessionSyncTransport(url: url, credentials: "stolen"))
        await #expect(throws: SyncError.notAuthenticated) { try await stranger.sync() }

        let garbage = await server.handle(Data("{\"hello\": 1}".utf8), credentials: "token-a")
        guard case .refusal(.malformedMessage) = try JSONDecoder().decode(SyncHTTPResponse.self, from: garbage) else {
            Issue.record("a body that is no sync request was answered \(String(decoding: garbage, as: UTF8.self))")
            return
        }
    }
}
