/// The shortest edit script between two sequences, by Myers' algorithm ("An O(ND) Difference
/// Algorithm and Its Variations", 1986): time proportional to the length times the number of
/// edits, and memory to the square of the edits, so a commit that moves one row of a long list
/// costs one pass and almost no memory.
struct EditScript {
    /// Runs of elements kept in both, in order: where each starts in the old and the new sequence.
    private(set) var kept: [(old: Int, new: Int, count: Int)] = []
    /// Positions in the old sequence of the elements deleted, ascending.
    private(set) var deleted: [Int] = []
    /// Positions in the new sequence of the elements inserted, ascending.
    private(set) var inserted: [Int] = []

    /// The script from a sequence of `oldCount` elements to one of `newCount`, where `equal(i, j)`
    /// says whether old element `i` is new element `j`; `nil` when it takes more than `maxEdits`.
    init?(oldCount: Int, newCount: Int, maxEdits: Int, equal: (Int, Int) -> Bool) {
        let offset = maxEdits + 1
        var frontier = [Int](repeating: 0, count: 2 * maxEdits + 3)
        var trace: [[Int]] = []
        var edits: Int?
        search: for d in 0...maxEdits {
            trace.append(Array(frontier[(offset - d)...(offset + d)]))
            for k in stride(from: -d, through: d, by: 2) {
                let down = k == -d || (k != d && frontier[offset + k - 1] < frontier[offset + k + 1])
                var x = down ? frontier[offset + k + 1] : frontier[offset + k - 1] + 1
                var y = x - k
                while x < oldCount, y < newCount, equal(x, y) {
                    x += 1
                    y += 1
                }
                frontier[offset + k] = x
                if x >= oldCount, y >= newCount {
                    edits = d
                    break search
                }
            }
        }
        guard let edits else { return nil }
        backtrack(trace, edits: edits, end: (oldCount, newCount))
    }

    /// Walks the saved frontiers back from the end, collecting each step and the run after it.
    private mutating func backtrack(_ trace: [[Int]], edits: Int, end: (Int, Int)) {
        var (x, y) = end
        for d in stride(from: edits, through: 1, by: -1) {
            let saved = trace[d]
            let k = x - y
            let down = k == -d || (k != d && saved[k - 1 + d] < saved[k + 1 + d])
            let previousK = down ? k + 1 : k - 1
            let previousX = saved[previousK + d]
            let previousY = previousX - previousK
            let startX = down ? previousX : previousX + 1
            if x > startX { kept.append((startX, startX - k, x - startX)) }
            if down { inserted.append(previousY) } else { deleted.append(previousX) }
            (x, y) = (previousX, previousY)
        }
        if x > 0 { kept.append((0, 0, x)) }
        kept.reverse()
        deleted.reverse()
        inserted.reverse()
    }

    /// The old position of the last kept element before new position `position`, or -1.
    func keptOld(before position: Int) -> Int {
        guard let run = kept.last(where: { $0.new < position }) else { return -1 }
        return run.old + min(position - 1 - run.new, run.count - 1)
    }

    /// The old position of the first kept element after new position `position`, or `Int.max`.
    func keptOld(after position: Int) -> Int {
        guard let run = kept.first(where: { $0.new + $0.count - 1 > position }) else { return Int.max }
        return run.old + max(0, position + 1 - run.new)
    }
}
