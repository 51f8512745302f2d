import Foundation
import ModelwrightSchema

/// The versions of a Core Data model on disk: every `*.xcdatamodel` of an `.xcdatamodeld` bundle
/// in version order, and which one is current; or a bare `.xcdatamodel`, which is one version.
///
/// The bundle keeps no order of its own: ``CoreDataVersionOrder`` says how the order is found
/// (natural name order within one name family, `lastSavedToolsVersion` between families) and
/// when it cannot be, in which case opening fails and the user states the order.
/// The current version is the one `.xccurrentversion` names; when that file is missing, holds an
/// empty dictionary or names a version the bundle lacks, the newest version is current.
package struct CoreDataBundle: Sendable {
    /// One `*.xcdatamodel` folder.
    package struct Version: Sendable, Equatable {
        /// The version's name: the folder's name without `.xcdatamodel`, such as `Model 37`.
        package var name: String
        /// The path of its `contents` file.
        package var contentsPath: String
        /// The path of its `.xcdatamodel` folder.
        package var folderPath: String
        /// The folder the user named (the bundle, or a bare version folder), which the path of
        /// ``contentsPath`` is followed to.
        package var root: String
        /// `contents` relative to ``root``, reached one component at a time without following a
        /// link (``ConfinedFolder``), so no check and use of a resolved path can be raced.
        package var contentsName: String

        /// The bytes of `contents`, at most `limit`, read confined to ``root``: a version folder
        /// or a `contents` that is a link, or a file with a second name, is refused unread.
        package func readContents(limit: Int) throws(BoundedFile.Failure) -> [UInt8] {
            guard let folder = try? ConfinedFolder.open(root, for: .reading) else { throw .cannotOpen }
            return try folder.read(contentsName, limit: limit)
        }
    }

    /// The bundle or bare version folder as given.
    package var path: String
    /// The bundle's name without its extension, such as `WooCommerce`.
    package var name: String
    /// Every version not skipped, oldest first.
    package var versions: [Version]
    /// The index in ``versions`` of the current version.
    package var currentIndex: Int
    /// The order of ``versions`` and what decided it.
    package var order: CoreDataVersionOrder
    /// What was odd about the bundle: no or an unusable `.xccurrentversion`, skipped versions, an
    /// order the names alone would not give.
    package var notes: [Diagnostic]

    /// Why a bundle could not be listed.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// The path given, or the version folder the problem is in.
        package var path: String
        /// What is wrong.
        package var message: String
        /// Whether the problem is in the options given (exit code 2), not in the bundle.
        package var isUsageError = false
        /// Further problems of the same kind, such as a second version Modelwright cannot read.
        package var others: [Failure] = []

        /// One `path: error: message` line per problem. Paths and version names come from the
        /// file system, which may hold any byte: they are escaped here, when printed.
        package var description: String {
            ([self] + others).map {
                "\(DiagnosticText.escapedPath($0.path)): error: \(DiagnosticText.escaped($0.message))"
            }.joined(separator: "\n")
        }
    }

    /// The most versions a bundle may hold: WooCommerce, after eight years of releases, has 117.
    package static let maximumVersionCount = 1000

    /// Lists the versions of `path`, an `.xcdatamodeld` bundle or a bare `.xcdatamodel`.
    ///
    /// `versionOrder`, when given, is the order of the versions, oldest first: every version not
    /// in `skipping` once (`--version-order`). `skipping` names versions to leave out
    /// (`--skip-version`), each with a warning. A name that is not one of the bundle's versions
    /// is a usage failure that lists them.
    ///
    /// A version whose `contents` resolves, through symbolic links, to a file outside the bundle
    /// is refused: a bundle from elsewhere must not make the tools read the user's other files.
    /// A version with no `contents` (such as one Xcode 3 saved as a binary `elements` archive) is
    /// refused at its folder, naming the option that skips it.
    package static func open(
        path: String, versionOrder: [String]? = nil, skipping: [String] = []
    ) throws(Failure) -> CoreDataBundle {
        let trimmed = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
        let url = URL(fileURLWithPath: trimmed)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: trimmed, isDirectory: &isDirectory) else {
            throw Failure(path: path, message: "no such file or folder")
        }
        let base = url.deletingPathExtension().lastPathComponent
        switch url.pathExtension {
        case "xcdatamodel":
            let skipped = try checkSelection([base], order: versionOrder, skipping: skipping, path: path)
            guard skipped.isEmpty else {
                throw Failure(path: path, message: "every version is skipped; at least one must be imported")
            }
            return try openBareVersion(path: path, trimmed: trimmed, isDirectory: isDirectory.boolValue, name: base)
        case "xcdatamodeld":
            guard isDirectory.boolValue else { throw Failure(path: path, message: "an .xcdatamodeld is a folder") }
        default:
            throw Failure(path: path, message: "expected an '.xcdatamodeld' bundle or an '.xcdatamodel' folder")
        }
        let all = try versionNames(in: trimmed, path: path).map {
            Version(
                name: $0, contentsPath: url.appendingPathComponent("\($0).xcdatamodel/contents").path,
                folderPath: url.appendingPathComponent("\($0).xcdatamodel").path, root: trimmed,
                contentsName: "\($0).xcdatamodel/contents")
        }
        let skipped = try checkSelection(all.map(\.name), order: versionOrder, skipping: skipping, path: path)
        var notes = all.filter { skipped.contains($0.name) }.map { skippedNote($0) }
        let kept = all.filter { !skipped.contains($0.name) }
        guard !kept.isEmpty else {
            throw Failure(path: path, message: "every version is skipped; at least one must be imported")
        }
        try checkNoLinks(kept, path: path)
        try checkHasContents(kept)
        let currentFile = url.appendingPathComponent(".xccurrentversion").path
        let current = currentVersionName(at: currentFile)
        let named = current.name.map { $0.hasSuffix(".xcdatamodel") ? String($0.dropLast(".xcdatamodel".count)) : $0 }
        let order = try decideOrder(kept, stated: versionOrder, current: named, path: path)
        notes += order.notes
        let versions = order.order.names.compactMap { name in kept.first { $0.name == name } }
        let (currentIndex, currentNotes) = currentIndex(
            of: current, named: named, in: versions, skipped: skipped, currentFile: currentFile, path: path)
        return CoreDataBundle(
            path: path, name: base, versions: versions, currentIndex: currentIndex, order: order.order,
            notes: notes + currentNotes)
    }

    /// A bare `.xcdatamodel` (a folder, or its `contents` file given directly): one version.
    private static func openBareVersion(
        path: String, trimmed: String, isDirectory: Bool, name: String
    ) throws(Failure) -> CoreDataBundle {
        let url = URL(fileURLWithPath: trimmed)
        let contents = isDirectory ? url.appendingPathComponent("contents").path : trimmed
        let parent = url.deletingLastPathComponent().path
        let version = Version(
            name: name, contentsPath: contents, folderPath: trimmed, root: isDirectory ? trimmed : parent,
            contentsName: isDirectory ? "contents" : url.lastPathComponent)
        if isDirectory {
            try checkNoLinks([version], path: path)
            try checkHasContents([version], canSkip: false)
        }
        let order = CoreDataVersionOrder(names: [name], basis: .names, nameOrder: [name])
        return CoreDataBundle(path: path, name: name, versions: [version], currentIndex: 0, order: order, notes: [])
    }

    /// The names of the bundle's `*.xcdatamodel` folders, in natural order.
    private static func versionNames(in folder: String, path: String) throws(Failure) -> [String] {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: folder)
        } catch {
            throw Failure(path: path, message: "cannot read the folder: \(error.localizedDescription)")
        }
        let versionNames = names.filter { $0.hasSuffix(".xcdatamodel") }.map {
            String($0.dropLast(".xcdatamodel".count))
        }
        guard versionNames.count <= maximumVersionCount else {
            throw Failure(
                path: path,
                message:
                    "the bundle holds \(versionNames.count) versions, over the limit of \(maximumVersionCount); remove the versions no store uses"
            )
        }
        guard !versionNames.isEmpty else {
            throw Failure(path: path, message: "the bundle holds no '.xcdatamodel' versions")
        }
        return NaturalOrder.sorted(versionNames)
    }

    /// The warning for a version left out by `--skip-version`.
    private static func skippedNote(_ version: Version) -> Diagnostic {
        Diagnostic(
            severity: .warning,
            message:
                "version '\(version.name)' is skipped (--skip-version): the imported history goes from the version before it straight to the one after",
            path: version.folderPath, location: nil)
    }

    /// Throws when a version folder or its `contents` is a symbolic link: a bundle holds its own
    /// files, and one that came from elsewhere must not make the tools read the user's other files.
    /// Reading never follows such a link either (``Version/readContents(limit:)``); this names it
    /// early, for every version at once.
    private static func checkNoLinks(_ versions: [Version], path: String) throws(Failure) {
        var failures: [Failure] = []
        for version in versions {
            guard let folder = try? ConfinedFolder.open(version.root, for: .reading),
                folder.kind(atPath: version.contentsName) == .symbolicLink
            else { continue }
            failures.append(
                Failure(
                    path: version.folderPath,
                    message:
                        "version '\(version.name)' is reached through a symbolic link (its folder or its 'contents'); a Core Data bundle holds its own files, so Modelwright follows no link in it: replace the link with the folder or file itself"
                ))
        }
        guard var first = failures.first else { return }
        first.others = Array(failures.dropFirst())
        throw first
    }

    private enum CurrentVersion {
        case missing
        case unnamed
        case unreadable(CoreDataReader.Failure)
        case named(String)

        /// The file name `.xccurrentversion` holds, such as `Model 117.xcdatamodel`.
        var name: String? {
            if case .named(let name) = self { return name }
            return nil
        }
    }

    /// The index of the current version in `versions` (ordered, skipped ones left out), and the
    /// notes on how it was chosen; `named` is the name `.xccurrentversion` holds, less its extension.
    private static func currentIndex(
        of current: CurrentVersion, named: String?, in versions: [Version], skipped: Set<String>, currentFile: String,
        path: String
    ) -> (Int, [Diagnostic]) {
        let newest = versions.count - 1
        let fallback = "the newest version, '\(versions[newest].name)', is current"
        switch current {
        case .missing:
            return (
                newest,
                [
                    Diagnostic(
                        severity: .note, message: "the bundle has no .xccurrentversion; \(fallback)", path: path,
                        location: nil)
                ]
            )
        case .unnamed:
            return (
                newest,
                [
                    Diagnostic(
                        severity: .note, message: ".xccurrentversion names no version; \(fallback)", path: currentFile,
                        location: nil)
                ]
            )
        case .unreadable(let failure):
            return (
                newest,
                [
                    Diagnostic(
                        severity: .warning,
                        message:
                            ".xccurrentversion is not a property list Xcode writes (\(failure.message)); \(fallback)",
                        path: currentFile,
                        location: failure.location.map { SourcePosition(line: $0.line, column: $0.column) })
                ]
            )
        case .named(let file):
            if let named, let index = versions.firstIndex(where: { $0.name == named }) { return (index, []) }
            let why = named.map { skipped.contains($0) } == true ? "which is skipped" : "which is not in the bundle"
            return (
                newest,
                [
                    Diagnostic(
                        severity: .warning, message: ".xccurrentversion names '\(file)', \(why); \(fallback)",
                        path: currentFile, location: nil)
                ]
            )
        }
    }

    /// The largest `.xccurrentversion` read: Xcode writes about 300 bytes.
    private static let maximumCurrentVersionSize = 64 * 1024

    /// `_XCCurrentVersionName` from the `.xccurrentversion` property list, which is read with the
    /// same checked XML reader as the models (a plist's `<!DOCTYPE plist …>` allowed, without an
    /// internal subset); the value is the `<string>` after that `<key>` in the top `<dict>`.
    private static func currentVersionName(at path: String) -> CurrentVersion {
        let bytes: [UInt8]
        do {
            bytes = try ConfinedFolder.readFile(atPath: path, limit: maximumCurrentVersionSize)
        } catch {
            switch error {
            case .cannotOpen: return .missing
            case .cannotRead, .notARegularFile, .symbolicLink, .hardLink:
                return .unreadable(.init(path: path, message: "it cannot be read as a file", location: nil))
            case .tooLarge(let size):
                return .unreadable(
                    .init(
                        path: path, message: "it is \(size) bytes, over the limit of \(maximumCurrentVersionSize)",
                        location: CoreDataLocation(line: 1, column: 1)))
            }
        }
        var open: [String] = []
        var text = ""
        var key: String?
        var name: String?
        do {
            var reader = try XMLReader(bytes: bytes, allowsDocumentType: true, keepsText: true)
            while let event = try reader.next() {
                switch event {
                case .start(let element, _, _):
                    open.append(element)
                    text = ""
                case .text(let more):
                    text += more
                case .end:
                    if open.count == 3, open[0] == "plist", open[1] == "dict" {
                        if open[2] == "key" {
                            key = text
                        } else {
                            if key == "_XCCurrentVersionName", open[2] == "string", name == nil { name = text }
                            key = nil
                        }
                    }
                    open.removeLast()
                    text = ""
                }
            }
        } catch {
            return .unreadable(
                .init(
                    path: path, message: error.message,
                    location: CoreDataLocation(of: error.offset, in: SourceFile(path: path, bytes: bytes))))
        }
        guard let name, !name.isEmpty else { return .unnamed }
        return .named(name)
    }
}

/// Orders version names as people read them: runs of digits compare as numbers, so `Model 2`
/// comes before `Model 10`, and a name comes before its own continuations (`Model` < `Model 2`).
enum NaturalOrder {
    private enum Chunk: Equatable {
        case text(String)
        case number(String)
    }

    /// `names` in natural order, splitting each name into chunks once rather than at every comparison.
    static func sorted(_ names: [String]) -> [String] {
        names.map { (name: $0, chunks: chunks($0)) }.sorted { precedes($0.chunks, $1.chunks, $0.name, $1.name) }
            .map(\.name)
    }

    static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        precedes(chunks(lhs), chunks(rhs), lhs, rhs)
    }

    private static func precedes(_ left: [Chunk], _ right: [Chunk], _ lhs: String, _ rhs: String) -> Bool {
        for (a, b) in zip(left, right) where a != b {
            switch (a, b) {
            case (.number(let x), .number(let y)):
                let x = x.drop { $0 == "0" }
                let y = y.drop { $0 == "0" }
                if x.count != y.count { return x.count < y.count }
                if x != y { return x < y }
            case (.number, .text): return true
            case (.text, .number): return false
            case (.text(let x), .text(let y)): return x < y
            }
        }
        if left.count != right.count { return left.count < right.count }
        return lhs < rhs  // equal as numbers, such as "v02" and "v2": any fixed order will do
    }

    private static func chunks(_ text: String) -> [Chunk] {
        var result: [Chunk] = []
        var current = ""
        var inNumber = false
        for character in text {
            let isDigit = character.isASCII && character.isNumber
            if !current.isEmpty, isDigit != inNumber {
                result.append(inNumber ? .number(current) : .text(current))
                current = ""
            }
            inNumber = isDigit
            current.append(character)
        }
        if !current.isEmpty { result.append(inNumber ? .number(current) : .text(current)) }
        return result
    }
}
