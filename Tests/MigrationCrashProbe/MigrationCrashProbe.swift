import CSQLite
import Foundation
import Modelwright

/// A child process for the crash-safety tests: creates a store, migrates it and kills itself
/// with SIGKILL at a chosen point, or checks a store after such a kill.
///
///     MigrationCrashProbe create <store> <rows>
///     MigrationCrashProbe migrate <store> <stage>:<started|copied|hook|committed>
///     MigrationCrashProbe check <store>      prints "version=N integrity=ok", then migrates and prints "rows=N filled=N"
@main
struct MigrationCrashProbe {
    static let v1 = SchemaDescription(
        modelName: "Crash", version: 1,
        entities: [
            EntityDescription(
                name: "Person",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "age", type: .int16, isOptional: true),
                ])
        ])
    /// Removes `age`: a table rebuild.
    static let v2 = SchemaDescription(
        modelName: "Crash", version: 2,
        entities: [EntityDescription(name: "Person", attributes: [AttributeDescription(name: "name", type: .string)])])
    /// Adds the required `initial`, which a custom step fills.
    static let v3 = SchemaDescription(
        modelName: "Crash", version: 3,
        entities: [
            EntityDescription(
                name: "Person",
                attributes: [
                    AttributeDescription(name: "name", type: .string),
                    AttributeDescription(name: "initial", type: .string),
                ])
        ])

    static func plan(killAt point: String?) -> MigrationPlan {
        MigrationPlan(
            current: v3,
            stages: [
                .lightweight(from: v1, to: v2),
                .custom(
                    from: v2, to: v3,
                    steps: [
                        MigrationStage.CustomStep(name: "initials", label: "Fill initials") { context in
                            for (index, row) in try context.rows(of: "Person").enumerated() {
                                guard case .text(let name) = row["name"] else { continue }
                                try context.update(
                                    "Person", id: row.id, set: ["initial": .text(String(name.prefix(1)))])
                                if point == "2:hook", index == 500 { kill(getpid(), SIGKILL) }
                            }
                        }
                    ]),
            ])
    }

    static func main() throws {
        let arguments = CommandLine.arguments
        guard arguments.count >= 3 else { exit(2) }
        let url = URL(fileURLWithPath: arguments[2])
        switch arguments[1] {
        case "create":
            _ = try Store(url: url, schema: v1)
            try sql(
                url,
                "WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value + 1 FROM n WHERE value < \(arguments[3])) "
                    + "INSERT INTO \"Person\" (\"id\", \"name\", \"age\") "
                    + "SELECT randomblob(16), 'person ' || value, value % 90 FROM n")
        case "migrate":
            let point = arguments[3]
            _ = try Store(url: url, migrationPlan: plan(killAt: point)) { progress in
                let event: String
                switch progress.event {
                case .stageStarted: event = "started"
                case .tableCopied: event = "copied"
                case .stageCommitted: event = "committed"
                }
                if point == "\(progress.stage):\(event)" { kill(getpid(), SIGKILL) }
            }
        case "check":
            print(
                "version=\(try value(url, "SELECT value FROM _modelwright_metadata WHERE key = 'version'")) integrity=\(try value(url, "PRAGMA integrity_check"))"
            )
            _ = try Store(url: url, migrationPlan: plan(killAt: nil))
            print(
                "rows=\(try value(url, "SELECT count(*) FROM Person")) filled=\(try value(url, "SELECT count(*) FROM Person WHERE length(initial) = 1"))"
            )
        default:
            exit(2)
        }
    }

    static func sql(_ url: URL, _ statement: String) throws {
        var handle: OpaquePointer?
        guard sqlite3_open(url.path, &handle) == SQLITE_OK, sqlite3_exec(handle, statement, nil, nil, nil) == SQLITE_OK
        else {
            throw ProbeError(message: String(cString: sqlite3_errmsg(handle)))
        }
        sqlite3_close(handle)
    }

    static func value(_ url: URL, _ query: String) throws -> String {
        var handle: OpaquePointer?
        var statement: OpaquePointer?
        defer {
            sqlite3_finalize(statement)
            sqlite3_close(handle)
        }
        guard sqlite3_open(url.path, &handle) == SQLITE_OK,
            sqlite3_prepare_v2(handle, query, -1, &statement, nil) == SQLITE_OK,
            sqlite3_step(statement) == SQLITE_ROW, let text = sqlite3_column_text(statement, 0)
        else { throw ProbeError(message: String(cString: sqlite3_errmsg(handle))) }
        return String(cString: text)
    }

    struct ProbeError: Error {
        let message: String
    }
}
