import Foundation
import ModelwrightTestSupport
import Testing

@testable import ModelwrightSchema

/// "Did you mean" hints are bounded and agree with the plain, unbounded search.
struct SuggestionTests {
    /// The full optimal-string-alignment distance, the reference the banded one must match.
    private static func referenceDistance(_ lhs: [Unicode.Scalar], _ rhs: [Unicode.Scalar]) -> Int {
        if lhs.isEmpty { return rhs.count }
        if rhs.isEmpty { return lhs.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: rhs.count + 1), count: lhs.count + 1)
        for i in 0...lhs.count { table[i][0] = i }
        for j in 0...rhs.count { table[0][j] = j }
        for i in 1...lhs.count {
            for j in 1...rhs.count {
                let cost = lhs[i - 1] == rhs[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, lhs[i - 1] == rhs[j - 2], lhs[i - 2] == rhs[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[lhs.count][rhs.count]
    }

    /// The search as it was before it was bounded.
    private static func referenceClosest(to name: String, among candidates: [String]) -> String? {
        let target = Array(name.lowercased().unicodeScalars)
        let limit = max(1, target.count / 3)
        var best: (name: String, distance: Int)?
        for candidate in candidates where candidate != name {
            let distance = referenceDistance(target, Array(candidate.lowercased().unicodeScalars))
            if distance <= limit, distance * 2 < target.count, distance < (best?.distance ?? Int.max) {
                best = (candidate, distance)
            }
        }
        return best?.name
    }

    private static func word(_ random: inout SplitMix64, maximum: Int) -> String {
        let letters = Array("abcAB_é".unicodeScalars)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<Int.random(in: 0...maximum, using: &random) {
            scalars.append(letters[Int.random(in: 0..<letters.count, using: &random)])
        }
        return String(scalars)
    }

    @Test func theBandedDistanceMatchesTheFullOne() {
        var random = SplitMix64(seed: 31)
        for _ in 0..<5_000 {
            let lhs = Array(Self.word(&random, maximum: 12).unicodeScalars)
            let rhs = Array(Self.word(&random, maximum: 12).unicodeScalars)
            let bound = Int.random(in: 0...6, using: &random)
            let full = Self.referenceDistance(lhs, rhs)
            #expect(Suggestions.editDistance(lhs, rhs, atMost: bound) == (full <= bound ? full : nil))
        }
    }

    @Test func theBoundedSearchFindsWhatTheFullSearchFinds() {
        var random = SplitMix64(seed: 32)
        for _ in 0..<2_000 {
            let name = Self.word(&random, maximum: 10)
            let candidates = (0..<Int.random(in: 0...8, using: &random)).map { _ in Self.word(&random, maximum: 10) }
            #expect(
                Suggestions.closest(to: name, among: candidates) == Self.referenceClosest(to: name, among: candidates),
                "\(name) among \(candidates)")
        }
    }

    /// Counts the searches a sink starts, from any thread.
    private final class Searches: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        var value: Int { lock.withLock { count } }
        func add() { lock.withLock { count += 1 } }
    }

    @Test func hintsAreSearchedOnlyForReportedErrors() {
        var random = SplitMix64(seed: 824)
        for _ in 0..<50 {
            let file = SourceFile(path: "M.v1.model", text: String(repeating: "x\n", count: 400))
            let searches = Searches()
            let errors = Int.random(in: 0...300, using: &random)
            let before = Int.random(in: 0...120, using: &random)
            // Errors reported straight, or in a sink that defers (as parallel work does) and is
            // merged after `before` errors of the file's own.
            let defers = Bool.random(using: &random)
            var sink = DiagnosticSink(file: file)
            for index in 0..<before { sink.error("first \(index)", at: 0) }
            var work = DiagnosticSink(file: file, defersSuggestions: defers)
            for index in 0..<errors {
                work.error(
                    "unknown type 'Entityy\(index)'", at: 2 * (index % 400),
                    suggesting: Suggestion(for: "Entityy\(index)", at: 2 * (index % 400)) {
                        searches.add()
                        return ["Entity\(index)"]
                    })
            }
            let searchedBeforeMerge = searches.value
            sink.append(work)
            let limit = DiagnosticSink.errorLimit
            let reported = defers ? min(errors, max(0, limit - before)) : min(errors, limit)
            #expect(searchedBeforeMerge == (defers ? 0 : min(errors, limit)))
            #expect(searches.value == (defers ? reported : min(errors, limit)))
            let hints = sink.diagnostics.flatMap(\.notes).filter { $0.message.hasPrefix("did you mean 'Entity") }
            #expect(hints.count == min(errors, max(0, limit - before)))
        }
    }

    @Test func aHugeUnknownNameAmongManyEntitiesGetsNoHint() {
        // Unbounded, this took most of a minute: 100 KB against 2,000 names of a similar size.
        let name = String(repeating: "Q", count: 100_000)
        let entities = (0..<2_000).map { "entity E\($0) {\n    x: Int\n}" }.joined(separator: "\n")
        let text = "model Test version 1\n\(entities)\nentity Z {\n    y: \(name)\n}\n"
        let lines = diagnose(text)
        #expect(lines.count == 1)
        #expect(lines.first?.hasPrefix("6003:8: error: unknown type 'QQQ") == true)
        let long = (0..<2_000).map { _ in String(repeating: "Q", count: 50_000) }
        #expect(Suggestions.closest(to: String(repeating: "Q", count: 60), among: long) == nil)
        #expect(Suggestions.closest(to: name, among: [name + "x"]) == nil)
    }
}
