import Foundation
import ModelwrightTestSupport
import Testing

@_spi(Generated) @testable import Modelwright

/// `matches` (`NSPredicate`'s `MATCHES`), the operator added to prove that an operator with its
/// own spelling takes its declaration and its typed field method: random regular expressions,
/// drawn from a grammar both ICU and Swift's `Regex` read alike, over random names in a store.
/// The rows the store's SQL selects must be those Swift's `Regex` (an implementation independent
/// of the runtime's `NSRegularExpression`) whole-matches, for every combination of `[c]` and `[d]`,
/// and the `NSPredicate` format must be `%K MATCHES[cd] %@` with the pattern as its argument.
struct MatchesOperatorTests {
    private static let worlds = 30
    private static let patternsPerWorld = 20
    private static let letters = ["a", "b", "A", "B", "é", "É", "e", "1", " "]

    @Test func sqlSelectsWhatARegexWholeMatches() async throws {
        var compared = 0
        var selected = 0
        for worldIndex in 0..<Self.worlds {
            var random = SplitMix64(seed: 0x3A7C, index: worldIndex)
            let names = (0..<12).map { _ in Self.name(&random) }
            let store = try Store.inMemory(schema: Fixture.schema)
            let tags = names.map { Tag(name: $0) }
            try await store.performAndSave { context in
                for tag in tags { try context.insert(tag) }
            }
            for _ in 0..<Self.patternsPerWorld {
                let pattern = Self.pattern(&random, depth: 2)
                #expect((try? Regex(pattern)) != nil, "the grammar draws valid expressions: \(pattern)")
                for options in 0..<4 {
                    let caseInsensitive = options & 1 != 0
                    let diacriticInsensitive = options & 2 != 0
                    let request = Tag.request().filter {
                        $0.name.matches(
                            pattern, caseInsensitive: caseInsensitive, diacriticInsensitive: diacriticInsensitive)
                    }
                    let fetched = try await store.performQuery { context in
                        Set(try context.fetch(request).map(\.id))
                    }
                    let expected = Set(
                        tags.filter {
                            (try? Self.wholeMatches(
                                $0.name, pattern, caseInsensitive: caseInsensitive,
                                diacriticInsensitive: diacriticInsensitive)) ?? false
                        }.map(\.id))
                    #expect(fetched == expected, "pattern \(pattern), options \(options), names \(names)")
                    compared += 1
                    selected += expected.isEmpty ? 0 : 1
                }
            }
        }
        #expect(compared == Self.worlds * Self.patternsPerWorld * 4)
        #expect(selected > compared / 4, "enough patterns select rows")
    }

    @Test func predicateFormatSpellsMatchesWithItsOptions() {
        var random = SplitMix64(seed: 0x3A7D)
        let name: Field<String?> = FieldPath.root.field("name")
        for index in 0..<200 {
            let pattern = Self.pattern(&random, depth: 2)
            let options = index % 4
            let flags = ["", "[c]", "[d]", "[cd]"][options]
            let rendered = PredicateFormatRenderer.render(
                name.matches(pattern, caseInsensitive: options & 1 != 0, diacriticInsensitive: options & 2 != 0))
            #expect(rendered.format == "%K MATCHES\(flags) %@")
            #expect(rendered.arguments == [.keyPath("name"), .value(.text(pattern))])
        }
    }

    @Test func anInvalidPatternMatchesNothingAndAMissingValueFails() async throws {
        let store = try Store.inMemory(schema: Fixture.schema)
        try await store.performAndSave { context in
            try context.insert(Tag(name: "a(b"))
            try context.insert(Tag(name: "ab"))
        }
        for pattern in ["a(b", "[", "a)|(b", "\\"] {
            let count = try await store.performQuery { context in
                try context.fetch(Tag.request().filter { $0.name.matches(pattern) }).count
            }
            #expect(count == 0, "\(pattern)")
        }
        // An alternation matches the whole value, not its first alternative's prefix.
        let whole = try await store.performQuery { context in
            try context.fetch(Tag.request().filter { $0.name.matches("a|ab") }).map(\.name)
        }
        #expect(whole == ["ab"])
        #expect(!StringOperation.matches.matches("ab", "a", options: []))
    }

    /// A name of up to five characters.
    private static func name(_ random: inout SplitMix64) -> String {
        (0..<random.next(below: 6)).map { _ in letters[random.next(below: letters.count)] }.joined()
    }

    /// A pattern: a sequence of atoms (a character, `.`, a class, a group of alternatives), each
    /// with an optional quantifier.
    private static func pattern(_ random: inout SplitMix64, depth: Int) -> String {
        var text = ""
        for _ in 0..<(1 + random.next(below: 3)) {
            switch random.next(below: depth == 0 ? 4 : 5) {
            case 0, 1: text += letters[random.next(below: letters.count)]
            case 2: text += "."
            case 3: text += ["[ab]", "[^a]", "[a-e]", "\\d", "\\s"][random.next(below: 5)]
            default:
                let alternatives = (0..<(1 + random.next(below: 2))).map { _ in pattern(&random, depth: depth - 1) }
                text += "(" + alternatives.joined(separator: "|") + ")"
            }
            text += ["", "", "*", "+", "?", "{1,2}"][random.next(below: 6)]
        }
        return text
    }

    /// The documented rule, read with Swift's `Regex`: the whole value matches, after folding
    /// diacritics from both sides for `[d]`, ignoring case for `[c]`.
    private static func wholeMatches(
        _ value: String, _ pattern: String, caseInsensitive: Bool, diacriticInsensitive: Bool
    ) throws -> Bool {
        let fold: (String) -> String = {
            diacriticInsensitive ? $0.folding(options: .diacriticInsensitive, locale: nil) : $0
        }
        let expression = try Regex(fold(pattern)).ignoresCase(caseInsensitive)
        return try expression.wholeMatch(in: fold(value)) != nil
    }
}
