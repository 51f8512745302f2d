import Foundation
import ModelwrightSchema

/// Which versions of a bundle are imported, and in which order: the options that skip versions or
/// state the order, versions Modelwright cannot read, and the evidence the files hold.
extension CoreDataBundle {
    /// Checks the names given to `--skip-version` and `--version-order` against the bundle's
    /// versions `names`; returns the names to skip.
    static func checkSelection(
        _ names: [String], order: [String]?, skipping: [String], path: String
    ) throws(Failure) -> Set<String> {
        let known = Set(names)
        let valid = "its versions are: \(names.map { "'\($0)'" }.joined(separator: ", "))"
        let skipped = Set(skipping.map(versionName))
        if let unknown = skipping.map(versionName).first(where: { !known.contains($0) }) {
            throw usage(path, "--skip-version names '\(unknown)', which is not a version of the bundle; \(valid)")
        }
        guard let order = order?.map(versionName) else { return skipped }
        var seen: Set<String> = []
        for (index, name) in order.enumerated() {
            // Not quoted: the names may come from a file (`@path`), whose text is never echoed.
            guard known.contains(name) else {
                throw usage(
                    path, "name \(index + 1) of --version-order is not a version of the bundle; \(valid)")
            }
            guard seen.insert(name).inserted else {
                throw usage(path, "--version-order names '\(name)' twice; name each version once, oldest first")
            }
        }
        if let missing = names.first(where: { !seen.contains($0) && !skipped.contains($0) }) {
            throw usage(
                path,
                "--version-order does not name '\(missing)'; name every version once, oldest first, or leave it out with --skip-version"
            )
        }
        return skipped
    }

    /// A name as the options may spell it, with or without `.xcdatamodel`.
    private static func versionName(_ text: String) -> String {
        text.hasSuffix(".xcdatamodel") ? String(text.dropLast(".xcdatamodel".count)) : text
    }

    private static func usage(_ path: String, _ message: String) -> Failure {
        Failure(path: path, message: message, isUsageError: true)
    }

    /// Throws, at each version's folder, for versions without a `contents` file: one Xcode 3 saved
    /// (a binary `elements` archive beside a `layout` file), or one with no model file at all.
    static func checkHasContents(_ versions: [Version], canSkip: Bool = true) throws(Failure) {
        var failures: [Failure] = []
        for version in versions where !FileManager.default.fileExists(atPath: version.contentsPath) {
            let skip =
                canSkip ? ", or pass --skip-version '\(version.name)' to import the other versions without it" : ""
            let elements = URL(fileURLWithPath: version.folderPath).appendingPathComponent("elements").path
            if FileManager.default.fileExists(atPath: elements) {
                failures.append(
                    Failure(
                        path: version.folderPath,
                        message:
                            "version '\(version.name)' was saved by Xcode 3 as a binary 'elements' archive, which Modelwright does not read; open the model in a current Xcode and save it, which writes its 'contents' file\(skip)"
                    ))
            } else {
                failures.append(
                    Failure(
                        path: version.folderPath,
                        message: "version '\(version.name)' has no 'contents' file, so it holds no model\(skip)"))
            }
        }
        guard var first = failures.first else { return }
        first.others = Array(failures.dropFirst())
        throw first
    }

    /// The order of `versions` (given in natural order): the one stated, or the one the evidence
    /// gives, with a warning when it differs from the names' order; ambiguity is a failure that
    /// names `--version-order`.
    static func decideOrder(
        _ versions: [Version], stated: [String]?, current: String?, path: String
    ) throws(Failure) -> (order: CoreDataVersionOrder, notes: [Diagnostic]) {
        let nameOrder = versions.map(\.name)
        if let stated {
            let kept = Set(nameOrder)
            let names = stated.map(versionName).filter { kept.contains($0) }
            return (CoreDataVersionOrder(names: names, basis: .stated, nameOrder: nameOrder), [])
        }
        let unread = versions.map { CoreDataVersionOrder.Candidate(name: $0.name, toolsVersion: nil) }
        let needsEvidence = CoreDataVersionOrder.Family.split(unread).count > 1
        let candidates =
            needsEvidence
            ? versions.map { CoreDataVersionOrder.Candidate(name: $0.name, toolsVersion: savedToolsVersion($0)) }
            : unread
        switch CoreDataVersionOrder.decide(candidates, current: current) {
        case .ambiguous(let reason):
            throw Failure(
                path: path,
                message:
                    "cannot tell the order of the versions: \(reason); pass --version-order with every version's name, oldest first (comma-separated, or @file with one name per line)"
            )
        case .ordered(let names, let basis):
            if basis == .savedToolsVersions, let contradiction = renameContradiction(names, versions: versions) {
                throw Failure(
                    path: path,
                    message:
                        "cannot tell the order of the versions: the Xcode builds that saved them and their renaming identifiers disagree: \(contradiction); pass --version-order with every version's name, oldest first (comma-separated, or @file with one name per line)"
                )
            }
            let order = CoreDataVersionOrder(names: names, basis: basis, nameOrder: nameOrder)
            guard names != nameOrder else { return (order, []) }
            let ordered = names.compactMap { name in candidates.first { $0.name == name } }
            let families = CoreDataVersionOrder.Family.split(ordered).map(\.described)
            let warning = Diagnostic(
                severity: .warning,
                message:
                    "the version names alone would put '\(nameOrder[0])' first, but the Xcode builds that saved the versions put \(families.joined(separator: " before ")), so they are imported in that order; pass --version-order to state another",
                path: path, location: nil)
            return (order, [warning])
        }
    }

    /// Where the renaming identifiers contradict `names`, ordered by family: checked at each place
    /// one family ends and the next begins. A version that cannot be read is not checked here;
    /// the import reports it.
    private static func renameContradiction(_ names: [String], versions: [Version]) -> String? {
        let families = CoreDataVersionOrder.Family.split(names.map { .init(name: $0, toolsVersion: nil) })
        for (earlier, later) in zip(families, families.dropFirst()) {
            guard let last = earlier.members.last, let first = later.members.first,
                let lastPath = versions.first(where: { $0.name == last }),
                let firstPath = versions.first(where: { $0.name == first }),
                let lastModel = try? CoreDataReader.read(lastPath),
                let firstModel = try? CoreDataReader.read(firstPath)
            else { continue }
            if let reason = CoreDataVersionOrder.renameContradiction(
                earlier: (last, lastModel), later: (first, firstModel))
            {
                return reason
            }
        }
        return nil
    }

    /// The `lastSavedToolsVersion` of the root `<model>` element of `version`'s `contents`, or
    /// `nil` when the file records none or cannot be read (reading it fully reports why).
    static func savedToolsVersion(_ version: Version) -> ToolsVersion? {
        guard let bytes = try? version.readContents(limit: BoundedFile.maximumSize)
        else { return nil }
        guard var reader = try? XMLReader(bytes: bytes) else { return nil }
        guard let event = try? reader.next(), case .start(let name, let attributes, _) = event, name == "model",
            let text = attributes.first(where: { $0.name == "lastSavedToolsVersion" })?.value
        else { return nil }
        return ToolsVersion(text)
    }
}
