import Foundation
import Modelwright
import Testing

@testable import ModelwrightSchema

/// The planner classifies every change between adjacent versions and refuses, at the offending
/// line, what the newer version does not account for.
struct MigrationPlannerTests {
    private static let v1 = """
        model Shop version 1
        entity Product {
            name: String
            price: Int32
            notes: String?
            stock: Int16 = 0
        }
        entity Draft {
            text: String
        }
        """

    /// Loads v1 and the given v2 (and more files), returning the result and `file:line:column: severity: message` lines.
    private static func load(_ v2: String, extra: [String: String] = [:]) throws -> (FrontEndResult, [String]) {
        let folder = try temporaryModelFolder(
            named: "Shop", files: ["Shop.v1.model": v1, "Shop.v2.model": v2].merging(extra) { _, new in new })
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let result = FrontEnd.run(modelAt: folder.path)
        return (result, result.diagnostics.map(Self.line))
    }

    private static func line(_ diagnostic: Diagnostic) -> String {
        let file = diagnostic.path.split(separator: "/").last.map(String.init) ?? ""
        return
            "\(file):\(diagnostic.location.map(\.description) ?? "-"): \(diagnostic.severity.rawValue): \(diagnostic.message)"
    }

    private static func kinds(_ result: FrontEndResult) throws -> [String] {
        try #require(result.model).steps[0].changes.map { "\($0.kind.rawValue): \($0.summary)" }
    }

    @Test func lightweightChangesAreInferredAndRunInPlace() throws {
        let (result, lines) = try Self.load(
            """
            model Shop version 2
            entity Item {
                title: String @renamed(from: name)
                price: Int64
                notes: String?
                stock: Int16 = 0
                sku: String?
                isListed: Bool = true
                @renamed(from: Product)
            }
            entity Draft {
                text: String
            }
            """)
        #expect(lines == [])
        #expect(
            try Self.kinds(result) == [
                "lightweight: rename entity Product to Item",
                "lightweight: rename attribute Item.name to title",
                "lightweight: change the type of Item.price from Int32 to Int64 (widening)",
                "lightweight: add attribute Item.sku (String?)",
                "lightweight: add attribute Item.isListed (Bool = true)",
            ])
        let step = try #require(result.model?.steps.first)
        #expect(step.isLightweight)
        #expect(step.rewrittenTables == [])
        #expect(step.operations.contains(.renameTable(from: "Product", to: "Item")))
    }

    @Test func unaccountedChangesAreErrorsAtTheirDeclaration() throws {
        let (result, lines) = try Self.load(
            """
            model Shop version 2
            entity Product {
                title: String
                price: Int16
                stock: Int16 = 0
                barcode: String
                tags: Codable<[String]>?
            }
            """)
        #expect(result.model == nil)
        #expect(
            lines == [
                "Shop.v2.model:1:7: error: version 2 cannot be migrated to from version 1 (Shop.v1.model): remove entity Draft loses data",
                "Shop.v2.model:2:1: error: version 2 cannot be migrated to from version 1 (Shop.v1.model): remove attribute Product.name loses data",
                "Shop.v2.model:2:1: error: version 2 cannot be migrated to from version 1 (Shop.v1.model): remove attribute Product.notes loses data",
                "Shop.v2.model:3:5: error: version 2 cannot be migrated to from version 1 (Shop.v1.model): add attribute Product.title (String) needs a default",
                "Shop.v2.model:4:5: error: version 2 cannot be migrated to from version 1 (Shop.v1.model): change the type of Product.price from Int32 to Int16 (narrowing: values Int16 cannot hold have no default to take) needs a default",
                "Shop.v2.model:6:5: error: version 2 cannot be migrated to from version 1 (Shop.v1.model): add attribute Product.barcode (String) needs a default",
            ])
        // A narrowing into a required attribute without a default has nothing to give the values
        // the new type cannot hold.
        let narrowing = try #require(result.diagnostics.first { $0.message.contains("Product.price") })
        #expect(
            narrowing.notes.map(\.message).first
                == "give Product.price a default ('= …') for the values Int16 cannot hold, make it optional, or declare a custom stage that converts them"
        )
        // A removal beside an addition of the same type suggests a rename; nothing is guessed.
        let removal = try #require(result.diagnostics.first { $0.message.contains("Product.name") })
        #expect(
            removal.notes.map(\.message).first == "if 'name' became 'title', write '@renamed(from: name)' on 'title'")
        #expect(
            removal.notes.map(\.message).last
                == "to accept the loss, write 'lossy Product.name \"why\"' in 'migration from 1 { … }'")
    }

    @Test func lossyAcknowledgementsAndCustomStagesAccountForChanges() throws {
        // `price` has a default for the prices Int16 cannot hold to take: the step now runs on
        // rows with its custom stage too, and a required narrowing without one fails there.
        let (result, lines) = try Self.load(
            """
            model Shop version 2
            entity Product {
                title: String
                price: Int16 = 0
                stock: Int16 = 0
                origin: Data
            }
            migration from 1 {
                custom fillTitles "Copy names into titles"
                lossy Product.name "copied into title by fillTitles"
                lossy Product.price "prices never exceed Int16"
                lossy Product.notes
                lossy Draft "drafts were never synced"
                lossy Product.stock "nothing to lose"
            }
            """)
        #expect(
            lines == [
                "Shop.v2.model:14:5: warning: 'lossy Product.stock' accepts a loss this step does not have; remove it"
            ])
        let step = try #require(result.model?.steps.first)
        #expect(!step.isLightweight)
        #expect(step.customStages.map(\.name) == ["fillTitles"])
        #expect(
            step.changes.first { $0.summary.hasPrefix("remove entity Draft") }?.resolution
                == "accepted: drafts were never synced")
        #expect(step.changes.first { $0.summary.contains("origin") }?.kind == .needsDefault)
        #expect(step.changes.first { $0.summary.contains("origin") }?.resolution == "custom stage fillTitles")
        #expect(step.rewrittenTables == ["Draft", "Product"])  // Draft is dropped, Product rebuilt
    }

    @Test func typeChangesAreClassified() {
        let cases: [(AttributeType, AttributeType, SchemaChange.Kind?)] = [
            (.int16, .int64, .lightweight), (.int64, .int32, .lossy), (.int32, .double, .lightweight),
            (.int64, .double, .lossy), (.float, .double, .lightweight), (.double, .float, .lossy),
            (.int, .string, .lightweight), (.string, .int, .needsCustomStage), (.date, .string, .needsCustomStage),
            (.string, .string, nil), (.codable(typeName: "A"), .codable(typeName: "B"), .needsCustomStage),
        ]
        for (old, new, kind) in cases {
            #expect(MigrationPlanner.typeChange(from: old, to: new)?.0 == kind, "\(old) → \(new)")
        }
    }

    @Test func identicalAdjacentVersionsWarnAndAStructureMayComeBackLater() throws {
        let same = Self.v1.replacingOccurrences(of: "version 1", with: "version 2")
        let (adjacent, adjacentLines) = try Self.load(same)
        #expect(adjacent.model?.steps.first?.changes.isEmpty == true)
        #expect(adjacentLines.count == 1)
        #expect(
            adjacentLines.first?.hasPrefix("Shop.v2.model:1:7: warning: version 2 has the same structure as version 1")
                == true)

        let v2 = Self.v1.replacingOccurrences(of: "version 1", with: "version 2") + "\nentity Tag { name: String }\n"
        let v3 =
            Self.v1.replacingOccurrences(of: "version 1", with: "version 3")
            + "\nmigration from 2 { lossy Tag }\n"
        // Stores record their version number, so a structure that comes back is planned like any other.
        let (result, lines) = try Self.load(v2, extra: ["Shop.v3.model": v3])
        #expect(lines == [])
        let model = try #require(result.model)
        #expect(
            model.versions.map(\.checksum) == [
                model.versions[0].checksum, model.versions[1].checksum, model.versions[0].checksum,
            ])
        #expect(model.steps.map { $0.changes.map(\.summary) } == [["add entity Tag"], ["remove entity Tag"]])
    }

    @Test func editingAFrozenVersionIsAnErrorThatSaysWhatToDo() throws {
        let original = try Self.load(
            Self.v1.replacingOccurrences(of: "version 1", with: "version 2") + "\nentity Tag { name: String }\n")
        let model = try #require(original.0.model)
        let lock = String(decoding: try LockFile.freezing(model, through: 1).encoded(), as: UTF8.self)
        #expect(lock.contains("\"version\" : 1") && !lock.contains("\"version\" : 2"))

        // Editing a doc comment in a frozen version is fine; changing its structure is not.
        let documented = Self.v1.replacingOccurrences(of: "entity Draft", with: "/// Unsent text.\nentity Draft")
        let v2 = Self.v1.replacingOccurrences(of: "version 1", with: "version 2") + "\nentity Tag { name: String }\n"
        let (fine, fineLines) = try Self.load(v2, extra: ["Shop.v1.model": documented, LockFile.fileName: lock])
        #expect(fine.model != nil && fineLines == [])

        let edited = Self.v1.replacingOccurrences(of: "notes: String?", with: "notes: String?\n    color: String?")
        let (result, lines) = try Self.load(v2, extra: ["Shop.v1.model": edited, LockFile.fileName: lock])
        #expect(result.model == nil)
        #expect(lines.count == 1)
        // At the declaration the edit changed, not only at the header with two checksums.
        #expect(
            lines.first?.hasPrefix(
                "Shop.v1.model:6:5: error: version 1 is frozen (released), but entity 'Product' changed: attribute 'color' was added here"
            ) == true,
            "\(lines)")
        #expect(result.diagnostics.first?.notes.first?.message.contains("modelwright new-version") == true)
    }

    @Test func newVersionCopiesTheCurrentOneWithoutItsStep() throws {
        let v2 = """
            /// The shop.
            model Shop version 2
            entity Product {
                title: String @renamed(from: name)
                price: Int32
                notes: String?
                stock: Int16 = 0
            }

            /// Drafts were local only.
            migration from 1 {
                lossy Draft
            }
            """
        let (result, _) = try Self.load(v2)
        let current = try #require(result.model?.current)
        let folder = try temporaryModelFolder(named: "Shop", files: ["Shop.v2.model": v2])
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let copy = try NewVersion.text(
            after: LoweredVersion(
                path: folder.appendingPathComponent("Shop.v2.model").path, graph: current.graph, schema: current.schema)
        )
        #expect(
            copy == """
                /// The shop.
                model Shop version 3
                entity Product {
                    title: String
                    price: Int32
                    notes: String?
                    stock: Int16 = 0
                }

                """)
    }

    /// Posts whose `foreignID` moves from the root of the hierarchy down one level, with `type`.
    private static func movedDown(to type: String) -> (v1: String, v2: String) {
        (
            """
            model Posts version 1
            abstract entity BasePost { title: String; foreignID: String? }
            abstract entity AbstractPost: BasePost { status: Int16 = 0 }
            entity Post: AbstractPost { body: String? }
            """,
            """
            model Posts version 2
            abstract entity BasePost { title: String }
            abstract entity AbstractPost: BasePost { status: Int16 = 0; foreignID: \(type)? }
            entity Post: AbstractPost { body: String? }
            migration from 1 { lossy BasePost.foreignID }
            """
        )
    }

    @Test func aMoveAcrossAnInheritanceLevelIsClassifiedLikeAChangeWithinAnEntity() throws {
        // The same column of the hierarchy's table holds the value before and after: String to
        // UUID needs a custom stage, as it does inside one entity, whatever `lossy` says.
        for (type, refused) in [("UUID", true), ("String", false)] {
            let (v1, v2) = Self.movedDown(to: type)
            let folder = try temporaryModelFolder(named: "Posts", files: ["Posts.v1.model": v1, "Posts.v2.model": v2])
            defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
            let result = FrontEnd.run(modelAt: folder.path)
            let errors = result.diagnostics.filter { $0.severity == .error }.map(\.message)
            if refused {
                #expect(
                    errors == [
                        "version 2 cannot be migrated to from version 1 (Posts.v1.model): change the type of AbstractPost.foreignID from String to UUID (no lossless conversion) needs a custom stage"
                    ])
            } else {
                #expect(errors == [])
                #expect(
                    try Self.kinds(result).contains(
                        "lightweight: move attribute BasePost.foreignID down to AbstractPost.foreignID"))
            }
        }
    }

    @Test func aStepThatNeverRunsCannotOweAnything() throws {
        // Enum cases are not part of the checksum: losing one keeps the structure, so the runtime
        // treats a store of either version as both and would never run the stage meant to convert
        // the rows that hold the lost case (found by the property suite, seed 1805).
        let v1 = "model Shop version 1\nenum Size: String { s, m, l }\nentity Shirt {\n    size: Size\n}\n"
        let v2 = """
            model Shop version 2
            enum Size: String { s }
            entity Shirt {
                size: Size
            }
            migration from 1 {
                custom shrink "Shrink"
            }

            """
        let folder = try temporaryModelFolder(named: "Shop", files: ["Shop.v1.model": v1, "Shop.v2.model": v2])
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let lines = FrontEnd.run(modelAt: folder.path).diagnostics.filter { $0.severity == .error }.map(Self.line)
        #expect(lines.count == 1)
        #expect(
            lines.first?.hasSuffix(
                "error: version 2 has the same structure as version 1 (one checksum), so a store of either counts as both and this step never runs, but change the type of Shirt.size from Size to Size (rows holding m, l cannot be read) needs a custom stage"
            ) == true, "\(lines)")
    }
}
