import ModelwrightTestSupport

/// A campaign: a seed and how many schema and XML inputs it makes. Input `s12` is the 13th schema
/// input and `x4` the 5th XML input; each depends only on the seed, its kind and its number, so a
/// larger campaign with the same seed contains every input of a smaller one.
struct FuzzCampaign: Sendable {
    /// The seed every input's random stream derives from.
    let seed: UInt64
    /// How many schema inputs.
    let schemaCount: Int
    /// How many Core Data inputs.
    let xmlCount: Int
    /// What the inputs start from.
    let seeds: FuzzSeeds

    /// How many inputs in all.
    var count: Int { schemaCount + xmlCount }

    /// The name of the input at `ordinal` (schema inputs first): `s<N>` or `x<N>`.
    func name(at ordinal: Int) -> String {
        ordinal < schemaCount ? "s\(ordinal)" : "x\(ordinal - schemaCount)"
    }

    /// The ordinal of an input named `s<N>` or `x<N>`, or a bare ordinal.
    func ordinal(named name: String) -> Int? {
        if name.hasPrefix("s"), let number = Int(name.dropFirst()), number >= 0 { return number }
        if name.hasPrefix("x"), let number = Int(name.dropFirst()), number >= 0 { return schemaCount + number }
        return Int(name)
    }

    /// Makes the input at `ordinal`.
    func input(at ordinal: Int) -> FuzzInput {
        if ordinal < schemaCount {
            var random = SplitMix64(seed: seed, index: ordinal)
            return SchemaMutator(seeds: seeds).make(index: ordinal, random: &random)
        }
        var random = SplitMix64(seed: seed ^ 0x584D_4C5F_5345_4544, index: ordinal - schemaCount)
        return XMLMutator(seeds: seeds).make(index: ordinal, random: &random)
    }
}
