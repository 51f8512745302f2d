import CSQLite
import Foundation
import Modelwright

/// A child process for the open-race tests: several of them open one store file at the same
/// moment, as an app and its widget do, and each reports which custom stages it ran.
///
///     StoreRaceProbe seed <store> <rows>                       a version-1 store, prices 1…rows
///     StoreRaceProbe open <store> <start> <history 0|1>        opens with the plan; prints "stages=a,b"
///     StoreRaceProbe create <store> <start> <history 0|1>      opens with the current schema alone
///
/// `<start>` is a wall-clock time in nanoseconds since 1970: every racer sleeps until then, so
/// the test sets how far apart they begin.
@main
struct StoreRaceProbe {
    static let v1 = SchemaDescription(
        modelName: "Race", version: 1,
        entities: [
            EntityDescription(
                name: "Item",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "price", type: .double),
                ])
        ])
    /// Adds `note`, in place.
    static let v2 = SchemaDescription(
        modelName: "Race", version: 2,
        entities: [
            EntityDescription(
                name: "Item",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "price", type: .double),
                    AttributeDescription(name: "note", type: .string, isOptional: true),
                ])
        ])
    /// Removes `note` and adds `tag`: a table rebuild, so a stage takes a while.
    static let v3 = SchemaDescription(
        modelName: "Race", version: 3,
        entities: [
            EntityDescription(
                name: "Item",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "price", type: .double),
                    AttributeDescription(name: "tag", type: .string, isOptional: true),
                ])
        ])

    /// Two stages that are not idempotent: prices double in the first and grow by 3 in the
    /// second, so a stage that ran twice shows in every price. `ran` hears each stage that ran.
    static func plan(ran: @escaping @Sendable (String) -> Void) -> MigrationPlan {
        MigrationPlan(
            current: v3,
            stages: [
                .custom(
                    from: v1, to: v2,
                    steps: [
                        MigrationStage.CustomStep(name: "double", label: "Double every price") { context in
                            try context.execute("UPDATE \"Item\" SET \"price\" = \"price\" * 2")
                            ran("double")
                        }
                    ]),
                .custom(
                    from: v2, to: v3,
                    steps: [
                        MigrationStage.CustomStep(name: "addThree", label: "Add 3 to every price") { context in
                            try context.execute("UPDATE \"Item\" SET \"price\" = \"price\" + 3")
                            ran("addThree")
                        }
                    ]),
            ])
    }

    static func main() {
        let arguments = CommandLine.arguments
        guard arguments.count >= 4 else { exit(2) }
        let url = URL(fileURLWithPath: arguments[2])
        do {
            switch arguments[1] {
            case "seed":
                _ = try Store(url: url, schema: v1)
                try sql(
                    url,
                    "WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n WHERE value < \(arguments[3])) "
                        + "INSERT INTO \"Item\" (\"id\", \"name\", \"price\") SELECT randomblob(16), 'item ' || value, value FROM n"
                )
            case "open", "create":
                guard arguments.count >= 5, let start = UInt64(arguments[3]) else { exit(2) }
                let history: HistoryTracking = arguments[4] == "1" ? .enabled(author: "racer") : .disabled
                waitUntil(start)
                let ran = Ran()
                let store =
                    arguments[1] == "open"
                    ? try Store(url: url, migrationPlan: plan { ran.append($0) }, history: history)
                    : try Store(url: url, schema: v3, history: history)
                try store.close()
                print("stages=\(ran.names.joined(separator: ","))")
            default:
                exit(2)
            }
        } catch {
            print("error: \(error)")
            exit(1)
        }
    }

    /// Sleeps until `start` nanoseconds since 1970.
    static func waitUntil(_ start: UInt64) {
        let now = UInt64(Date().timeIntervalSince1970 * 1_000_000_000)
        if start > now { usleep(useconds_t((start - now) / 1_000)) }
    }

    static func sql(_ url: URL, _ statement: String) throws {
        var handle: OpaquePointer?
        defer { sqlite3_close(handle) }
        guard sqlite3_open(url.path, &handle) == SQLITE_OK, sqlite3_exec(handle, statement, nil, nil, nil) == SQLITE_OK
        else {
            throw ProbeError(message: String(cString: sqlite3_errmsg(handle)))
        }
    }

    struct ProbeError: Error {
        let message: String
    }
}

/// The names of the stages this process ran, in order.
final class Ran: @unchecked Sendable {
    private let lock = NSLock()
    private var ran: [String] = []

    func append(_ name: String) {
        lock.lock()
        defer { lock.unlock() }
        ran.append(name)
    }

    var names: [String] {
        lock.lock()
        defer { lock.unlock() }
        return ran
    }
}
