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

    /// Lists the versions of `path`, an `.xcdatamodeld` bundle or a bare `.xcdatamodel`.
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
        let versions = names.filter { $0.hasSuffix(".xcdatamodel") }
            .map { String($0.dropLast(".xcdatamodel".count)) }
            .sorted(by: NaturalOrder.precedes)
            .map { Version(name: $0, contentsPath: url.appendingPathComponent("\($0).xcdatamodel/contents").path) }
        guard !versions.isEmpty else {
            throw Failure(path: path, message: "the bundle holds no '.xcdatamodel' versions")
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

    private enum CurrentVersion {
        case missing
        case unnamed
        case named(String)
    }

    /// `_XCCurrentVersionName` from the `.xccurrentversion` property list.
    private static func currentVersionName(at path: String) -> CurrentVersion {
        guard let data = FileManager.default.contents(atPath: path) else { return .missing }
        guard
            let plist = try? PropertyListSerialization.propertyList(from: data, options: [], format: nil),
            let dictionary = plist as? [String: Any],
            let name = dictionary["_XCCurrentVersionName"] as? String, !name.isEmpty
        else { return .unnamed }
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

    static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        let left = chunks(lhs)
        let right = chunks(rhs)
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
