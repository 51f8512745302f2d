import Foundation

@testable import Modelwright

// The coding cost of sync's rows (issue 28): `Codable` through Foundation's JSONEncoder and
// JSONDecoder, as every step of a sync coded a row before, against the hand-written coding that
// replaced it, on rows shaped like the example burst's notes. Internal API, so build with testing
// enabled:
//
//     MODELWRIGHT_BENCHMARKS_WITHOUT_NIO=1 swift build -c release -Xswiftc -enable-testing --product SyncCodingBenchmarks
//     $(swift build -c release --show-bin-path)/SyncCodingBenchmarks [--rows 24000] [--repetitions 5]

let arguments = CommandLine.arguments
func option(_ name: String, default value: Int) -> Int {
    guard let index = arguments.firstIndex(of: "--\(name)"), index + 1 < arguments.count else { return value }
    return Int(arguments[index + 1]) ?? value
}
let rowCount = option("rows", default: 24_000)
let repetitions = option("repetitions", default: 5)

/// One note as the burst makes it: inserted with its values, one in five edited later.
func note(_ index: Int, device: SyncNodeID) -> RowChange {
    let inserted = HybridTimestamp(milliseconds: 1_764_150_000_000 + UInt64(index), counter: 0, node: device)
    var change = RowChange.insert(
        RowKey(entity: "Note", id: UUID()),
        values: [
            "owner": .text("ines"), "title": .text("note \(index) of \(device.uuid.uuidString.prefix(8))"),
            "body": .text(""), "revision": .integer(0),
        ], at: inserted)
    if index % 5 == 0 {
        let edited = HybridTimestamp(milliseconds: inserted.milliseconds + 7, counter: 1, node: device)
        change.merge(.update(change.key, values: ["revision": .integer(1), "title": .text("edited \(index)")], at: edited))
    }
    return change
}

let devices = (0..<3).map { _ in SyncNodeID() }
let rows = (0..<rowCount).map { note($0, device: devices[$0 % 3]) }
let encoder = JSONEncoder()
let sortedEncoder = JSONEncoder()
sortedEncoder.outputFormatting = [.sortedKeys]
let decoder = JSONDecoder()

/// The median wall time of `repetitions` runs of `body`, in milliseconds.
func measure(_ body: () throws -> Void) rethrows -> Double {
    var times: [Double] = []
    for _ in 0..<repetitions {
        let start = ContinuousClock.now
        try body()
        let elapsed = ContinuousClock.now - start
        times.append(Double(elapsed.components.seconds) * 1e3 + Double(elapsed.components.attoseconds) / 1e15)
    }
    return times.sorted()[times.count / 2]
}

func report(_ name: String, codable: Double, hand: Double) {
    print(
        name.padding(toLength: 58, withPad: " ", startingAt: 0)
            + String(format: "%9.1f ms %9.1f ms %7.1f×", codable, hand, codable / hand))
}

print("\(rowCount) notes, median of \(repetitions) runs".padding(toLength: 58, withPad: " ", startingAt: 0) + "  Codable      by hand  speed-up")
var sink = 0

// Stored records: each row written and read back one at a time, as the bookkeeping does.
let texts = try rows.map { String(decoding: try $0.json(), as: UTF8.self) }
report(
    "stored record: encode each row",
    codable: try measure { for row in rows { sink &+= try encoder.encode(row).count } },
    hand: try measure { for row in rows { sink &+= String(decoding: try row.json(), as: UTF8.self).utf8.count } })
report(
    "stored record: decode each row",
    codable: try measure { for text in texts { sink &+= try decoder.decode(RowChange.self, from: Data(text.utf8)).attributes.count } },
    hand: try measure { for text in texts { sink &+= try RowChange(json: text, field: "bench").attributes.count } })

// Messages: a push of a device's rows, and pull answers of 5,000 rows.
let schema = SyncSchemaVersion(model: "Notes", version: 1, checksum: String(repeating: "ab", count: 32))
let push = SyncHTTPRequest.push(
    PushRequest(
        device: devices[0], schema: schema, after: nil, through: HistoryToken(Int64(rowCount)),
        changes: ChangeSet(rows.prefix(rowCount / 3)), epoch: SyncEpoch(), horizon: SyncCursor(0)))
let pushBody = try push.json()
report(
    "push of \(rowCount / 3) rows: encode (device)",
    codable: try measure { sink &+= try encoder.encode(push).count },
    hand: try measure { sink &+= try push.json().count })
report(
    "push of \(rowCount / 3) rows: decode (server)",
    codable: try measure { sink &+= try decoder.decode(SyncHTTPRequest.self, from: pushBody).hashValue & 1 },
    hand: try measure { sink &+= try SyncHTTPRequest(json: pushBody).hashValue & 1 })

let page = Array(rows.prefix(5_000))
let pull = SyncHTTPResponse.pull(
    PullResponse(changes: ChangeSet(page), cursor: SyncCursor(5_000), hasMore: true, epoch: SyncEpoch()))
let stored = Dictionary(uniqueKeysWithValues: zip(page.map(\.key), texts.prefix(5_000)))
let pullBody = try pull.json()
report(
    "pull answer of 5,000 rows: encode (server)",
    codable: try measure { sink &+= try sortedEncoder.encode(pull).count },
    hand: try measure { sink &+= try pull.json().count })
report(
    "pull answer of 5,000 rows: encode, stored text copied",
    codable: try measure { sink &+= try sortedEncoder.encode(pull).count },
    hand: try measure { sink &+= try pull.json(stored: stored).count })
report(
    "pull answer of 5,000 rows: decode (device)",
    codable: try measure { sink &+= try decoder.decode(SyncHTTPResponse.self, from: pullBody).hashValue & 1 },
    hand: try measure { sink &+= try SyncHTTPResponse(json: pullBody).hashValue & 1 })
print("(checksum \(sink & 0xFF))")
