import Foundation

/// A small seedable random number generator, so every test that generates cases draws the same
/// ones on every run, and every fuzz input can be made again from its seed and index (the
/// standard library's generator cannot be seeded). The one generator of every test target.
///
/// SplitMix64 (Steele, Lea and Flood, 2014): one 64-bit state, advanced by a constant and mixed.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose state starts at `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// A generator for input `index` of the campaign seeded with `seed`: each input has its own
    /// stream, so an input does not depend on the inputs before it.
    public init(seed: UInt64, index: Int) {
        var mixer = SplitMix64(seed: seed)
        state = mixer.next() ^ (UInt64(truncatingIfNeeded: index) &* 0xD6E8_FEB8_6659_FD93)
        _ = next()
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var mixed = state
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    /// A number in `0..<bound`, the next bits modulo `bound` (`bound` > 0).
    public mutating func next(below bound: Int) -> Int {
        Int(next() % UInt64(bound))
    }

    /// A random index into a collection of `count` elements; 0 when it is empty.
    public mutating func index(below count: Int) -> Int {
        count <= 0 ? 0 : Int.random(in: 0..<count, using: &self)
    }

    /// True with the given probability.
    public mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < probability
    }

    /// A random element of a non-empty array.
    public mutating func pick<Element>(_ elements: [Element]) -> Element {
        elements[index(below: elements.count)]
    }

    /// A count between `range`'s bounds, biased to small values (log-uniform), as sizes of
    /// interesting inputs are.
    public mutating func size(in range: ClosedRange<Int>) -> Int {
        let low = Double(max(range.lowerBound, 1))
        let high = Double(max(range.upperBound, 1))
        let value = Int(exp(Double.random(in: log(low)...log(high), using: &self)))
        return min(max(value, range.lowerBound), range.upperBound)
    }
}
