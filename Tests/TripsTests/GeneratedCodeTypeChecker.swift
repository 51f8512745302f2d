import Foundation
import ModelwrightGenerator
import ModelwrightSchema

/// Type-checks the code generated for a model (Models/Trips unless told) together with a small app
/// file, against the Modelwright module this build produced: how tests prove that something does or
/// does not compile.
enum GeneratedCodeTypeChecker {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// Where SwiftPM put the built modules: beside the tests on Linux, around the bundle elsewhere.
    static let modules = [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        .map { $0.appendingPathComponent("Modules") }
        .first { FileManager.default.fileExists(atPath: $0.appendingPathComponent("Modelwright.swiftmodule").path) }

    struct TypeCheck {
        let status: Int32
        let errors: String
    }

    struct ModulesNotFound: Error {}

    /// Generates the model in the folder `model` (Trips by default) with `config` and type-checks it
    /// with `app` as one more file of the module.
    static func typecheck(app: String, model path: String? = nil, config: GeneratorConfig = GeneratorConfig()) throws
        -> TypeCheck
    {
        guard let modules else { throw ModulesNotFound() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("typecheck-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = path ?? root.appendingPathComponent("Models/Trips").path
        let files = try renderedFiles(path, config: config)
        try RenderedFile.write(files + [RenderedFile(name: "App.swift", contents: app)], to: folder.path)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            [
                // SIL, not only types: some errors (an integer literal that overflows) come from its passes.
                "swiftc", "-emit-sil", "-wmo", "-o", "/dev/null", "-swift-version", "6", "-warnings-as-errors",
                "-module-name",
                "TripsApp",
                "-I", modules.path, "-I", root.appendingPathComponent("Sources/CSQLite").path,
            ] + (files.map(\.name) + ["App.swift"]).map { folder.appendingPathComponent($0).path }
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = Pipe()
        try process.run()
        let output = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return TypeCheck(status: process.terminationStatus, errors: String(decoding: output, as: UTF8.self))
    }

    /// The runtime's compiled objects, which a program built from generated code links.
    static let runtimeObjects: [URL]? = objects(of: "Modelwright")

    /// The PostgreSQL engine's compiled objects, when this build has the engine: a program that
    /// opens a store on PostgreSQL links them and libpq beside the runtime's.
    static let postgresObjects: [URL]? = objects(of: "ModelwrightPostgres")

    private static func objects(of module: String) -> [URL]? {
        modules.flatMap { modules in
            guard FileManager.default.fileExists(atPath: modules.appendingPathComponent("\(module).swiftmodule").path)
            else { return nil }
            let folder = modules.deletingLastPathComponent().appendingPathComponent("\(module).build")
            let objects = currentObjects(in: folder)
            return objects.isEmpty ? nil : objects
        }
    }

    /// The objects of the module's current sources, read from the compiler's output file map: a
    /// developer's `.build` keeps the object of a source file that was since removed, and linking
    /// every `.o` of the folder would link that stale one too. Without a map, every `.o`.
    private static func currentObjects(in folder: URL) -> [URL] {
        let map = folder.appendingPathComponent("output-file-map.json")
        if let data = try? Data(contentsOf: map),
            let entries = (try? JSONSerialization.jsonObject(with: data)) as? [String: [String: String]]
        {
            let objects = entries.values.compactMap { $0["object"] }.sorted()
            if !objects.isEmpty { return objects.map { URL(fileURLWithPath: $0) } }
        }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { $0.hasSuffix(".o") }.sorted().map { folder.appendingPathComponent($0) }
    }

    /// The files the pipeline renders for the model at `path`.
    static func renderedFiles(_ path: String, config: GeneratorConfig) throws -> [RenderedFile] {
        let result = try Pipeline.run(Pipeline.Request(modelPath: path, goal: .render, config: config))
        guard result.model != nil else { throw GeneratorError.noModel(path) }
        return result.files
    }

    /// Generates the model in the folder `model`, builds it with `main` as the program's entry
    /// file (with `-warnings-as-errors`, linking the runtime this build produced) and runs it.
    /// - Returns: what the program printed, or the compiler's errors when it did not compile.
    static func run(main: String, model path: String) throws -> (compiled: Bool, output: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("run-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let files = try renderedFiles(path, config: GeneratorConfig())
        try RenderedFile.write(files + [RenderedFile(name: "main.swift", contents: main)], to: folder.path)
        let program = folder.appendingPathComponent("program")
        let compile = try build(
            files: (files.map(\.name) + ["main.swift"]).map { folder.appendingPathComponent($0) }, to: program)
        guard compile.status == 0 else { return (false, compile.errors) }
        let ran = try launch(program, [])
        return (ran.status == 0, ran.output + ran.errors)
    }

    /// Compiles `files` (generated code and a `main.swift`) into the program `program`, with
    /// `-warnings-as-errors`, linking the runtime this build produced. With `typeCheckBudget`, a
    /// function body or expression that takes longer (in milliseconds) to type-check is an error.
    /// With `postgres`, the program links the PostgreSQL engine too (``postgresObjects`` must exist).
    ///
    /// The budget is wall-clock time, which a busy machine stretches (CI runs many compilers at
    /// once: WooCommerce's migration plan took 75 ms alone and 115 ms beside them). A build that
    /// fails only on the budget is timed again, up to twice: code whose type-checking is really
    /// slow (an expression the solver takes exponential time on) exceeds it every time.
    static func build(files: [URL], to program: URL, typeCheckBudget: Int? = nil, postgres: Bool = false) throws -> (
        status: Int32, output: String, errors: String
    ) {
        var result = try compile(files: files, to: program, typeCheckBudget: typeCheckBudget, postgres: postgres)
        for _ in 0..<2 where typeCheckBudget != nil && result.status != 0 && onlyOverBudget(result.errors) {
            result = try compile(files: files, to: program, typeCheckBudget: typeCheckBudget, postgres: postgres)
        }
        return result
    }

    /// Whether every error of a compiler's output is a body or expression over the type-check budget.
    static func onlyOverBudget(_ errors: String) -> Bool {
        let lines = errors.split(separator: "\n").filter { $0.contains("error:") }
        return !lines.isEmpty && lines.allSatisfy { $0.contains("to type-check (limit: ") }
    }

    private static func compile(files: [URL], to program: URL, typeCheckBudget: Int?, postgres: Bool) throws -> (
        status: Int32, output: String, errors: String
    ) {
        guard let modules, let runtimeObjects else { throw ModulesNotFound() }
        var engine: [String] = []
        if postgres {
            guard let postgresObjects else { throw ModulesNotFound() }
            // libpq's header is where Debian puts it or, on macOS, where Homebrew does.
            let headers = [
                "/usr/include/postgresql", "/opt/homebrew/opt/libpq/include", "/usr/local/opt/libpq/include",
            ]
            .filter { FileManager.default.fileExists(atPath: $0) }.flatMap { ["-Xcc", "-I", "-Xcc", $0] }
            engine =
                ["-I", root.appendingPathComponent("Sources/CLibPQ").path] + headers + postgresObjects.map(\.path)
                + ["-lpq"]
        }
        let budget = typeCheckBudget.map {
            [
                "-Xfrontend", "-warn-long-function-bodies=\($0)", "-Xfrontend",
                "-warn-long-expression-type-checking=\($0)",
            ]
        }
        return try launch(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "swiftc", "-swift-version", "6", "-warnings-as-errors", "-module-name", "GeneratedApp",
                "-I", modules.path, "-I", root.appendingPathComponent("Sources/CSQLite").path,
            ] + (budget ?? []) + files.map(\.path) + runtimeObjects.map(\.path) + engine
                + ["-lsqlite3", "-o", program.path])
    }

    /// Runs a program to its end; its output and errors go through files, so neither can fill a pipe.
    static func launch(_ executable: URL, _ arguments: [String], environment: [String: String]? = nil) throws -> (
        status: Int32, output: String, errors: String
    ) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("launch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let outputURL = folder.appendingPathComponent("output")
        let errorsURL = folder.appendingPathComponent("errors")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorsURL.path, contents: nil)
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = try FileHandle(forWritingTo: outputURL)
        process.standardError = try FileHandle(forWritingTo: errorsURL)
        try process.run()
        process.waitUntilExit()
        return (
            process.terminationStatus, try String(contentsOf: outputURL, encoding: .utf8),
            try String(contentsOf: errorsURL, encoding: .utf8)
        )
    }
}
