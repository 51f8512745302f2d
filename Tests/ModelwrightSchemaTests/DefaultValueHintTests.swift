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
                let found = notes(text)
                #expect(
                    found.count == 1 && found[0].contains("remove '= \(word)'"), "\(type) = \(word): \(found)")
                let fixed = "model Test version 1\n\(declarations)entity A {\n    x: \(type)\n}\n"
                #expect(diagnose(fixed).filter { $0.contains(": error: ") } == [], "\(type) without its default")
            }
        }
    }
}
