import ModelwrightTestSupport

/// A suite that draws entity, attribute and relationship names up to PostgreSQL's 63-byte limit
/// on identifiers and past it, of letters and some two-byte ones (so a cut can fall inside a
/// letter): the index-name and foreign-key-name suites draw their names from this one source.
protocol DrawsLongNames {}

extension DrawsLongNames {
    /// A name of `bytes` UTF-8 bytes at most, of letters and some two-byte ones, starting with `prefix`.
    static func name(_ prefix: String, bytes: Int, _ random: inout SplitMix64) -> String {
        var result = prefix
        let letters = Array("abcdefghijklmnopqrstuvwxyzéøß")
        while true {
            let next = String(random.pick(letters))
            guard result.utf8.count + next.utf8.count <= bytes else { return result }
            result += next
        }
    }
}
