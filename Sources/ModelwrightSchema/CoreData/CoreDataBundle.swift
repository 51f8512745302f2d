import Foundation

/// The versions of a Core Data model on disk: every `*.xcdatamodel` of an `.xcdatamodeld` bundle
/// in version order, and which one is current; or a bare `.xcdatamodel`, which is one version.
///
/// Version order is the natural order of the version names (`Model` < `Model 2` < `Model 10`),
/// because Xcode names new versions by appending a number and the bundle keeps no other order.
/// The current version is the one `.xccurrentversion` names; when that file is missing, holds an
/// empty dictionary or names a version the bundle lacks, the newest version is current.
public struct CoreDataBundle: Sendable {
    /// One `*.xcdatamodel` folder.
    public struct Version: Sendable, Equatable {
        /// The version's name: the folder's name without `.xcdatamodel`, such as `Model 37`.
        public var name: String
        /// The path of its `contents` file.
        public var contentsPath: String
    }

    /// The bundle or bare version folder as given.
    public var path: String
    /// The bundle's name without its extension, such as `WooCommerce`.
    public var name: String
    /// Every version, oldest first.
    public var versions: [Version]
    /// The index in ``versions`` of the current version.
    public var currentIndex: Int
    /// What was odd about the bundle: no or an unusable `.xccurrentversion`.
    public var notes: [Diagnostic]

    /// Why a bundle could not be listed.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The path given.
        public var path: String
        /// What is wrong.
        public var message: String

        public var description: String { "\(path): error: \(message)" }
    }

    /// The most versions a bundle may hold: WooCommerce, after eight years of releases, has 117.
    public static let maximumVersionCount = 1000

    /// Lists the versions of `path`, an `.xcdatamodeld` bundle or a bare `.xcdatamodel`.
    ///
    /// A version whose `contents` resolves, through symbolic links, to a file outside the bundle
    /// is refused: a bundle from elsewhere must not make the tools read the user's other files.
    public static func open(path: String) throws(Failure) -> CoreDataBundle {
        let trimmed = path.hasSuffix("/") && path.count > 1 ? String(path.dropLast()) : path
        let url = URL(fileURLWithPath: trimmed)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: trimmed, isDirectory: &isDirectory) else {
            throw Failure(path: path, message: "no such file or folder")
        }
        let base = url.deletingPathExtension().lastPathComponent
        switch url.pathExtension {
        case "xcdatamodel":
            let contents = isDirectory.boolValue ? url.appendingPathComponent("contents").path : trimmed
            guard FileManager.default.fileExists(atPath: contents) else {
                throw Failure(path: path, message: "the model has no 'contents' file")
            }
            if isDirectory.boolValue { try checkInside(contents, of: trimmed, path: path) }
            return CoreDataBundle(
                path: path, name: base, versions: [Version(name: base, contentsPath: contents)], currentIndex: 0,
                notes: [])
        case "xcdatamodeld":
            guard isDirectory.boolValue else { throw Failure(path: path, message: "an .xcdatamodeld is a folder") }
        default:
            throw Failure(path: path, message: "expected an '.xcdatamodeld' bundle or an '.xcdatamodel' folder")
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: trimmed)
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
        let versions = NaturalOrder.sorted(versionNames).map {
            Version(name: $0, contentsPath: url.appendingPathComponent("\($0).xcdatamodel/contents").path)
        }
        guard !versions.isEmpty else {
            throw Failure(path: path, message: "the bundle holds no '.xcdatamodel' versions")
        }
        for version in versions {
            try checkInside(version.contentsPath, of: trimmed, path: path)
        }
        var notes: [Diagnostic] = []
        let currentFile = url.appendingPathComponent(".xccurrentversion").path
        var currentIndex = versions.count - 1
        switch currentVersionName(at: currentFile) {
        case .missing:
            notes.append(
                Diagnostic(
                    severity: .note,
                    message:
                        "the bundle has no .xccurrentversion; the newest version, '\(versions[currentIndex].name)', is current",
                    path: path, location: nil))
        case .unnamed:
            notes.append(
                Diagnostic(
                    severity: .note,
                    message:
                        ".xccurrentversion names no version; the newest version, '\(versions[currentIndex].name)', is current",
                    path: currentFile, location: nil))
        case .unreadable(let failure):
            notes.append(
                Diagnostic(
                    severity: .warning,
                    message:
                        ".xccurrentversion is not a property list Xcode writes (\(failure.message)); the newest version, '\(versions[currentIndex].name)', is current",
                    path: currentFile,
                    location: failure.location.map { SourcePosition(line: $0.line, column: $0.column) }))
        case .named(let file):
            let name = file.hasSuffix(".xcdatamodel") ? String(file.dropLast(".xcdatamodel".count)) : file
            if let index = versions.firstIndex(where: { $0.name == name }) {
                currentIndex = index
            } else {
                notes.append(
                    Diagnostic(
                        severity: .warning,
                        message:
                            ".xccurrentversion names '\(file)', which is not in the bundle; the newest version, '\(versions[currentIndex].name)', is current",
                        path: currentFile, location: nil))
            }
        }
        return CoreDataBundle(path: path, name: base, versions: versions, currentIndex: currentIndex, notes: notes)
    }

    /// Throws when `file` exists and its real path, symbolic links resolved, is outside `bundle`'s.
    private static func checkInside(_ file: String, of bundle: String, path: String) throws(Failure) {
        guard let real = realPath(file) else { return }  // missing: reading it reports that
        guard let root = realPath(bundle), real.hasPrefix(root.hasSuffix("/") ? root : root + "/") else {
            throw Failure(
                path: path,
                message:
                    "'\(file)' is a symbolic link to a file outside the bundle; a Core Data bundle holds its own files")
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    private enum CurrentVersion {
        case missing
        case unnamed
        case unreadable(CoreDataReader.Failure)
        case named(String)
    }

    /// The largest `.xccurrentversion` read: Xcode writes about 300 bytes.
    private static let maximumCurrentVersionSize = 64 * 1024

    /// `_XCCurrentVersionName` from the `.xccurrentversion` property list, which is read with the
    /// same checked XML reader as the models (a plist's `<!DOCTYPE plist …>` allowed, without an
    /// internal subset); the value is the `<string>` after that `<key>` in the top `<dict>`.
    private static func currentVersionName(at path: String) -> CurrentVersion {
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path, limit: maximumCurrentVersionSize)
        } catch {
            switch error {
            case .cannotOpen: return .missing
            case .cannotRead, .notARegularFile:
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
