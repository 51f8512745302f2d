import Foundation
import ModelwrightGenerator
import ModelwrightSchema
import ModelwrightTestSupport
import Testing

@testable import Modelwright

/// Every built-in attribute type of the runtime's table (``ScalarType/all``), a new one included,
/// is accepted by `validate` as a required and an optional attribute, with a default its literal rule
/// accepts, as a composite's field and in a request that compares it, and the generated code
/// compiles with `-warnings-as-errors`.
@Suite(.heavy)
struct AttributeTypeCompileTests {
    /// A literal the type's rule accepts, or `nil` for a type without defaults.
    static func literal(for scalar: ScalarType) -> String? {
        switch scalar.literal {
        case .bool: "true"
        case .integer: "7"
        case .floatingPoint: "1.5"
        case .decimal: "19.99"
        case .instant: "now"
        case .text(let rule):
            ["plain", "E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "https://example.com", "2024-05-01"]
                .first { rule.parse($0) != nil }.map { "\"\($0)\"" }
        case .none: nil
        }
    }

    static var modelText: String {
        var lines = ["model Kinds version 1", "", "composite Every {"]
        for (index, scalar) in ScalarType.all.enumerated() {
            lines.append("    f\(index): \(scalar.schemaSpelling)?")
        }
        lines += ["}", "", "entity Holder {"]
        for (index, scalar) in ScalarType.all.enumerated() {
            let initial = literal(for: scalar).map { " = \($0)" } ?? ""
            lines.append("    v\(index): \(scalar.schemaSpelling)\(initial)")
            lines.append("    o\(index): \(scalar.schemaSpelling)?")
        }
        lines += ["    every: Every?", "}", ""]
        for (index, scalar) in ScalarType.all.enumerated() {
            let operation = scalar.isOrdered ? "<" : "=="
            lines.append("request by\(index): Holder where \"v\(index) \(operation) $x\(index)\"")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func everyTypeValidates() {
        let text = Self.modelText
        let diagnostics = ResolvedFile.compile(SourceFile(path: "Kinds.v1.model", bytes: Array(text.utf8)))
            .diagnostics
        #expect(!diagnostics.contains { $0.severity == .error }, "\(diagnostics.prefix(3))\n\(text)")
    }

    @Test(
        .enabled(
            if: GeneratedCodeTypeChecker.modules != nil, "the built Modelwright module was not found beside the tests"))
    func everyTypesGeneratedCodeCompiles() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kinds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(Self.modelText.utf8).write(to: folder.appendingPathComponent("Kinds.v1.model"))
        let result = try GeneratedCodeTypeChecker.typecheck(app: "import Modelwright\n", model: folder.path)
        #expect(result.status == 0, "\(result.errors.prefix(4_000))")
    }
}
