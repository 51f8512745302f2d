import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// The hand-written coding of a row's change against `Codable`'s, its oracle: drawn changes with
/// every kind of value at its extremes encode to the same bytes and read back equal, JSON any
/// encoder writes for them reads the same, and broken JSON is refused (never a crash).
struct SyncJSONTests {
    /// Changes drawn per test: a few thousand in CI, many with `MODELWRIGHT_LARGE=1`.
    static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 200_000 : 1_500

    @Test func handWrittenBytesAreCodablesAndReadBackEqual() throws {
        for index in 0..<Self.caseCount {
            var generator = WideChangeGenerator(seed: 7_301, index: index)
            let change = generator.change()
            let oracle = try JSONEncoder().encode(change)
            let written = try change.json()
            #expect(
                String(decoding: written, as: UTF8.self) == String(decoding: oracle, as: UTF8.self), "case \(index)")
            #expect(written == Array(oracle), "case \(index)")
            let text = String(decoding: written, as: UTF8.self)
            #expect(try RowChange(json: text, field: "test") == change, "case \(index)")
            #expect(try JSONDecoder().decode(RowChange.self, from: Data(written)) == change, "case \(index)")
        }
        print("SyncJSONTests: \(Self.caseCount) drawn changes, byte-identical to Codable and read back")
    }

    /// What `JSONEncoder` writes with other options (whitespace, keys sorted, slashes unescaped) and
    /// `JSONSerialization` (other escapes and number forms) reads as `JSONDecoder` reads it.
    @Test func theReaderReadsAnyEncodersJSON() throws {
        let formattings: [JSONEncoder.OutputFormatting] = [
            .prettyPrinted, .withoutEscapingSlashes, [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes],
        ]
        for index in 0..<Self.caseCount / 3 {
            var generator = WideChangeGenerator(seed: 7_302, index: index)
            let change = generator.change()
            let encoder = JSONEncoder()
            encoder.outputFormatting = formattings[index % formattings.count]
            let pretty = String(decoding: try encoder.encode(change), as: UTF8.self)
            #expect(try RowChange(json: pretty, field: "test") == change, "case \(index): \(pretty)")
            let reserialized = try JSONSerialization.data(
                withJSONObject: try JSONSerialization.jsonObject(with: JSONEncoder().encode(change)))
            let viaSerialization = String(decoding: reserialized, as: UTF8.self)
            #expect(
                try RowChange(json: viaSerialization, field: "test")
                    == JSONDecoder().decode(
                        RowChange.self, from: reserialized), "case \(index): \(viaSerialization)")
        }
    }

    /// Every prefix of a change's JSON and drawn byte edits of it: the reader refuses what
    /// `JSONDecoder` refuses with a `SyncError`, never crashes, and what it accepts `JSONDecoder`
    /// accepts, equal.
    @Test func brokenJSONIsRefused() throws {
        var accepted = 0
        var refused = 0
        for index in 0..<Self.caseCount / 3 {
            var generator = WideChangeGenerator(seed: 7_303, index: index)
            let bytes = try generator.change().json()
            var variants: [[UInt8]] = [Array(bytes.prefix(generator.random.next(below: bytes.count)))]
            for _ in 0..<4 {
                var edited = bytes
                let position = generator.random.next(below: edited.count)
                switch generator.random.next(below: 3) {
                case 0: edited.remove(at: position)
                case 1:
                    edited.insert(generator.random.pick(Array("[]{},:\"\\0-.e9nu ".utf8)), at: position)
                default: edited[position] = UInt8(truncatingIfNeeded: generator.random.next())
                }
                variants.append(edited)
            }
            for variant in variants {
                let text = String(decoding: variant, as: UTF8.self)
                let oracle = try? JSONDecoder().decode(RowChange.self, from: Data(variant))
                do {
                    var reader = SyncJSONReader(variant, field: "test")
                    let read = try RowChange(reading: &reader)
                    try reader.expectEnd()
                    accepted += 1
                    #expect(read == oracle, "case \(index): \(text)")
                } catch {
                    refused += 1
                    #expect(error is SyncError, "case \(index): \(text): \(error)")
                }
            }
        }
        print("SyncJSONTests: \(accepted) broken variants still read as JSONDecoder reads them, \(refused) refused")
    }

    /// A device's record of a row it was shown, written by hand, reads back equal, and reads as
    /// `JSONDecoder` reads it; what `JSONEncoder` wrote before (keys in any order) reads the same.
    @Test func shownRowRecordsRoundTrip() throws {
        for index in 0..<Self.caseCount {
            var generator = WideChangeGenerator(seed: 7_305, index: index)
            let row = SyncServer.ShownRow(
                held: generator.random.chance(0.5),
                hidden: (0..<generator.random.next(below: 4)).map { _ in generator.name() },
                at: Int64(bitPattern: generator.random.next()) >> generator.random.next(below: 64))
            #expect(try SyncServer.ShownRow(json: row.json) == row, "case \(index)")
            #expect(
                try JSONDecoder().decode(SyncServer.ShownRow.self, from: Data(row.json.utf8)) == row, "case \(index)")
            let old = String(decoding: try JSONEncoder().encode(row), as: UTF8.self)
            #expect(try SyncServer.ShownRow(json: old) == row, "case \(index): \(old)")
        }
    }

    /// UUIDs printed and parsed by hand are Foundation's: uppercase out, either case in.
    @Test func uuidsMatchFoundations() throws {
        var random = SplitMix64(seed: 7_304)
        for _ in 0..<Self.caseCount {
            let id = randomUUID(&random)
            var writer = SyncJSONWriter()
            writer.uuid(id)
            #expect(writer.bytes == Array("\"\(id.uuidString)\"".utf8))
            var upper = SyncJSONReader(writer.bytes, field: "test")
            #expect(try upper.uuid() == id)
            var lower = SyncJSONReader("\"\(id.uuidString.lowercased())\"", field: "test")
            #expect(try lower.uuid() == id)
        }
        var bad = SyncJSONReader("\"52FF8441-B0CC-49B2-927E-B1FADCF284DG\"", field: "test")
        #expect(throws: SyncError.self) { try bad.uuid() }
    }
}

/// Draws changes over the whole range of what a change can hold: every kind of value at its
/// extremes, text with any character (controls, quotes, slashes, escapes, every plane), names of
/// any printable ASCII, stamps at the ends of their ranges, links and tombstones, nulls.
struct WideChangeGenerator {
    var random: SplitMix64

    init(seed: UInt64, index: Int) {
        random = SplitMix64(seed: seed, index: index)
    }

    mutating func uuid() -> UUID { randomUUID(&random) }

    mutating func name() -> String {
        if random.chance(0.5) { return random.pick(["title", "owner", "home.city", "tags", "a/b", "q\"uote", "\\"]) }
        let scalars = (0..<random.size(in: 1...12)).map { _ in
            Character(Unicode.Scalar(UInt8(0x21 + random.next(below: 0x7E - 0x21 + 1))))
        }
        return String(scalars)
    }

    mutating func text() -> String {
        var text = ""
        for _ in 0..<random.size(in: 0...16) {
            switch random.next(below: 6) {
            case 0: text.unicodeScalars.append(Unicode.Scalar(UInt8(random.next(below: 0x20))))
            case 1:
                text += random.pick(["\"", "\\", "/", "\u{7F}", "\u{2028}", "\u{FEFF}", "e\u{301}", "😀", "\\u0041"])
            case 2: text.unicodeScalars.append(Unicode.Scalar(UInt8(0x20 + random.next(below: 0x5F))))
            default:
                let planes: [ClosedRange<UInt32>] = [0x80...0x7FF, 0x800...0xD7FF, 0xE000...0xFFFD, 0x10000...0x10FFFF]
                let plane = random.pick(planes)
                let value = plane.lowerBound + UInt32(random.next(below: Int(plane.upperBound - plane.lowerBound + 1)))
                if let scalar = Unicode.Scalar(value) { text.unicodeScalars.append(scalar) }
            }
        }
        return text
    }

    mutating func real() -> Double {
        switch random.next(below: 4) {
        case 0:
            random.pick([
                0.0, -0.0, 1, -1, 0.1, 1e16, 1e17, 1e21, 1e22, -1e-7, .greatestFiniteMagnitude,
                -.greatestFiniteMagnitude, .leastNonzeroMagnitude, .leastNormalMagnitude, .infinity, -.infinity,
                Double(Int64.max), 123_456_789.125,
            ])
        case 1: Double(Int64(bitPattern: random.next()) >> random.next(below: 64))
        default:
            // Any finite bit pattern: subnormals, every exponent.
            {
                let value = Double(bitPattern: random.next())
                return value.isFinite ? value : 2.5
            }()
        }
    }

    mutating func value() -> SyncValue {
        switch random.next(below: 9) {
        case 0: .null
        case 1: .bool(random.chance(0.5))
        case 2:
            .integer(
                random.chance(0.3)
                    ? random.pick([Int64.min, Int64.max, 0, -1, 1])
                    : Int64(bitPattern: random.next())
                        >> random.next(below: 64))
        case 3: .real(real())
        case 4: .decimal(random.pick(["19.99", "-0.000001", "123456789012345678901234567890", "1e-3"]))
        case 5: .text(text())
        case 6: .bytes(Data((0..<random.size(in: 0...40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }))
        case 7:
            .date(
                Date(
                    timeIntervalSinceReferenceDate: random.chance(0.3)
                        ? random.pick([0, -978_307_200, 1e10, -1e10, 0.001, 798_000_000.123_456])
                        : {
                            let value = real()
                            return value.isFinite ? value : 0
                        }()))
        default: .uuid(uuid())
        }
    }

    mutating func stamp() -> HybridTimestamp {
        HybridTimestamp(
            milliseconds: random.chance(0.2) ? random.pick([0, UInt64.max, 1_764_150_000_000]) : random.next() >> 20,
            counter: random.chance(0.2) ? random.pick([0, UInt32.max]) : UInt32(random.next(below: 1000)),
            node: SyncNodeID(uuid()))
    }

    mutating func change() -> RowChange {
        var attributes: [String: StampedValue] = [:]
        for _ in 0..<random.size(in: 0...8) { attributes[name()] = StampedValue(value(), at: stamp()) }
        var links: [LinkKey: LinkStamps] = [:]
        for _ in 0..<random.size(in: 0...4) {
            links[LinkKey(relationship: name(), target: uuid())] = LinkStamps(
                added: random.chance(0.7) ? stamp() : nil, removed: random.chance(0.5) ? stamp() : nil)
        }
        return RowChange(
            key: RowKey(entity: name(), id: uuid()), inserted: random.chance(0.6) ? stamp() : nil,
            deleted: random.chance(0.3) ? stamp() : nil, attributes: attributes, links: links)
    }
}

/// The HTTP bodies that carry rows (a push, a pull's answer), written and read by hand, against
/// `Codable`'s: drawn messages encode to the bytes `JSONEncoder` with `.sortedKeys` writes and read
/// back equal, and the server's HTTP answer to a pull, which copies stored rows' text, is byte
/// for byte `Codable`'s encoding of the same answer, rows hidden in part by scopes included.
struct SyncMessageJSONTests {
    static let caseCount = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1" ? 20_000 : 200

    @Test func drawnMessagesMatchCodable() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        for index in 0..<Self.caseCount {
            var generator = WideChangeGenerator(seed: 7_310, index: index)
            let changes = ChangeSet((0..<generator.random.size(in: 0...6)).map { _ in generator.change() })
            let cursor = Int64(bitPattern: generator.random.next()) >> generator.random.next(below: 64)
            let epoch = generator.random.chance(0.5) ? SyncEpoch(generator.uuid()) : nil
            let schema = SyncSchemaVersion(
                model: generator.text(), version: generator.random.next(below: 9), checksum: "ab12")
            let push = SyncHTTPRequest.push(
                PushRequest(
                    device: SyncNodeID(generator.uuid()), schema: schema,
                    after: generator.random.chance(0.5) ? HistoryToken(cursor) : nil,
                    through: HistoryToken(cursor &+ 1),
                    changes: changes, epoch: epoch,
                    horizon: generator.random.chance(0.5) ? SyncCursor(cursor) : nil))
            let pushBytes = try push.json()
            #expect(
                String(decoding: pushBytes, as: UTF8.self) == String(decoding: try encoder.encode(push), as: UTF8.self))
            #expect(try SyncHTTPRequest(json: pushBytes) == push, "case \(index)")
            #expect(try SyncHTTPRequest(json: JSONEncoder().encode(push)) == push, "case \(index)")

            let key = RowKey(entity: "Trip", id: generator.uuid())
            let refusals: [SyncError?] = [
                nil, .notAuthenticated, .outOfScope(row: key), .malformedMessage(field: "x", reason: generator.text()),
            ]
            let pull = SyncHTTPResponse.pull(
                PullResponse(
                    changes: changes, cursor: SyncCursor(cursor), hasMore: generator.random.chance(0.5),
                    resolutions: generator.random.chance(0.5)
                        ? [.rejected(entity: "Trip", constraint: ["title"], row: key.id, kept: generator.uuid())] : [],
                    refusal: generator.random.pick(refusals), epoch: epoch,
                    dropped: generator.random.chance(0.5) ? [key, RowKey(entity: "Stop", id: generator.uuid())] : [],
                    hiddenLinks: generator.random.chance(0.5) ? [HiddenLinks(row: key, attributes: ["owner"])] : []))
            let oracle = try encoder.encode(pull)
            let stored = Dictionary(
                uniqueKeysWithValues: try changes.rows.values.filter { _ in generator.random.chance(0.5) }.map {
                    ($0.key, String(decoding: try $0.json(), as: UTF8.self))
                })
            #expect(
                String(decoding: try pull.json(stored: stored), as: UTF8.self)
                    == String(decoding: oracle, as: UTF8.self))
            #expect(try SyncHTTPResponse(json: oracle) == pull, "case \(index)")
            #expect(try SyncHTTPResponse(json: JSONEncoder().encode(pull)) == pull, "case \(index)")
        }
        print("SyncMessageJSONTests: \(Self.caseCount) drawn pushes and pull answers, byte-identical to Codable's")
    }

    /// A server under scopes holds trips whose owner (a to-one) some users may not see: their
    /// pulls show those trips without the link, so the stored text must not be copied for them.
    @Test func theHTTPAnswerToAPullIsCodablesEncodingOfTheAnswer() async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        var hiddenInPart = 0
        var rows = 0
        for seed in 0..<6 {
            var random = SplitMix64(seed: 7_311, index: seed)
            let serverStore = try Store.inMemory(schema: ScopeLinkTests.schema, history: .enabled(author: "server"))
            let server = try await SyncServer(store: serverStore, authenticate: { $0 }, scopes: ScopeLinkTests.scopes)
            for user in ScopeLinkTests.users {
                let store = try Store.inMemory(schema: ScopeLinkTests.schema, history: .enabled(author: "app"))
                let engine = try await SyncEngine(store: store, transport: server.transport(credentials: user))
                let person = UUID()
                try await ScopeLinkTests.write(
                    store,
                    .insert(
                        RowKey(entity: "Person", id: person), values: ["name": .text(user)],
                        at: try ScopeLinkTests.stamp()))
                for index in 0..<(1 + random.next(below: 4)) {
                    try await ScopeLinkTests.write(
                        store,
                        .insert(
                            RowKey(entity: "Trip", id: UUID()),
                            values: [
                                "title": .text("\(user) \(index) \"/\\ é"), "creator": .text(user),
                                "sharedWith": .text(random.pick(ScopeLinkTests.users)),
                                "owner": random.chance(0.7) ? .uuid(person) : .null,
                            ], at: try ScopeLinkTests.stamp()))
                }
                try await engine.sync()
            }
            for user in ScopeLinkTests.users {
                let request = PullRequest(
                    device: SyncNodeID(),
                    schema: SyncSchemaVersion(
                        model: serverStore.schema.modelName, version: serverStore.schema.version,
                        checksum: serverStore.schema.checksum.hexDigits), since: nil, limit: 1 + random.next(below: 20))
                let answer = try await server.pull(request, credentials: user)
                let http = await server.handle(try SyncHTTPRequest.pull(request).json(), credentials: user)
                #expect(
                    String(decoding: http, as: UTF8.self)
                        == String(decoding: try encoder.encode(SyncHTTPResponse.pull(answer)), as: UTF8.self),
                    "seed \(seed), \(user)")
                hiddenInPart += answer.hiddenLinks.count
                rows += answer.changes.rows.count
            }
        }
        #expect(hiddenInPart > 0)
        print("SyncMessageJSONTests: \(rows) rows pulled over handle(), \(hiddenInPart) of them with a link hidden")
    }
}
