import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightSchema

/// A table or column name longer than PostgreSQL keeps (63 bytes of UTF-8) is refused by
/// `validate`, at the declaration that names it, on every engine: PostgreSQL would cut it and two
/// names that begin alike would meet (red team rtpg2: a long entity name validated and its two
/// join tables collided, `42P07`). A name of exactly 63 bytes is accepted.
///
/// Drawn: each position a name takes (an entity's table, an attribute's column, a composite
/// field's column `attribute.field`, a join table `_Entity_relationship`, an ordered side's
/// position column `inverse._position`), a length at the limit or up to 8 bytes past it, and the
/// name's letters (a model's names are ASCII: names of 2-, 3- and 4-byte characters, which a
/// hand-built schema may have, are drawn by `PostgresNameLimitTests` on a real server).
struct NameLengthTests {
    /// The positions a drawn name is put in, with the text of a model that puts it there, the line
    /// and column of its declaration, and how many bytes the store's name adds to the drawn one.
    enum Position: CaseIterable {
        case entity, attribute, compositeField, joinTable, positionColumn

        /// The model with `name` in this position, the declaration's `line:column`, and the length
        /// of the store's name it makes from a name of `bytes` bytes.
        func model(_ name: String) -> (text: String, location: String, bytes: Int) {
            let bytes = name.utf8.count
            switch self {
            case .entity:
                return ("model M version 1\nentity \(name) {\n    x: Int\n}", "2:1", bytes)
            case .attribute:
                return ("model M version 1\nentity A {\n    \(name): Int\n}", "3:5", bytes)
            case .compositeField:
                return (
                    "model M version 1\nentity A {\n    place: Spot?\n}\ncomposite Spot {\n    \(name): Int\n}", "3:5",
                    "place.".utf8.count + bytes
                )
            case .joinTable:
                return (
                    "model M version 1\nentity A {\n    \(name): Set<D>\n}\nentity D {\n    x: Int\n}", "3:5",
                    "_A_".utf8.count + bytes
                )
            case .positionColumn:
                return (
                    "model M version 1\nentity A {\n    items: [D] @inverse(\(name))\n}\nentity D {\n    \(name): A? @inverse(items)\n}",
                    "6:5", bytes + "._position".utf8.count
                )
            }
        }

        /// How many bytes the store's name adds to the drawn name.
        var added: Int { model("a").bytes - 1 }
    }

    /// A name that starts with `start` and is `bytes` bytes long: `character` repeated, padded with
    /// `x` where the character's bytes do not fill it exactly.
    static func name(_ start: String, bytes: Int, character: Character) -> String {
        var name = start
        while name.utf8.count + String(character).utf8.count <= bytes { name.append(character) }
        while name.utf8.count < bytes { name.append("x") }
        return name
    }

    @Test func aNamePostgreSQLWouldCutIsRefusedWhereItIsDeclaredAndOneThatFitsIsAccepted() {
        var random = SplitMix64(seed: 27)
        let characters: [Character] = ["a", "Z", "_", "7"]
        var refused = 0
        var accepted = 0
        for _ in 0..<200 {
            let position = Position.allCases[Int(random.next() % UInt64(Position.allCases.count))]
            let character = characters[Int(random.next() % UInt64(characters.count))]
            // The store's name at the limit, or up to 8 bytes past it.
            let over = Int(random.next() % 3) == 0 ? 0 : 1 + Int(random.next() % 8)
            let length = StoreLimits.maximumNameBytes + over - position.added
            let name = Self.name(position == .entity ? "E" : "a", bytes: length, character: character)
            let (text, location, bytes) = position.model(name)
            let errors = diagnose(text).filter { $0.contains(": error: ") }
            if bytes > StoreLimits.maximumNameBytes {
                refused += 1
                #expect(errors.count == 1, "\(position) \(bytes) bytes: \(errors)")
                #expect(errors.first?.hasPrefix("\(location): error: ") == true, "\(position): \(errors)")
                #expect(errors.first?.contains("\(bytes) bytes long") == true, "\(position): \(errors)")
                #expect(errors.first?.contains("@renamed") == true, "\(position): \(errors)")
            } else {
                accepted += 1
                #expect(errors.isEmpty, "\(position) at the limit: \(errors)")
            }
        }
        #expect(refused > 50 && accepted > 30)
    }
}
