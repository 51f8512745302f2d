import Foundation
import Testing

@testable import Modelwright

/// A store, a migration tester or a connection that the app lets go closes its files, whether or
/// not it was closed: a connection's cache of prepared statements must not keep the connection
/// alive (it once did, so every released store kept its file descriptors open until the process
/// ran out of them, which a 10,000-pair migration property run found).
struct StoreReleaseTests {
    /// How many of the process's open files are inside one of `folders` (other suites run in
    /// parallel, so only these count); `nil` where `/proc/self/fd` does not exist.
    private static func openFiles(in folders: [String]) -> Int? {
        guard let descriptors = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else {
            return nil
        }
        return descriptors.count { descriptor in
            let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(descriptor)")
            return folders.contains { target?.hasPrefix($0) == true }
        }
    }

    private static let schema = SchemaDescription(
        modelName: "Released", version: 1,
        entities: [EntityDescription(name: "Item", attributes: [AttributeDescription(name: "value", type: .int64)])])

    @Test func releasedStoresAndTestersCloseTheirFiles() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("released-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        guard Self.openFiles(in: [folder.path]) != nil else {
            print("StoreReleaseTests skipped: /proc/self/fd is not available on this platform")
            return
        }
        let rounds = 40
        var folders = [folder.path]
        for round in 0..<rounds {
            let store = try Store(url: folder.appendingPathComponent("s\(round).sqlite"), schema: Self.schema)
            _ = try await store.performQuery { _ in round }
            let tester = try MigrationTester(
                plan: MigrationPlan(current: Self.schema, stages: []), startingAt: Self.schema)
            folders.append(tester.url.deletingLastPathComponent().path)
            try tester.insert("Item", ["value": .integer(1)])
            _ = try tester.rows(of: "Item")
            _ = try tester.schemaDifferences()
        }
        // Readers may finish on their queues a moment after the last reference goes.
        var open = Self.openFiles(in: folders) ?? 0
        for _ in 0..<50 where open > 0 {
            try await Task.sleep(for: .milliseconds(20))
            open = Self.openFiles(in: folders) ?? 0
        }
        #expect(open == 0, "\(rounds) released stores left \(open) files open")
    }
}
