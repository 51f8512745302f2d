import CSQLiteBench
import Foundation

/// Runs every workload for every contender in one process and prints the results as a table,
/// with each time's ratio to raw C and whether Modelwright meets its targets.
///
///     swift run -c release ModelwrightBenchmarks [--rows N] [--repetitions R] [--fetches F]
///         [--counts C] [--memory-rows M] [--skip-memory] [--workloads insert,fetchAll,indexedFetch,sortedFetch,lookupByID,count]
///         [--only raw,modelwright,grdb-codable,grdb-optimized]
///
/// The defaults are the published configuration; the options are for profiling one contender
/// or one workload.
@main
@MainActor
enum ModelwrightBenchmarks {
    static func main() async throws {
        let options = try Options(arguments: Array(CommandLine.arguments.dropFirst()))
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("ModelwrightBenchmarks-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        print("Modelwright benchmarks")
        let process = ProcessInfo.processInfo
        print("  SQLite \(String(cString: sqlite3_libversion())), \(process.activeProcessorCount) cores")
        print("  \(options.rows.grouped) rows, best of \(options.repetitions) runs, databases in \(directory.path)")
        #if DEBUG
            print("  WARNING: debug build; run with `swift run -c release ModelwrightBenchmarks`")
        #endif
        print("")

        // The memory check runs first, in a process whose heap no earlier workload has grown.
        var memory: MemoryCheck.Result?
        if !options.skipMemory {
            print("memory: filling a store with \(options.memoryRows.grouped) rows…")
            memory = try await MemoryCheck.run(rows: options.memoryRows, in: directory)
        }

        let seeds = PersonSeed.make(count: options.rows)
        let ages = (0..<options.fetches).map { ($0 * 7919) % PersonSeed.ageCount }
        let expected = Expected(seeds: seeds, ages: ages, counts: options.counts)
        var timings = Timings()

        for workload in options.workloads {
            print("\(workload.title(rows: options.rows, fetches: options.fetches, counts: options.counts))…")
            // Contenders take turns run by run, so that drift in the machine's speed (large on a
            // shared virtual machine) hits them all alike; the order rotates every run, so that no
            // contender always follows the one whose garbage fills the heap. Run -1 warms up.
            let contenders = options.contenders
            var filled: [(any Contender)?] = Array(repeating: nil, count: contenders.count)
            for run in -1..<options.repetitions {
                for turn in contenders.indices {
                    let index = (max(run, 0) + turn) % contenders.count
                    let contender = contenders[index]
                    let duration = try await time(
                        workload, contender, run: run, in: directory, expected: expected, filled: &filled[index])
                    if run >= 0 {
                        timings.record(duration, workload, contender.name)
                    }
                }
            }
            for database in filled {
                try await database?.close()
            }
        }
        try? FileManager.default.removeItem(at: directory)

        print("")
        Report(options: options, timings: timings, memory: memory).print()
    }

    /// Runs `workload` once for `contender` and returns how long it took, after checking its
    /// result. An insert gets a fresh database every run; a read workload runs on `filled`,
    /// which the first run creates and fills, untimed.
    private static func time(
        _ workload: Workload,
        _ contender: Entrant,
        run: Int,
        in directory: URL,
        expected: Expected,
        filled: inout (any Contender)?
    ) async throws -> Duration {
        if workload == .insert {
            let url = directory.appendingPathComponent("insert-\(contender.slug)-\(run).sqlite")
            let database = try await contender.open(url, expected.seeds)
            let (duration, _) = try await measure { try await database.insertAll() }
            try check(try await database.count(minimumAge: 0, times: 1), expected.rows, workload, contender)
            try await database.close()
            try removeDatabase(url)
            return duration
        }
        let database: any Contender
        if let filled {
            database = filled
        } else {
            let url = directory.appendingPathComponent("\(workload)-\(contender.slug).sqlite")
            database = try await contender.open(url, expected.seeds)
            try await database.insertAll()
            filled = database
        }
        switch workload {
        case .insert:
            preconditionFailure("inserts are timed above")
        case .fetchAll:
            let (duration, fetched) = try await measure { try await database.fetchAll() }
            try check(fetched.digest, expected.all, workload, contender)
            return duration
        case .indexedFetch:
            let (duration, digest) = try await measure { try await database.fetch(ages: expected.ages) }
            try check(digest, expected.byAge, workload, contender)
            return duration
        case .sortedFetch:
            let (duration, digest) = try await measure { try await database.fetchNewest(ages: expected.ages) }
            try check(digest, expected.newestByAge, workload, contender)
            return duration
        case .lookupByID:
            let (duration, digest) = try await measure { try await database.lookUp(ids: expected.ids) }
            try check(digest, expected.lookedUp, workload, contender)
            return duration
        case .count:
            let (duration, total) = try await measure {
                try await database.count(minimumAge: Workload.minimumAge, times: expected.counts)
            }
            try check(total, expected.counted, workload, contender)
            return duration
        }
    }

    private static func check<Value: Equatable>(
        _ value: Value,
        _ expected: Value,
        _ workload: Workload,
        _ contender: Entrant
    ) throws {
        guard value == expected else {
            throw BenchmarkError("\(contender.name), \(workload): got \(value), expected \(expected)")
        }
    }

    private static func removeDatabase(_ url: URL) throws {
        for suffix in ["", "-wal", "-shm"] {
            let file = URL(fileURLWithPath: url.path + suffix)
            if FileManager.default.fileExists(atPath: file.path) {
                try FileManager.default.removeItem(at: file)
            }
        }
    }
}

/// What every contender must return, computed from the seeds without any database.
private struct Expected {
    let seeds: [PersonSeed]
    let ages: [Int]
    let counts: Int
    let rows: Int
    let all: Digest
    let byAge: Digest
    let newestByAge: Digest
    let ids: [UUID]
    let lookedUp: Digest
    let counted: Int

    init(seeds: [PersonSeed], ages: [Int], counts: Int) {
        self.seeds = seeds
        self.ages = ages
        self.counts = counts
        rows = seeds.count
        var all = Digest()
        var byAge: [Int: Digest] = [:]
        var peopleByAge: [Int: [PersonSeed]] = [:]
        for seed in seeds {
            all.add(seed)
            byAge[seed.age, default: Digest()].add(seed)
            peopleByAge[seed.age, default: []].append(seed)
        }
        self.all = all
        var picked = Digest()
        var newest = Digest()
        for age in ages {
            picked.add(byAge[age] ?? Digest())
            let people = (peopleByAge[age] ?? []).sorted { $0.createdAt > $1.createdAt }
            for person in people.prefix(Workload.sortedLimit) {
                newest.add(person)
            }
        }
        self.byAge = picked
        newestByAge = newest
        // The same spread of rows as the ages: every lookup finds a different person.
        let looked = seeds.isEmpty ? [] : (0..<ages.count).map { seeds[($0 * 7919) % seeds.count] }
        ids = looked.map(\.id)
        var lookedUp = Digest()
        for person in looked {
            lookedUp.add(person)
        }
        self.lookedUp = lookedUp
        counted = counts * seeds.filter { $0.age >= Workload.minimumAge }.count
    }
}

/// The command line.
struct Options {
    var rows = 100_000
    var repetitions = 7
    var fetches = 1_000
    var counts = 100
    var memoryRows = 1_000_000
    var skipMemory = false
    var workloads = Workload.allCases
    var contenders = Options.allContenders

    static var allContenders: [Entrant] {
        [
            Entrant(RawSQLite.self), Entrant(ModelwrightContender.self), Entrant(GRDBCodable.self),
            Entrant(GRDBOptimized.self),
        ]
    }

    init(arguments: [String]) throws {
        var remaining = arguments[...]
        func number(_ flag: String) throws -> Int {
            guard let text = remaining.popFirst(), let value = Int(text), value > 0 else {
                throw BenchmarkError("\(flag) needs a positive number")
            }
            return value
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--rows": rows = try number(argument)
            case "--repetitions": repetitions = try number(argument)
            case "--fetches": fetches = try number(argument)
            case "--counts": counts = try number(argument)
            case "--memory-rows": memoryRows = try number(argument)
            case "--skip-memory": skipMemory = true
            case "--workloads":
                let names = (remaining.popFirst() ?? "").split(separator: ",").map(String.init)
                workloads = Workload.allCases.filter { names.contains($0.rawValue) }
                guard !workloads.isEmpty else {
                    let words = Workload.allCases.map(\.rawValue).joined(separator: ", ")
                    throw BenchmarkError("--workloads takes names among: \(words)")
                }
            case "--only":
                let names = (remaining.popFirst() ?? "").lowercased().split(separator: ",").map(String.init)
                let all = Options.allContenders
                contenders = all.filter { contender in
                    names.contains { contender.slug.hasPrefix($0) }
                }
                guard !contenders.isEmpty else {
                    let words = all.map(\.slug).joined(separator: ", ")
                    throw BenchmarkError("--only takes names among: \(words)")
                }
            default:
                throw BenchmarkError(
                    "unknown argument \(argument); use --rows, --repetitions, --fetches, --counts, "
                        + "--memory-rows, --skip-memory, --workloads, --only")
            }
        }
    }
}
