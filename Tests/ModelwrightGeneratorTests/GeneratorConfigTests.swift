import Foundation
import Testing

@testable import ModelwrightGenerator

/// `modelwright-config.json` is read strictly: every problem names its key, so a misspelt or
/// malformed setting is never silently ignored.
struct GeneratorConfigTests {
    private static func load(_ json: String) throws -> GeneratorConfig {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data(json.utf8).write(to: url)
        return try GeneratorConfig.load(from: url)
    }

    /// The message of the error loading `json` gives, without the path.
    private static func error(_ json: String) -> String? {
        do {
            _ = try load(json)
            return nil
        } catch GeneratorError.invalidConfig(_, let message) {
            return message
        } catch {
            return "\(error)"
        }
    }

    @Test func namingIsReadWithTheOtherKeys() throws {
        let config = try Self.load(
            #"""
            { "accessLevel": "public",
              "naming": { "typePrefix": "TR", "typeSuffix": "Record", "types": { "Group": "StopGroup" } } }
            """#)
        #expect(config.accessLevel == .public)
        #expect(config.naming == Naming(typePrefix: "TR", typeSuffix: "Record", types: ["Group": "StopGroup"]))
        #expect(config.path != nil)
        #expect(try Self.load("{}").naming == Naming())
    }

    @Test func anUnknownKeyIsAnErrorThatListsTheKeys() {
        #expect(
            Self.error(#"{ "nameing": {} }"#) == "unknown key 'nameing'; the keys are accessLevel, naming, templates")
        #expect(
            Self.error(#"{ "naming": { "prefix": "TR" } }"#)
                == "unknown key 'naming.prefix'; the keys of 'naming' are typePrefix, typeSuffix, types")
    }

    @Test func eachNamingKeyIsCheckedByName() {
        #expect(Self.error(#"{ "naming": "Record" }"#)?.hasPrefix("'naming' must be an object") == true)
        #expect(Self.error(#"{ "naming": { "typePrefix": 3 } }"#)?.hasPrefix("'naming.typePrefix' must be") == true)
        #expect(Self.error(#"{ "naming": { "typePrefix": "My-" } }"#)?.hasPrefix("'naming.typePrefix' must be") == true)
        #expect(Self.error(#"{ "naming": { "typePrefix": "2" } }"#)?.hasPrefix("'naming.typePrefix' must be") == true)
        for prefix in ["_", "__", "Class", "class", "Self", "_2"] {
            #expect(
                Self.error(#"{ "naming": { "typePrefix": "\#(prefix)" } }"#) == nil, "the documented prefix '\(prefix)'"
            )
        }
        #expect(
            Self.error(#"{ "naming": { "typeSuffix": "Re cord" } }"#)?.hasPrefix("'naming.typeSuffix' must be") == true)
        #expect(Self.error(#"{ "naming": { "typeSuffix": "2" } }"#) == nil, "a suffix may start with a digit")
        #expect(Self.error(#"{ "naming": { "types": ["Group"] } }"#)?.hasPrefix("'naming.types' must map") == true)
        #expect(
            Self.error(#"{ "naming": { "types": { "Group": "Stop Group" } } }"#)
                == "'naming.types.Group' is 'Stop Group', which is not a Swift identifier (ASCII letters, digits and underscores, not a keyword)"
        )
        #expect(
            Self.error(#"{ "naming": { "types": { "Group": "struct" } } }"#)?.hasPrefix("'naming.types.Group'") == true)
        #expect(
            Self.error(#"{ "naming": { "types": { "Group": "1Group" } } }"#)?.hasPrefix("'naming.types.Group'") == true)
    }
}
