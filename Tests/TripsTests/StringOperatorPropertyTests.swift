import Foundation
import ModelwrightEngineTestSupport
import ModelwrightTestSupport
import Testing
import Trips

@testable import Modelwright

/// The string operators (`hasPrefix`, `hasSuffix`, `contains`, `like`, `equals`, with and without
/// `caseInsensitive` and `diacriticInsensitive`) select the same records on every engine
/// (``TestEngine``) as the in-memory evaluation, Swift's own comparison, does; where PostgreSQL
/// must differ, the difference is pinned. NULL ordering in sorts is the same on both engines.
@Suite(.heavy)
struct StringOperatorPropertyTests {
    /// What the drawn strings are made of: ASCII letters of both cases, LIKE's and NSPredicate's
    /// wildcards and the escape, precomposed accented Latin letters, Greek, Cyrillic, CJK and an
    /// emoji. Decomposed accents, `ß`, `ø` and `æ` are left to the pinned differences.
    private static let alphabet = Array("aAbBeEoOzZ09 %_\\*?-.éÉèÈàÀüÜñÑçÇåÅôÔαΑβΒδΔдДжЖ漢字🙂")

    private static func draw(_ random: inout SplitMix64, length: ClosedRange<Int>) -> String {
        let count = length.lowerBound + Int(random.next() % UInt64(length.count))
        return String((0..<count).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
    }

    /// A needle drawn to match some values: a piece of a stored value, its case or accents
    /// changed by chance, wildcards put in for `like`; otherwise a fresh random string.
    private static func needle(
        for operation: StringOperation, values: [String], _ random: inout SplitMix64
    ) -> String {
        guard random.next() % 4 != 0, let value = values.randomElement(using: &random), !value.isEmpty else {
            return draw(&random, length: 0...3)
        }
        var characters = Array(value)
        let start = Int(random.next() % UInt64(characters.count))
        let end = start + Int(random.next() % UInt64(characters.count - start + 1))
        switch operation {
        case .hasPrefix: characters = Array(characters[..<end])
        case .hasSuffix: characters = Array(characters[start...])
        case .contains: characters = Array(characters[start..<end])
        default: break
        }
        characters = characters.map { character in
            switch random.next() % 6 {
            case 0: Character(character.uppercased().count == 1 ? character.uppercased() : String(character))
            case 1: Character(character.lowercased().count == 1 ? character.lowercased() : String(character))
            case 2: Character(String(character).folding(options: .diacriticInsensitive, locale: nil))
            default: character
            }
        }
        if operation == .like {
            for index in characters.indices where random.next() % 4 == 0 {
                characters[index] = random.next() % 2 == 0 ? "?" : "*"
            }
            if random.next() % 3 == 0 { characters.insert("*", at: 0) }
        }
        return String(characters)
    }

    private static func condition(
        _ operation: StringOperation, _ needle: String, _ options: StringComparisonOptions
    ) -> FetchRequest<User> {
        let c = options.contains(.caseInsensitive)
        let d = options.contains(.diacriticInsensitive)
        return User.request().filter { user in
            switch operation {
            case .hasPrefix: user.familyName.hasPrefix(needle, caseInsensitive: c, diacriticInsensitive: d)
            case .hasSuffix: user.familyName.hasSuffix(needle, caseInsensitive: c, diacriticInsensitive: d)
            case .contains: user.familyName.contains(needle, caseInsensitive: c, diacriticInsensitive: d)
            case .like: user.familyName.like(needle, caseInsensitive: c, diacriticInsensitive: d)
            case .equals: user.familyName.equals(needle, caseInsensitive: c, diacriticInsensitive: d)
            case .matches: user.familyName.matches(needle, caseInsensitive: c, diacriticInsensitive: d)
            }
        }
    }

    private static let operations: [StringOperation] = [.hasPrefix, .hasSuffix, .contains, .like, .equals]
    private static let optionSets: [StringComparisonOptions] = [
        [], .caseInsensitive, .diacriticInsensitive, [.caseInsensitive, .diacriticInsensitive],
    ]

    @Test(arguments: TestEngine.available, 0..<3)
    func everyStringOperatorSelectsWhatSwiftsComparisonSelects(engine: TestEngine, seed: UInt64) async throws {
        var random = SplitMix64(seed: seed)
        let users = (0..<40).map { index in
            makeTripsUser("user\(index)", familyName: Self.draw(&random, length: 0...7))
        }
        let values = users.map(\.familyName)
        try await engine.withStore(schema: Trips.schema) { store in
            _ = try await store.performAndSave { try $0.batchInsert(users) }
            for _ in 0..<50 {
                let operation = Self.operations[Int(random.next() % UInt64(Self.operations.count))]
                let options = Self.optionSets[Int(random.next() % UInt64(Self.optionSets.count))]
                let needle = Self.needle(for: operation, values: values, &random)
                let expected = users.filter { operation.matches($0.familyName, needle, options: options) }
                    .map(\.username).sorted()
                let request = Self.condition(operation, needle, options)
                let selected = try await store.performQuery { try $0.fetch(request).map(\.username) }.sorted()
                #expect(selected == expected, "\(operation) \(options.rawValue) \(needle.debugDescription)")
            }
        }
    }

    /// Where PostgreSQL compares differently from Swift (see `PostgresDialect.stringTest`): code
    /// points rather than characters, `unaccent`'s letter replacements, and `caseInsensitive` as
    /// ICU's `lower()` where Swift folds case (each difference "Running on PostgreSQL" lists). Each
    /// case gives SQLite's answer and PostgreSQL's the opposite, so a change in either engine fails it.
    @Test(arguments: TestEngine.available) func theEnginesDifferOnlyWhereDocumented(engine: TestEngine) async throws {
        let cases: [(value: String, operation: StringOperation, options: StringComparisonOptions, needle: String)] = [
            ("e\u{301}te", .hasPrefix, [], "e"),  // a decomposed é: one character in Swift, two code points
            ("e\u{301}", .like, [], "?"),
            ("Søren", .contains, .diacriticInsensitive, "o"),  // unaccent replaces ø; Foundation keeps it
            ("Straße", .hasSuffix, .diacriticInsensitive, "sse"),
            // Swift folds case where ICU's `lower()` only lowers: each is equal, or found, in Swift only.
            ("Straße", .equals, .caseInsensitive, "STRASSE"),  // ß folds to ss
            ("ς", .equals, .caseInsensitive, "σ"),  // a final sigma folds to σ, and lowers to itself
            ("ﬁle", .contains, .caseInsensitive, "i"),  // the ligature folds to f + i
            ("µ", .equals, .caseInsensitive, "μ"),  // the micro sign folds to the Greek mu
            ("İstanbul", .hasPrefix, .caseInsensitive, "i"),  // İ lowers to i + U+0307 on PostgreSQL only
        ]
        try await engine.withStore(schema: Trips.schema) { store in
            let users = cases.indices.map { makeTripsUser("case\($0)", familyName: cases[$0].value) }
            _ = try await store.performAndSave { try $0.batchInsert(users) }
            for (index, test) in cases.enumerated() {
                let request = Self.condition(test.operation, test.needle, test.options).filter {
                    $0.username == "case\(index)"
                }
                let selected = try await store.performQuery { try $0.count(request) } == 1
                let swift = test.operation.matches(test.value, test.needle, options: test.options)
                #expect(selected == (engine == .sqlite ? swift : !swift), "\(test)")
            }
        }
    }

    /// A missing value sorts first ascending and last descending, on both engines.
    @Test(arguments: TestEngine.available) func nullSortsFirstAscendingAndLastDescending(engine: TestEngine)
        async throws
    {
        try await engine.withStore(schema: Trips.schema) { store in
            let prefixes: [String?] = ["b", nil, "a", nil, "c"]
            let users = prefixes.enumerated().map { index, prefix in
                User(
                    username: "user\(index)", givenName: "G", familyName: "F", namePrefix: prefix,
                    joinedAt: Date(timeIntervalSinceReferenceDate: 790_000_000))
            }
            _ = try await store.performAndSave { try $0.batchInsert(users) }
            let (ascending, descending) = try await store.performQuery { context in
                (
                    try context.fetch(User.request().sorted { [$0.namePrefix.ascending, $0.username.ascending] })
                        .map(\.namePrefix),
                    try context.fetch(User.request().sorted { [$0.namePrefix.descending, $0.username.ascending] })
                        .map(\.namePrefix)
                )
            }
            #expect(ascending == [nil, nil, "a", "b", "c"])
            #expect(descending == ["c", "b", "a", nil, nil])
        }
    }
}
