import Foundation
import ModelwrightSchema
import Testing

@_spi(Generated) @testable import Modelwright

/// Diagnostics of one schema text, each as `line:column: severity: message`.
func diagnose(_ text: String, path: String = "Test.v1.model") -> [String] {
    ResolvedFile.compile(SourceFile(path: path, text: text)).diagnostics.map { diagnostic in
        "\(diagnostic.location.map(\.description) ?? "-"): \(diagnostic.severity.rawValue): \(diagnostic.message)"
    }
}

/// The notes attached to the diagnostics of one schema text, each as `line:column: message`.
func notes(_ text: String) -> [String] {
    ResolvedFile.compile(SourceFile(path: "Test.v1.model", text: text)).diagnostics.flatMap(\.notes).map {
        "\($0.location): \($0.message)"
    }
}

/// The graph of a schema text that must have no errors.
func graph(_ text: String, sourceLocation: Testing.SourceLocation = #_sourceLocation) throws -> EntityGraph {
    let (graph, diagnostics) = checked(SourceFile(path: "Test.v1.model", text: text))
    let errors = diagnostics.filter { $0.severity == .error }
    #expect(errors.isEmpty, "unexpected errors: \(errors.map(\.description))", sourceLocation: sourceLocation)
    return try #require(graph, sourceLocation: sourceLocation)
}

/// What the parse and resolve stages make of one file: the graph when it has no error, and its diagnostics.
func checked(_ file: SourceFile) -> (graph: EntityGraph?, diagnostics: [Diagnostic]) {
    let resolved = ResolvedFile.compile(file)
    return (resolved.validGraph, resolved.diagnostics)
}

/// A fresh temporary folder holding the given files, removed by the caller.
func temporaryModelFolder(named name: String, files: [String: String]) throws -> URL {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("modelwright-\(UUID().uuidString)")
    let folder = root.appendingPathComponent(name)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    for (file, text) in files {
        try Data(text.utf8).write(to: folder.appendingPathComponent(file))
    }
    return folder
}

/// The package's root folder, found from this file's path.
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// Decodes a stored value with the runtime's own decoding (`ColumnValue`) for `type`: how tests
/// prove that a migrated row reads back as the new version's records.
func decodeStored(_ value: SQLValue, as type: AttributeType) throws {
    switch type {
    case .bool: _ = try Bool(sqlValue: value)
    case .int16: _ = try Int16(sqlValue: value)
    case .int32: _ = try Int32(sqlValue: value)
    case .int64: _ = try Int64(sqlValue: value)
    case .int: _ = try Int(sqlValue: value)
    case .double: _ = try Double(sqlValue: value)
    case .float: _ = try Float(sqlValue: value)
    case .date: _ = try Date(sqlValue: value)
    case .string, .codable: _ = try String(sqlValue: value)
    case .decimal: _ = try Decimal(sqlValue: value)
    case .url: _ = try URL(sqlValue: value)
    case .day: _ = try Day(sqlValue: value)
    case .data: _ = try Data(sqlValue: value)
    case .uuid: _ = try UUID(sqlValue: value)
    case .composite: break
    case .enumeration(let description):
        let raw = try String(sqlValue: value)
        guard description.cases.contains(where: { $0.rawValue == raw }) else {
            throw ColumnValueError(message: "'\(raw)' is not a case of \(description.name)")
        }
    }
}
