import Foundation
import ModelwrightTestSupport
import Testing

@testable import Modelwright
@testable import ModelwrightSchema

/// A bare word written as a default value (`Bool = no`) is an error whose note offers a value of
/// the attribute's own type, and that value, written in place of the word, loads without errors.
struct DefaultValueHintTests {
    /// Words a newcomer writes for a value, then random identifiers.
    private static func words(count: Int, seed: UInt64) -> [String] {
        var generator = SplitMix64(seed: seed)
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
        let keywords: Set<String> = ["true", "false", "nil", "now"]
        var words = ["no", "yes", "NO", "YES", "off", "on", "none", "null", "empty", "zero", "today", "blank"]
        while words.count < count {
            let length = Int.random(in: 1...10, using: &generator)
            let word = String((0..<length).map { _ in letters.randomElement(using: &generator) ?? "a" })
            if !keywords.contains(word), word != "_" { words.append(word) }
        }
        return words
    }

    private static func schema(_ type: String, _ value: String?) -> String {
        "model Test version 1\nentity A {\n    x: \(type)\(value.map { " = \($0)" } ?? "")\n}\n"
    }

    /// The first text in single quotes of a note.
    private static func quoted(_ note: String) -> String? {
        let parts = note.split(separator: "'", omittingEmptySubsequences: false)
        return parts.count >= 3 ? String(parts[1]) : nil
    }

    @Test func everyBuiltInTypesHintForABareWordIsAValueOfThatType() {
        var cases = 0
        for scalar in ScalarType.all {
            for optional in [false, true] {
                let type = scalar.schemaSpelling + (optional ? "?" : "")
                for word in Self.words(count: 40, seed: UInt64(cases + 1)) {
                    cases += 1
                    let errors = diagnose(Self.schema(type, word)).filter { $0.contains(": error: ") }
                    let found = notes(Self.schema(type, word))
                    #expect(errors.count == 1 && errors[0].hasPrefix("3:"), "\(type) = \(word): \(errors)")
                    guard let note = found.first else {
                        Issue.record("\(type) = \(word): no note")
                        continue
                    }
                    #expect(!note.contains("leading dot"), "\(type) = \(word): \(note)")
                    let fixed: String
                    if note.contains("take no default value") {
                        fixed = Self.schema(type, nil)
                    } else if let value = Self.quoted(note) {
                        fixed = Self.schema(type, value)
                    } else {
                        Issue.record("\(type) = \(word): the note offers no value: \(note)")
                        continue
                    }
                    let after = diagnose(fixed).filter { $0.contains(": error: ") }
                    #expect(after.isEmpty, "\(type) = \(word), fixed as the note says (\(note)): \(after)")
                }
            }
        }
        #expect(cases == ScalarType.all.count * 2 * 40)
    }

    @Test func aBoolIsToldTrueOrFalse() {
        let no = notes(Self.schema("Bool", "no"))
        #expect(no.count == 1 && no[0].contains("write 'false'") && no[0].contains("true or false"), "\(no)")
        let yes = notes(Self.schema("Bool", "yes"))
        #expect(yes.count == 1 && yes[0].contains("write 'true'"), "\(yes)")
    }

    @Test func anEnumIsStillToldItsLeadingDot() {
        let found = notes(
            "model Test version 1\nenum Role: String { member, admin }\nentity A {\n    r: Role = admin\n}\n")
        #expect(found.count == 1 && found[0].contains("'.admin'"), "\(found)")
    }

    /// A composite, a relationship, a Codable or a to-many takes no default: the note says to
    /// remove it, and the model without it loads (red team: it offered a leading dot, an error again).
    @Test func aTypeWithoutDefaultsIsToldToRemoveIt() {
        let declarations = "composite Addr { s: String }\nentity P { n: Int }\n"
        for type in ["Addr", "Addr?", "P", "P?", "Codable<[Int]>?", "Codable<String>", "Set<P>", "[P]"] {
            for word in Self.words(count: 12, seed: 7) {
                let text = "model Test version 1\n\(declarations)entity A {\n    x: \(type) = \(word)\n}\n"
                let found = notes(text).filter { !$0.contains("inverse") }
                #expect(
                    found.count == 1 && found[0].contains("remove '= \(word)'"), "\(type) = \(word): \(found)")
                // The note says what this kind of type needs, not another kind's fix.
                #expect(!(found.first ?? "").contains("leading dot"), "\(type) = \(word): \(found)")
                let fixed = "model Test version 1\n\(declarations)entity A {\n    x: \(type)\n}\n"
                #expect(diagnose(fixed).filter { $0.contains(": error: ") } == [], "\(type) without its default")
            }
        }
    }

    /// Drawn over every kind of type a bare word can follow (an enum, with the word a case or not;
    /// a composite; an optional or required to-one; a Codable; a to-many), in an attribute and in a
    /// composite field: the one note names only that kind's fix, and applying it (writing its quoted
    /// value in place of the word, or removing the default) loads without errors.
    @Test func aBareWordsNoteIsTheFixForItsKindOfType() {
        let declarations =
            "enum Role: String { member, admin, guest }\nenum Level: Int { low, high }\n"
            + "composite Addr { s: String }\nentity P { n: Int }\n"
        let types = [
            "Role", "Role?", "Level", "Addr", "Addr?", "P", "P?", "Codable<[Int]>?", "Codable<String>", "Set<P>", "[P]",
        ]
        var random = SplitMix64(seed: 2)
        var cases = 0
        for word in Self.words(count: 60, seed: 3) + ["member", "admin", "guest", "low", "high"] {
            for type in types {
                let inComposite =
                    !type.hasPrefix("P") && !type.hasPrefix("Set") && !type.hasPrefix("[")
                    && !type.hasPrefix("Codable") && !type.hasPrefix("Addr") && Bool.random(using: &random)
                func text(_ value: String?) -> String {
                    let line = "    x: \(type)\(value.map { " = \($0)" } ?? "")\n"
                    return inComposite
                        ? "model Test version 1\n\(declarations)composite C {\n\(line)}\nentity A {\n    c: C\n}\n"
                        : "model Test version 1\n\(declarations)entity A {\n\(line)}\n"
                }
                cases += 1
                let found = notes(text(word)).filter { !$0.contains("inverse") }
                let errors = diagnose(text(word)).filter { $0.contains(": error: ") }
                #expect(errors.count == 1, "\(type) = \(word): \(errors)")
                guard found.count == 1 else {
                    Issue.record("\(type) = \(word): \(found)")
                    continue
                }
                let note = found[0]
                let isEnum = type.hasPrefix("Role") || type.hasPrefix("Level")
                let listed = note.components(separatedBy: "its cases are .").dropFirst().first.map {
                    "." + ($0.split(separator: ",").first.map(String.init) ?? $0)
                }
                #expect(isEnum == (note.contains("'.") || listed != nil), "\(type) = \(word): \(note)")
                #expect(isEnum != note.contains("remove '= \(word)'"), "\(type) = \(word): \(note)")
                let fixed =
                    note.contains("remove '= \(word)'") ? text(nil) : (Self.quoted(note) ?? listed).map { text($0) }
                guard let fixed else {
                    Issue.record("\(type) = \(word): the note offers no fix: \(note)")
                    continue
                }
                let after = diagnose(fixed).filter { $0.contains(": error: ") }
                #expect(after.isEmpty, "\(type) = \(word), fixed as the note says (\(note)): \(after)")
            }
        }
        #expect(cases == 65 * types.count)
    }
}
