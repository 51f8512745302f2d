/// "Did you mean …?" hints: the candidate closest to a misspelt name, when one is close enough.
enum Suggestions {
    /// The closest candidate within an edit distance of a third of the name's length (at least 1),
    /// ignoring case; `nil` when nothing is that close.
    static func closest(to name: String, among candidates: some Sequence<String>) -> String? {
        let target = Array(name.lowercased().unicodeScalars)
        let limit = max(1, target.count / 3)
        var best: (name: String, distance: Int)?
        for candidate in candidates where candidate != name {
            let distance = editDistance(target, Array(candidate.lowercased().unicodeScalars))
            if distance <= limit, distance < (best?.distance ?? Int.max) {
                best = (candidate, distance)
            }
        }
        return best?.name
    }

    /// Levenshtein distance with one row of memory.
    private static func editDistance(_ lhs: [Unicode.Scalar], _ rhs: [Unicode.Scalar]) -> Int {
        if lhs.isEmpty { return rhs.count }
        if rhs.isEmpty { return lhs.count }
        var row = Array(0...rhs.count)
        for (i, left) in lhs.enumerated() {
            var previousDiagonal = row[0]
            row[0] = i + 1
            for (j, right) in rhs.enumerated() {
                let above = row[j + 1]
                row[j + 1] = min(above + 1, row[j] + 1, previousDiagonal + (left == right ? 0 : 1))
                previousDiagonal = above
            }
        }
        return row[rhs.count]
    }
}
