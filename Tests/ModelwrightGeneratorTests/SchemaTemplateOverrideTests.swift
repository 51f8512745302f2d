import Foundation
import ModelwrightGenerator
import Testing

/// Every line of the schema file comes from `Schema.mustache`, so an override changes any of it,
/// the layout of the entity descriptions included (which Swift code once wrote).
struct SchemaTemplateOverrideTests {
    private static let model = """
        model Shop version 1

        entity Product {
            name: String
            price: Int64 = 0
            note: String?
        }
        """

    /// The default template's attribute, one argument per line, as it appears in the default
    /// output of the model above.
    private static let defaultAttribute = """
                    AttributeDescription(
                        name: "note",
                        type: .string,
                        isOptional: true,
                    ),
        """

    @Test func anOverrideOfSchemaTemplateChangesTheEntityDescriptionLayout() throws {
        let folder = try ModelFolder(["Shop.v1.model": Self.model])
        defer { folder.remove() }
        let path = try #require(TemplateSet.load().files.first { $0.hasSuffix("/Schema.mustache") })
        let template = try String(contentsOfFile: path, encoding: .utf8)
        // In the entities' section, the attribute block, from `AttributeDescription(` to its `)`,
        // becomes one line.
        let entities = try #require(template.range(of: "{{#entities}}\n\n"))
        let start = try #require(
            template.range(of: "            AttributeDescription(\n", range: entities.upperBound..<template.endIndex))
        let end = try #require(
            template.range(of: "            ){{{separator}}}\n", range: start.upperBound..<template.endIndex))
        let oneLine =
            "            AttributeDescription(name: {{{name}}}, type: {{{type}}}"
            + "{{#isOptional}}, isOptional: true{{/isOptional}}"
            + "{{#defaultValue}}, defaultValue: {{{.}}}{{/defaultValue}}){{{separator}}}\n"
        let override = template.replacingCharacters(in: start.lowerBound..<end.upperBound, with: oneLine)
        let templates = folder.url.appendingPathComponent("templates")
        try FileManager.default.createDirectory(at: templates, withIntermediateDirectories: true)
        try Data(override.utf8).write(to: templates.appendingPathComponent("Schema.mustache"))

        let byDefault = try #require(try folder.generate()["Shop+Schema.swift"])
        #expect(byDefault.contains(Self.defaultAttribute))

        let overridden = try #require(try folder.generate(templates: templates)["Shop+Schema.swift"])
        #expect(!overridden.contains(Self.defaultAttribute))
        #expect(
            overridden.contains(
                """
                        attributes: [
                            AttributeDescription(name: "name", type: .string),
                            AttributeDescription(name: "price", type: .int64, defaultValue: .integer(0)),
                            AttributeDescription(name: "note", type: .string, isOptional: true),
                        ],
                """))
        // The rest of the file is the default template's.
        #expect(overridden.contains("    private static let version1Product: EntityDescription = .init(\n"))
    }
}
