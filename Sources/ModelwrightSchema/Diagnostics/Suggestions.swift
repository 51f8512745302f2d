/// "Did you mean …?" hints: the candidate closest to a misspelt name, when one is close enough.
///
/// Bounded whatever the input: a name longer than ``maximumNameLength`` gets no hint, at most
/// ``maximumCandidates`` candidates are looked at, a candidate whose length alone rules it out
/// costs nothing, and the edit distance is computed only in a band as wide as the distance
/// allowed. A 100 KB unknown name among 2,000 entities costs nothing; a name of 64 scalars
/// costs at most 64 × 43 cells per candidate, and one search at most ``maximumCells`` cells in
/// all (it keeps the best found by then), so the 100 hints a file can show stay cheap even
/// among a thousand near-identical long names (1.6 s of CPU before the budget, 0.1 s after).
package enum Suggestions {
    /// The longest name (in Unicode scalars) that gets a hint.
    package static let maximumNameLength = 64
    /// The most candidates looked at for one hint.
    package static let maximumCandidates = 10_000
    /// The most cells of edit distance one search computes: room for 1,400 candidates of 10
    /// scalars, or 40 of 64.
    package static let maximumCells = 100_000

    /// The closest candidate within an edit distance of a third of the name's length (at least 1,
    /// and less than half the name, so `Y` never suggests `A`), ignoring case; `nil` when nothing
    /// is that close.
    package static func closest(to name: String, among candidates: some Sequence<String>) -> String? {
        guard name.unicodeScalars.count <= maximumNameLength else { return nil }
        let target = Array(name.lowercased().unicodeScalars)
        guard !target.isEmpty else { return nil }
        let limit = max(1, target.count / 3)
        var best: (name: String, distance: Int)?
        var looked = 0
        var cells = 0
        for candidate in candidates where candidate != name {
            looked += 1
            if looked > maximumCandidates || cells > maximumCells { break }
            // Cheap before lowercasing: the length difference is a lower bound on the distance.
            // A scalar is at most 4 UTF-8 bytes, and `utf8.count` costs nothing, so a huge
            // candidate is not even counted.
            guard candidate.utf8.count <= 4 * (target.count + limit) else { continue }
            let length = candidate.unicodeScalars.count
            guard abs(length - target.count) <= limit else { continue }
            let bound = min(limit, (best?.distance ?? Int.max) - 1, (target.count - 1) / 2)
            guard bound >= 0 else { continue }
            // The band, and the rows and lowercased copy set up for each candidate.
            cells += target.count * (2 * bound + 1) + 4 * length
            guard let distance = editDistance(target, Array(candidate.lowercased().unicodeScalars), atMost: bound)
            else { continue }
            best = (candidate, distance)
        }
        return best?.name
    }

    /// Edit distance counting insertions, deletions, substitutions and swaps of neighbours
    /// (optimal string alignment), so `nmae` is one edit from `name`; `nil` when it is above
    /// `bound`. Only cells within `bound` of the diagonal are computed, so the cost is
    /// `lhs.count × (2 × bound + 1)`.
    static func editDistance(_ lhs: [Unicode.Scalar], _ rhs: [Unicode.Scalar], atMost bound: Int) -> Int? {
        guard abs(lhs.count - rhs.count) <= bound else { return nil }
        if lhs.isEmpty || rhs.isEmpty { return max(lhs.count, rhs.count) }
        let outside = bound + 1
        var twoBack = [Int](repeating: outside, count: rhs.count + 1)
        var previous = [Int](repeating: outside, count: rhs.count + 1)
        var column = 0
        while column <= min(rhs.count, bound) {
            previous[column] = column
            column += 1
        }
        var current = [Int](repeating: outside, count: rhs.count + 1)
        for i in 1...lhs.count {
            let low = max(1, i - bound)
            let high = min(rhs.count, i + bound)
            current[0] = min(i, outside)
            if low > 1 { current[low - 1] = outside }
            var rowMinimum = current[0]
            // A counted loop, not a range: at -Onone (the build plugin's tool is a debug build)
            // iterating a `ClosedRange` cost more than the cell itself.
            var j = low
            while j <= high {
                let cost = lhs[i - 1] == rhs[j - 1] ? 0 : 1
                var cell = previous[j - 1] + cost
                if previous[j] + 1 < cell { cell = previous[j] + 1 }
                if current[j - 1] + 1 < cell { cell = current[j - 1] + 1 }
                if i > 1, j > 1, lhs[i - 1] == rhs[j - 2], lhs[i - 2] == rhs[j - 1], twoBack[j - 2] + 1 < cell {
                    cell = twoBack[j - 2] + 1
                }
                if cell > outside { cell = outside }
                current[j] = cell
                if cell < rowMinimum { rowMinimum = cell }
                j += 1
            }
            if high < rhs.count { current[high + 1] = outside }
            guard rowMinimum <= bound else { return nil }
            (twoBack, previous, current) = (previous, current, twoBack)
        }
        let distance = previous[rhs.count]
        return distance <= bound ? distance : nil
    }
}

/// A "did you mean" hint an error asks for: `name` and the names it may be a misspelling of. The
/// ``DiagnosticSink`` lists the candidates and searches only if it reports the error, and shows
/// the closest candidate as a note `did you mean '<prefix><candidate>'?` at `offset` (or
/// `otherwise`, when no candidate is close).
package struct Suggestion: Sendable {
    /// The name as written.
    package let name: String
    /// The names it may be a misspelling of, listed only when the error is reported.
    package let candidates: @Sendable () -> [String]
    /// Where the note points.
    package let offset: Int
    /// Written before the candidate, such as `@` for annotations or `.` for enum cases.
    package let prefix: String
    /// The note when no candidate is close; none when `nil`.
    package let otherwise: (@Sendable () -> String)?

    /// A hint for `name` among `candidates`, pointing at `offset`; pass an array built once (a
    /// copy costs nothing).
    package init(for name: String, among candidates: [String], at offset: Int, prefix: String = "") {
        self.init(for: name, at: offset, prefix: prefix) { candidates }
    }

    /// A hint for `name` among the names `candidates` lists, only if the error is reported.
    package init(
        for name: String, at offset: Int, prefix: String = "", otherwise: (@Sendable () -> String)? = nil,
        among candidates: @escaping @Sendable () -> [String]
    ) {
        self.name = name
        self.candidates = candidates
        self.offset = offset
        self.prefix = prefix
        self.otherwise = otherwise
    }
}
