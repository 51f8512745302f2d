import Foundation
@_spi(Generated) import Modelwright
import ModelwrightGenerator

/// How long the code generated for a model with a long history takes to compile, next to the
/// same model's current version alone and to plain structs with the same stored properties, in
/// one run: every round compiles the three in turn, so they share the machine's load.
///
/// From `Benchmarks/`, after `swift build --product modelwright` and `swift build --target Trips`
/// in the repository (the generator, and the Modelwright module the generated code imports):
///
///     swift run -c release CompileBenchmarks <model folder> [--runs 5] [--decode-only]
///
/// Each compile is `swiftc -parse-as-library -c -Onone -g -j 1` of every generated file (a debug
/// build's settings, one job at a time); the figures are medians of CPU time (user + system of
/// the compiler processes) and wall time. A last, separate compile of each generated variant
/// with `-warn-long-function-bodies=100 -warn-long-expression-type-checking=100` lists every
/// function body or expression that took over 100 ms to type-check.
@main
struct CompileBenchmarks {
    static func main() {
        do {
            try run()
        } catch {
            print("error: \(error)")
            exit(1)
        }
    }

    static func run() throws {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var runs = 5
        if let index = arguments.firstIndex(of: "--runs"), index + 1 < arguments.count {
            runs = max(1, Int(arguments[index + 1]) ?? runs)
            arguments.removeSubrange(index...(index + 1))
        }
        let decodeOnly = arguments.contains("--decode-only")
        arguments.removeAll { $0 == "--decode-only" }
        guard let modelFolder = arguments.first else {
            print("usage: CompileBenchmarks <model folder> [--runs N] [--decode-only]")
            exit(2)
        }
        if decodeOnly { return try DecodeTiming.print(modelFolder: modelFolder) }
        let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("compile-bench-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: work) }
        let variants = try Variants.make(model: URL(fileURLWithPath: modelFolder), repository: repository, in: work)
        let compiler = Compiler(repository: repository, work: work)
        try variants.describe()
        try DecodeTiming.print(modelFolder: modelFolder)
        var samples: [String: [Compiler.Sample]] = [:]
        for round in 1...runs {
            for variant in variants.all {
                let sample = try compiler.compile(variant)
                samples[variant.name, default: []].append(sample)
                print("round \(round): \(variant.name) \(sample)")
            }
        }
        Report(variants: variants.all, samples: samples).print()
        for variant in variants.all where variant.isGenerated {
            let slow = try compiler.slowTypeChecks(variant)
            print("\(variant.name): \(slow.count) function bodies or expressions over 100 ms to type-check")
            for line in slow { print("  " + line) }
        }
    }
}

/// One set of source files to compile.
struct Variant {
    let name: String
    let files: [URL]
    let isGenerated: Bool
}

/// The three variants: the whole history, the current version alone, plain structs.
struct Variants {
    let history: Variant
    let current: Variant
    let plain: Variant
    let conforming: Variant
    var all: [Variant] { [history, current, plain, conforming] }

    static func make(model folder: URL, repository: URL, in work: URL) throws -> Variants {
        let loaded = try Pipeline.run(modelAt: folder.path)
        guard let model = loaded.model, let current = model.current else {
            throw BenchmarkError("\(folder.path) does not load: \(loaded.diagnostics.prefix(3))")
        }
        let history = try generate(model: folder, named: "history", repository, work)
        // The current version alone: its file, numbered 1, in a folder of its own.
        let alone = work.appendingPathComponent("current-model")
        try FileManager.default.createDirectory(at: alone, withIntermediateDirectories: true)
        var text = try String(contentsOfFile: current.path, encoding: .utf8)
        text = text.replacingOccurrences(
            of: "model \(model.name) version \(current.number)\n", with: "model \(model.name) version 1\n")
        if let migration = text.range(of: "\nmigration from ") {
            text = String(text[..<migration.lowerBound]) + "\n"
        }
        try text.write(to: alone.appendingPathComponent("\(model.name).v1.model"), atomically: true, encoding: .utf8)
        let currentFiles = try generate(model: alone, named: "current", repository, work)
        let plainFile = work.appendingPathComponent("plain/Plain.swift")
        let conformingFile = work.appendingPathComponent("conforming/Plain.swift")
        for (file, conformances) in [(plainFile, ""), (conformingFile, ": Hashable, Codable, Sendable")] {
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try PlainStructs.source(for: current.schema, conformances: conformances).write(
                to: file, atomically: true, encoding: .utf8)
        }
        return Variants(
            history: Variant(name: "history (\(model.versions.count) versions)", files: history, isGenerated: true),
            current: Variant(name: "current version alone", files: currentFiles, isGenerated: true),
            plain: Variant(name: "plain structs", files: [plainFile], isGenerated: false),
            conforming: Variant(name: "plain, Hashable+Codable", files: [conformingFile], isGenerated: false))
    }

    /// Runs the repository's `modelwright generate` on a model folder.
    private static func generate(model: URL, named name: String, _ repository: URL, _ work: URL) throws -> [URL] {
        let output = work.appendingPathComponent(name)
        let tool = repository.appendingPathComponent(".build/debug/modelwright")
        let result = try Run.process(tool, ["generate", model.path, "--output", output.path])
        guard result.status == 0 else { throw BenchmarkError("generate failed: \(result.errors)") }
        return try FileManager.default.contentsOfDirectory(atPath: output.path).filter { $0.hasSuffix(".swift") }
            .sorted().map { output.appendingPathComponent($0) }
    }

    func describe() throws {
        for variant in all {
            var bytes = 0
            var lines = 0
            for file in variant.files {
                let data = try Data(contentsOf: file)
                bytes += data.count
                lines += data.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            }
            let schema = variant.files.first { $0.lastPathComponent.hasSuffix("+Schema.swift") }
            let schemaFigures = try schema.map { file -> String in
                let data = try Data(contentsOf: file)
                let lines = data.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
                return "; \(file.lastPathComponent): \(data.count) bytes, \(lines) lines"
            }
            print("\(variant.name): \(variant.files.count) files, \(bytes) bytes, \(lines) lines\(schemaFigures ?? "")")
        }
    }
}

/// `struct X { let a: Int; … }` for every concrete entity of a schema: its own and inherited
/// attributes and its to-one relationships as IDs, the stored properties its record has; with
/// `conformances`, the protocols (`: Hashable, Codable, Sendable`) each struct adopts.
enum PlainStructs {
    static func source(for schema: SchemaDescription, conformances: String = "") -> String {
        var lines = ["import Foundation"]
        var composites: [String: CompositeDescription] = [:]
        for entity in schema.entities where !entity.isAbstract {
            lines.append("")
            lines.append("struct Plain\(entity.name)\(conformances) {")
            lines.append("    let id: UUID")
            let lineage = lineage(of: entity, in: schema)
            // As the records do: `<relationship>RecordID` where an attribute already takes `<relationship>ID`.
            var taken = Set(lineage.flatMap { $0.attributes.map(\.name) })
            for ancestor in lineage {
                for attribute in ancestor.attributes {
                    if case .composite(let composite) = attribute.type { composites[composite.name] = composite }
                    lines.append("    let `\(attribute.name)`: \(type(of: attribute))")
                }
                for relationship in ancestor.relationships where relationship.cardinality == .toOne {
                    let plain = relationship.name + "ID"
                    let name = taken.contains(plain) ? relationship.name + "RecordID" : plain
                    taken.insert(name)
                    lines.append("    let `\(name)`: UUID?")
                }
            }
            lines.append("}")
        }
        for name in composites.keys.sorted() {
            guard let composite = composites[name] else { continue }
            lines.append("")
            lines.append("struct PlainComposite\(name)\(conformances) {")
            for field in composite.fields {
                lines.append("    let `\(field.name)`: \(type(of: field))")
            }
            lines.append("}")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The entity and its ancestors, the root first.
    private static func lineage(of entity: EntityDescription, in schema: SchemaDescription) -> [EntityDescription] {
        var chain = [entity]
        while let parent = chain.first?.parent, let next = schema.entity(named: parent), chain.count < 64 {
            chain.insert(next, at: 0)
        }
        return chain
    }

    private static func type(of attribute: AttributeDescription) -> String {
        let base: String
        switch attribute.type {
        case .bool: base = "Bool"
        case .int16: base = "Int16"
        case .int32: base = "Int32"
        case .int64: base = "Int64"
        case .int: base = "Int"
        case .double: base = "Double"
        case .float: base = "Float"
        case .decimal: base = "Decimal"
        case .string: base = "String"
        case .date: base = "Date"
        case .data, .codable: base = "Data"
        case .uuid: base = "UUID"
        case .url: base = "URL"
        case .enumeration(let description): base = description.rawType == .string ? "String" : "Int"
        case .composite(let description): base = "PlainComposite\(description.name)"
        }
        return base + (attribute.isOptional ? "?" : "")
    }
}

/// What a store of the oldest version pays at run time for the archives: decoding every
/// historical version once (as its migration does), checksum check included.
enum DecodeTiming {
    static func print(modelFolder: String) throws {
        guard let model = try Pipeline.run(modelAt: modelFolder).model else { return }
        let archived = model.versions.dropLast().map {
            SchemaVersion(version: $0.number, checksum: $0.checksum.hexDigits, archive: $0.schema.archive)
        }
        let texts = model.versions.dropLast().map(\.schema.archive)
        let bytes = texts.reduce(0) { $0 + $1.utf8.count }
        let parse = try milliseconds { for text in texts { _ = try SchemaDescription(archive: text) } }
        let decode = try milliseconds { for version in archived { _ = try version.schema() } }
        Swift.print(
            String(
                format:
                    "decoding all %d archived versions (%d bytes): %.0f ms, of which parsing %.0f ms, checksums the rest",
                archived.count, bytes, decode, parse))
    }

    private static func milliseconds(_ body: () throws -> Void) rethrows -> Double {
        let start = Date()
        try body()
        return Date().timeIntervalSince(start) * 1000
    }
}

/// Runs `swiftc` on a variant.
struct Compiler {
    let repository: URL
    let work: URL

    /// One compile's cost.
    struct Sample: CustomStringConvertible {
        let cpu: Double
        let wall: Double
        var description: String { String(format: "%.2f s CPU, %.2f s wall", cpu, wall) }
    }

    private var modules: String { repository.appendingPathComponent(".build/debug/Modules").path }

    private func arguments(_ variant: Variant, extra: [String]) -> [String] {
        [
            "swiftc", "-parse-as-library", "-swift-version", "6", "-module-name", "Bench", "-I", modules, "-I",
            repository.appendingPathComponent("Sources/CSQLite").path,
        ] + extra + variant.files.map(\.path)
    }

    func compile(_ variant: Variant) throws -> Sample {
        let output = work.appendingPathComponent("objects-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: output) }
        let before = Run.childCPU()
        let start = Date()
        let result = try Run.process(
            URL(fileURLWithPath: "/usr/bin/env"), arguments(variant, extra: ["-c", "-Onone", "-g", "-j", "1"]),
            in: output)
        let wall = Date().timeIntervalSince(start)
        guard result.status == 0 else { throw BenchmarkError("\(variant.name) did not compile: \(result.errors)") }
        return Sample(cpu: Run.childCPU() - before, wall: wall)
    }

    /// The compiler's warnings about slow type-checking, one line each.
    func slowTypeChecks(_ variant: Variant) throws -> [String] {
        let flags = [
            "-typecheck", "-Xfrontend", "-warn-long-function-bodies=100", "-Xfrontend",
            "-warn-long-expression-type-checking=100",
        ]
        let result = try Run.process(URL(fileURLWithPath: "/usr/bin/env"), arguments(variant, extra: flags))
        return result.errors.split(separator: "\n").filter {
            $0.contains("to type-check (limit") && $0.contains(": warning")
        }
        .map(String.init)
    }
}

/// Medians side by side, with the ratios the targets are stated in.
struct Report {
    let variants: [Variant]
    let samples: [String: [Compiler.Sample]]

    func print() {
        Swift.print("")
        Swift.print("Median of \(samples.values.first?.count ?? 0) runs (fastest in parentheses):")
        let medians = variants.map { variant -> (String, Double, Double) in
            let list = samples[variant.name] ?? []
            return (variant.name, median(list.map(\.cpu)), median(list.map(\.wall)))
        }
        for (index, (name, cpu, wall)) in medians.enumerated() {
            let fastest = (samples[name] ?? []).map(\.cpu).min() ?? 0
            let ratios =
                index == 0
                ? ""
                : String(format: "  history / this: %.2f× CPU, %.2f× wall", medians[0].1 / cpu, medians[0].2 / wall)
            Swift.print(
                name.padding(toLength: 28, withPad: " ", startingAt: 0)
                    + String(format: "%7.2f s CPU (%.2f) %7.2f s wall", cpu, fastest, wall) + ratios)
        }
    }

    private func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1
            ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}

/// Processes and their CPU time.
enum Run {
    struct Result {
        let status: Int32
        let errors: String
    }

    /// Runs a program to its end; its output goes to a file, so a long one cannot fill a pipe.
    static func process(_ executable: URL, _ arguments: [String], in directory: URL? = nil) throws -> Result {
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("compile-bench-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        let handle = try FileHandle(forWritingTo: log)
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        process.waitUntilExit()
        try handle.close()
        return Result(status: process.terminationStatus, errors: try String(contentsOf: log, encoding: .utf8))
    }

    /// User and system time of every finished child process so far, in seconds.
    static func childCPU() -> Double {
        var usage = rusage()
        #if os(Linux)
            getrusage(__rusage_who_t(RUSAGE_CHILDREN.rawValue), &usage)
        #else
            getrusage(RUSAGE_CHILDREN, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
