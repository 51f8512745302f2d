import ModelwrightSchema

/// Reports a warning that recurs across versions once, at its first location, instead of once per
/// version: a to-many relationship Core Data requires to be non-empty is the same construct in
/// every WooCommerce version that has it.
///
/// "The same" is the same message, which names the entity and property; only the location (the
/// version's file, line and column) may differ. The kept warning ends in
/// "(also in versions 'Model 2'–'Model 5', 'Model 7')", naming the other versions as Core Data
/// does, a range for each run of consecutive versions. Errors are never grouped.
enum CoreDataWarningGroups {
    /// The diagnostics of every version, `perVersion[i]` being those of the version named
    /// `versionNames[i]`, with each recurring warning kept only where it first appears.
    static func grouped(_ perVersion: [[Diagnostic]], versionNames: [String]) -> [Diagnostic] {
        var versionsByMessage: [String: [Int]] = [:]
        for (version, diagnostics) in perVersion.enumerated() {
            for diagnostic in diagnostics where diagnostic.severity != .error {
                let seen = versionsByMessage[diagnostic.message, default: []]
                if seen.last != version { versionsByMessage[diagnostic.message] = seen + [version] }
            }
        }
        var result: [Diagnostic] = []
        for (version, diagnostics) in perVersion.enumerated() {
            for diagnostic in diagnostics {
                guard diagnostic.severity != .error, let versions = versionsByMessage[diagnostic.message] else {
                    result.append(diagnostic)
                    continue
                }
                guard versions.first == version else { continue }
                guard versions.count > 1 else {
                    result.append(diagnostic)
                    continue
                }
                result.append(
                    Diagnostic(
                        severity: diagnostic.severity,
                        message: diagnostic.message + " " + suffix(Array(versions.dropFirst()), names: versionNames),
                        path: diagnostic.path, location: diagnostic.location, notes: diagnostic.notes))
            }
        }
        return result
    }

    /// "(also in version 'Model 3')" or "(also in versions 'Model 2'–'Model 5', 'Model 7')" for
    /// the versions at `indexes`, ascending.
    static func suffix(_ indexes: [Int], names: [String]) -> String {
        func name(_ index: Int) -> String { "'\(index < names.count ? names[index] : String(index + 1))'" }
        var runs: [String] = []
        var start = 0
        while start < indexes.count {
            var end = start
            while end + 1 < indexes.count, indexes[end + 1] == indexes[end] + 1 { end += 1 }
            runs.append(end == start ? name(indexes[start]) : "\(name(indexes[start]))–\(name(indexes[end]))")
            start = end + 1
        }
        return "(also in version\(indexes.count == 1 ? "" : "s") \(runs.joined(separator: ", ")))"
    }
}
