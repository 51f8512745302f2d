import Foundation
import Modelwright

// What `SearchQuery.matches(_:)` costs, now that it asks SQLite FTS5's own tokenizer for the words
// of each text (issue 31). Run from Benchmarks/:
//
//     swift run -c release SearchBenchmarks [texts]
//
// For texts of about eight words (ASCII, and mixed with accents, Hebrew and Arabic), the median
// time of matching each text against a word query and a prefix-and-phrase query, next to the
// time of only normalising each text to NFKC (which the matcher does first, as the store does).

let count = CommandLine.arguments.dropFirst().compactMap { Int($0) }.first ?? 100_000
/// SplitMix64, so every run draws the same texts.
struct Random {
    private var state: UInt64 = 0x5EA_2C4

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
let ascii = ["swift", "actor", "task", "data", "concurrency", "lisbon", "porto", "wine", "trip", "plan"]
let mixed = ascii + ["café", "naïve", "שָׁלוֹם", "مَرْحَبًا", "Ångström", "ﬁle"]
func texts(_ words: [String], count: Int) -> [String] {
    var random = Random()
    return (0..<count).map { _ in
        (0..<8).map { _ in words[Int(random.next() % UInt64(words.count))] }.joined(separator: " ")
    }
}

/// The median of five timings of `body`, in nanoseconds per text.
func nanosecondsPerText(count: Int, _ body: () -> Int) -> Double {
    var times: [Double] = []
    var sink = 0
    for _ in 0..<5 {
        let start = ContinuousClock.now
        sink &+= body()
        let elapsed = ContinuousClock.now - start
        times.append((Double(elapsed.components.seconds) * 1e18 + Double(elapsed.components.attoseconds)) / 1e9)
    }
    if sink == -1 { print(sink) }
    return times.sorted()[2] / Double(count)
}

let word = try SearchQuery("porto")
let prefixAndPhrase = try SearchQuery("conc* OR \"porto wine\" NOT lisb*")
print("texts: \(count)")
for (name, set) in [("ascii", texts(ascii, count: count)), ("mixed scripts", texts(mixed, count: count))] {
    let nfkc = nanosecondsPerText(count: count) {
        set.reduce(0) { $0 &+ $1.precomposedStringWithCompatibilityMapping.utf8.count }
    }
    let plain = nanosecondsPerText(count: count) { set.reduce(0) { $0 + (word.matches($1) ? 1 : 0) } }
    let complex = nanosecondsPerText(count: count) { set.reduce(0) { $0 + (prefixAndPhrase.matches($1) ? 1 : 0) } }
    print(
        "\(name): NFKC only \(Int(nfkc)) ns/text, matches(word) \(Int(plain)) ns/text, "
            + "matches(prefix, phrase, NOT) \(Int(complex)) ns/text")
}
