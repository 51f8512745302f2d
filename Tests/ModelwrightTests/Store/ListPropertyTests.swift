import Foundation
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// `in` and `notIn` lists of every value type a list can hold select the same records on every
/// engine, as the documented rules say: a record is in when its value equals one of the list's
/// (exactly: strings by code point, decimals and numbers by value, -0.0 equal to 0.0), a missing
/// value is in no list and outside every one. PostgreSQL binds each list as one array parameter
/// (issue 27), SQLite a parameter per value; the lists are drawn: empty, one value, duplicates,
/// absent values, and a long one (3,000 values; 70,000 with `MODELWRIGHT_LARGE=1`).
@Suite(.heavy)
struct ListPropertyTests {
    private static let isLarge = ProcessInfo.processInfo.environment["MODELWRIGHT_LARGE"] == "1"
    /// The long list's length.
    fileprivate static let longList = isLarge ? 70_000 : 3_000
    /// Lists drawn per value type, besides the long one.
    fileprivate static let rounds = isLarge ? 40 : 12
    private static let stored = 40

    @Test(arguments: TestEngine.available)
    func listsSelectWhatTheRulesSelect(engine: TestEngine) async throws {
        var generator = SplitMix64(seed: 27)
        let samples = (0..<Self.stored).map { _ in Self.sample(&generator) }
        try await engine.withStore(schema: Fixture.schema) { store in
            _ = try await store.performAndSave { try $0.batchInsert(samples) }
            for column in Self.columns {
                try await column.check(on: store, samples: samples, engine: engine, generator: &generator)
            }
            // The store still works after every list.
            try await store.performAndSave { try $0.insert(Sample()) }
            #expect(try await store.performQuery { try $0.count(Sample.request()) } == Self.stored + 1)
        }
    }

    // MARK: - Values

    private static let strings = [
        "", "a", "A", "é", "e\u{301}", "emoji 👩‍👩‍👧‍👦🇵🇹", "it's \"quoted\"", "\\back{slash}", "comma,{brace}",
        "\u{10FFFF}", "Robert'); DROP TABLE \"User\";--", "NULL", " ",
    ]
    private static let doubles: [Double] = [
        -0.0, 0.0, 1.0 / 3.0, .infinity, -.infinity, .greatestFiniteMagnitude, .leastNonzeroMagnitude, -12.5,
    ]
    private static let floats: [Float] = [-0.0, 0.0, 0.1, .infinity, -.infinity, .greatestFiniteMagnitude, 3.5]
    private static let decimals = ["0", "-1.5", "19.99", "0.1", "123456789.25", "-0.000001"].map {
        Decimal(string: $0)!
    }
    private static let datas = [Data(), Data([0]), Data([0, 0]), Data([255]), Data([1, 2, 3])]
    private static let uuids = (0..<6).map { _ in UUID() }
    private static let urls = ["https://example.com", "https://example.com/a%20b?q=1#f", "file:///tmp/x"].map {
        URL(string: $0)!
    }
    /// Whole milliseconds: PostgreSQL keeps microseconds, SQLite every bit, so these are equal on both.
    private static let dates = [0, -1e9, 1e9, 123_456.789, -0.001].map { Date(timeIntervalSinceReferenceDate: $0) }

    private static func sample(_ generator: inout SplitMix64) -> Sample {
        func pick<T>(_ values: [T]) -> T { values[generator.next(below: values.count)] }
        var sample = Sample()
        sample.bool = generator.next(below: 2) == 1
        sample.int16 = pick([.min, -1, 0, 1, .max])
        sample.int32 = pick([.min, -1, 0, 7, .max])
        sample.int64 = pick(ExtremeValues.integers)
        sample.int = Int(pick(ExtremeValues.integers))
        sample.double = pick(doubles)
        sample.float = pick(floats)
        sample.decimal = pick(decimals)
        sample.string = pick(strings)
        sample.date = pick(dates)
        sample.data = pick(datas)
        sample.uuid = pick(uuids)
        sample.url = pick(urls)
        sample.role = pick([.member, .admin])
        sample.note = generator.next(below: 3) == 0 ? nil : pick(strings)
        return sample
    }

    private static let columns: [any ListColumn] = [
        Column("id", { $0.id }, { $0.id }, pool: [], fresh: { _ in Sample.ID() }),
        Column("bool", { $0.bool }, { $0.bool }, pool: [true, false]),
        Column(
            "int16", { $0.int16 }, { $0.int16 }, pool: [.min, -1, 0, 1, .max],
            fresh: { Int16(truncatingIfNeeded: $0.next()) }),
        Column(
            "int32", { $0.int32 }, { $0.int32 }, pool: [.min, -1, 0, 7, .max],
            fresh: { Int32(truncatingIfNeeded: $0.next()) }),
        Column(
            "int64", { $0.int64 }, { $0.int64 }, pool: ExtremeValues.integers, fresh: { Int64(bitPattern: $0.next()) }),
        Column(
            "int", { $0.int }, { $0.int }, pool: ExtremeValues.integers.map { Int($0) },
            fresh: { Int(truncatingIfNeeded: $0.next()) }),
        Column(
            "double", { $0.double }, { $0.double }, pool: doubles + [.nan],
            fresh: { Double($0.next(below: 1_000_000)) / 8 }),
        Column(
            "float", { $0.float }, { $0.float }, pool: floats + [.nan], fresh: { Float($0.next(below: 1_000_000)) / 8 }),
        Column(
            "decimal", { $0.decimal }, { $0.decimal }, pool: decimals,
            fresh: { Decimal($0.next(below: 1_000_000)) / 4 + 1_000_000 }),
        Column(
            "string", { $0.string }, { $0.string }, pool: strings, equal: { $0.utf8.elementsEqual($1.utf8) },
            fresh: { "absent \($0.next())" }),
        Column(
            "date", { $0.date }, { $0.date }, pool: dates,
            fresh: { Date(timeIntervalSinceReferenceDate: Double($0.next(below: 1 << 40)) / 1_000 + 2e9) }),
        Column("data", { $0.data }, { $0.data }, pool: datas, fresh: { withUnsafeBytes(of: $0.next()) { Data($0) } }),
        Column("uuid", { $0.uuid }, { $0.uuid }, pool: uuids, fresh: { _ in UUID() }),
        Column(
            "url", { $0.url }, { $0.url }, pool: urls, fresh: { URL(string: "https://absent.example/\($0.next())")! }),
        Column("role", { $0.role }, { $0.role }, pool: [.member, .admin]),
        OptionalColumn(
            "note", { $0.note }, { $0.note }, pool: strings, equal: { $0.utf8.elementsEqual($1.utf8) },
            fresh: { "absent \($0.next())" }),
    ]
}

// MARK: - Columns

/// One attribute's lists: drawn, run on a store, and checked against the rules.
private protocol ListColumn: Sendable {
    func check(on store: Store, samples: [Sample], engine: TestEngine, generator: inout SplitMix64) async throws
}

extension ListColumn {
    /// Lists of `pool` and `fresh` values: empty, one, duplicates, mixed, then one long one.
    fileprivate func lists<Value>(
        pool: [Value], stored: [Value], fresh: (inout SplitMix64) -> Value, generator: inout SplitMix64
    ) -> [[Value]] {
        let known = pool + stored
        func draw(_ count: Int) -> [Value] {
            (0..<count).map { _ in
                generator.next(below: 4) == 0 || known.isEmpty
                    ? fresh(&generator) : known[generator.next(below: known.count)]
            }
        }
        var lists: [[Value]] = [[], draw(1)]
        if let one = known.first { lists.append(Array(repeating: one, count: 3)) }
        for _ in 0..<ListPropertyTests.rounds { lists.append(draw(1 + generator.next(below: 12))) }
        lists.append(draw(ListPropertyTests.longList))
        return lists
    }
}

private struct Column<Value: ColumnValue>: ListColumn {
    let name: String
    let value: @Sendable (Sample) -> Value
    let field: @Sendable (Sample.Fields) -> Field<Value>
    let pool: [Value]
    let equal: @Sendable (Value, Value) -> Bool
    let fresh: @Sendable (inout SplitMix64) -> Value

    init(
        _ name: String, _ value: @escaping @Sendable (Sample) -> Value,
        _ field: @escaping @Sendable (Sample.Fields) -> Field<Value>, pool: [Value],
        equal: @escaping @Sendable (Value, Value) -> Bool = { $0 == $1 },
        fresh: (@Sendable (inout SplitMix64) -> Value)? = nil
    ) where Value: Equatable {
        self.name = name
        self.value = value
        self.field = field
        self.pool = pool
        self.equal = equal
        self.fresh = fresh ?? { [pool] generator in pool[generator.next(below: pool.count)] }
    }

    func check(on store: Store, samples: [Sample], engine: TestEngine, generator: inout SplitMix64) async throws {
        let stored = samples.map(value)
        for list in lists(pool: pool, stored: stored, fresh: fresh, generator: &generator) {
            let field = field
            let (inside, outside) = try await store.performQuery { context in
                (
                    Set(try context.fetch(Sample.request().filter { field($0).in(list) }).map(\.id)),
                    Set(try context.fetch(Sample.request().filter { field($0).notIn(list) }).map(\.id))
                )
            }
            let expected = Set(samples.filter { sample in list.contains { equal(value(sample), $0) } }.map(\.id))
            #expect(
                inside.intersection(samplesIDs(samples)) == expected,
                "\(engine) \(name) in \(list.prefix(8)) (\(list.count))")
            #expect(
                outside.intersection(samplesIDs(samples)) == samplesIDs(samples).subtracting(expected),
                "\(engine) \(name) notIn \(list.prefix(8)) (\(list.count))")
        }
    }
}

private struct OptionalColumn<Value: ColumnValue & Equatable>: ListColumn {
    let name: String
    let value: @Sendable (Sample) -> Value?
    let field: @Sendable (Sample.Fields) -> Field<Value?>
    let pool: [Value]
    let equal: @Sendable (Value, Value) -> Bool
    let fresh: @Sendable (inout SplitMix64) -> Value

    init(
        _ name: String, _ value: @escaping @Sendable (Sample) -> Value?,
        _ field: @escaping @Sendable (Sample.Fields) -> Field<Value?>, pool: [Value],
        equal: @escaping @Sendable (Value, Value) -> Bool, fresh: @escaping @Sendable (inout SplitMix64) -> Value
    ) {
        self.name = name
        self.value = value
        self.field = field
        self.pool = pool
        self.equal = equal
        self.fresh = fresh
    }

    func check(on store: Store, samples: [Sample], engine: TestEngine, generator: inout SplitMix64) async throws {
        let stored = samples.compactMap(value)
        for list in lists(pool: pool, stored: stored, fresh: fresh, generator: &generator) {
            let field = field
            let (inside, outside) = try await store.performQuery { context in
                (
                    Set(try context.fetch(Sample.request().filter { field($0).in(list) }).map(\.id)),
                    Set(try context.fetch(Sample.request().filter { field($0).notIn(list) }).map(\.id))
                )
            }
            // A missing value is in no list, and outside every one (as `!=` is true for it).
            let expected = Set(
                samples.filter { sample in value(sample).map { stored in list.contains { equal(stored, $0) } } ?? false
                }
                .map(\.id))
            #expect(
                inside.intersection(samplesIDs(samples)) == expected,
                "\(engine) \(name) in \(list.prefix(8)) (\(list.count))")
            #expect(
                outside.intersection(samplesIDs(samples)) == samplesIDs(samples).subtracting(expected),
                "\(engine) \(name) notIn \(list.prefix(8)) (\(list.count))")
        }
    }
}

private func samplesIDs(_ samples: [Sample]) -> Set<Sample.ID> {
    Set(samples.map(\.id))
}
