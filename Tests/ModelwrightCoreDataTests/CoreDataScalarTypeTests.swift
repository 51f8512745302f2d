import Foundation
import ModelwrightGenerator
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightCoreData
@testable import ModelwrightSchema

/// Export writes every built-in attribute type under the Core Data name the runtime's table gives
/// it (``ScalarType/CoreDataType``), and import reads that name back as the type itself, or, for a
/// type Core Data has no counterpart of (`Int`, `Day`), as the type that imports from the name.
@Suite(.heavy)
struct CoreDataScalarTypeTests {
    @Test func everyTypeExportsUnderItsNameAndImportsBack() throws {
        let folder = CoreDataTestSupport.temporaryFolder("scalars")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let attributes = ScalarType.all.enumerated().map { "    v\($0.offset): \($0.element.schemaSpelling)?" }
        let text = (["model Kinds version 1", "", "entity Holder {"] + attributes + ["}"]).joined(separator: "\n")
        try Data((text + "\n").utf8).write(to: folder.appendingPathComponent("Kinds.v1.model"))
        let model = try #require(FrontEnd.run(modelAt: folder.path).model)

        let exported = CoreDataExporter.export(model, bundleName: "Kinds")
        let contents = try #require(exported.files.first { $0.path.hasSuffix(".xcdatamodel/contents") })
        let xml = String(decoding: contents.data, as: UTF8.self)
        for (index, scalar) in ScalarType.all.enumerated() {
            #expect(
                xml.contains(
                    "<attribute name=\"v\(index)\" optional=\"YES\" attributeType=\"\(scalar.coreData.name)\""),
                "\(scalar)")
        }

        let bundle = folder.appendingPathComponent("export/Kinds.xcdatamodeld")
        _ = try CoreDataExporter.write(exported, to: bundle.path)
        let imported = try CoreDataTestSupport.importModel(bundle.path, options: .init(modelName: "Kinds"))
        defer { try? FileManager.default.removeItem(at: imported.folder) }
        let schema = try #require(imported.loaded.model?.versions.last?.schema)
        let holder = try #require(schema.entity(named: "Holder"))
        for (index, scalar) in ScalarType.all.enumerated() {
            let back = holder.attributes.first { $0.name == "v\(index)" }?.type.scalar
            let expected =
                scalar.coreData.imports
                ? scalar : ScalarType.all.first { $0.coreData.imports && $0.coreData.name == scalar.coreData.name }
            #expect(back == expected, "\(scalar) came back as \(back.map(\.name) ?? "nothing")")
        }
    }
}
