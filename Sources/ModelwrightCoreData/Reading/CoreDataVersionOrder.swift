import ModelwrightSchema

/// The order of a bundle's versions, oldest first, and what decided it.
///
/// A bundle keeps no order of its own. Xcode names each new version by appending a number to the
/// model's name (`Model`, `Model 2`, … `Model 117`), so within one *name family* (the names that
/// differ only after their first digit) natural name order is the history. The tools versions the
/// files record do not overrule it there: developers on different Xcodes make versions in turn
/// (WooCommerce's `Model 43` was saved by build 17192 after `Model 42` by 17709), and re-saving an
/// old version raises its build.
///
/// When the names split into several families, as when an app renamed its model midway, names say
/// nothing about which family came first. The families are then ordered by the Xcode build that
/// last saved each version (the root element's `lastSavedToolsVersion`): one family goes before
/// another when none of its versions was saved by a later build than any of the other's, and not
/// all by the same build. When that does not decide, puts Core Data's current version anywhere
/// but in the last family, or makes a renaming identifier (`elementID`) point backwards where one
/// family meets the next, there is no order to trust and the user must state one.
package struct CoreDataVersionOrder: Sendable, Equatable {
    /// What decided the order.
    package enum Basis: Sendable, Equatable {
        /// Natural name order, all versions being one name family.
        case names
        /// Name families ordered by the Xcode builds that saved them.
        case savedToolsVersions
        /// The order the user stated (`--version-order`).
        case stated
    }

    /// The version names, oldest first.
    package var names: [String]
    /// What decided the order.
    package var basis: Basis
    /// The names in natural order, as names alone would put them.
    package var nameOrder: [String]

    /// One line saying the order and why, such as
    /// `version order: A, A 2, B v1.4 (by saved tools version; names alone would put 'B v1.4' first)`.
    package var summary: String {
        let list = names.joined(separator: ", ")
        switch basis {
        case .names:
            return "version order: \(Self.abbreviated(names)) (by name)"
        case .stated:
            return "version order: \(list) (as stated by --version-order)"
        case .savedToolsVersions:
            guard names != nameOrder else {
                return "version order: \(list) (by name; the saved tools versions agree)"
            }
            return "version order: \(list) (by saved tools version; names alone would put "
                + "'\(nameOrder.first ?? "")' first and '\(nameOrder.last ?? "")' last)"
        }
    }

    /// `names` joined with commas; a long list keeps its first and last three (used for natural
    /// order only, which the progress lines repeat, so that WooCommerce's 117 names take one line).
    private static func abbreviated(_ names: [String]) -> String {
        guard names.count > 10 else { return names.joined(separator: ", ") }
        return (names.prefix(3) + ["… (\(names.count - 6) more)"] + names.suffix(3)).joined(separator: ", ")
    }
}

extension CoreDataVersionOrder {
    /// One version as the ordering sees it: its name and the Xcode build that last saved it.
    struct Candidate: Sendable, Equatable {
        /// The version's name.
        var name: String
        /// Its `lastSavedToolsVersion`; `nil` when the file records none or cannot be read.
        var toolsVersion: ToolsVersion?
    }

    /// What the evidence decided.
    enum Decision: Sendable, Equatable {
        /// The names oldest first, and what decided.
        case ordered([String], Basis)
        /// No order can be trusted, and why, in words that end where the option can be named.
        case ambiguous(String)
    }

    /// Orders `candidates`, given in natural name order; `current` is the version
    /// `.xccurrentversion` names, if any. Families need tools versions only when there are several.
    static func decide(_ candidates: [Candidate], current: String?) -> Decision {
        let families = Family.split(candidates)
        guard families.count > 1 else { return .ordered(candidates.map(\.name), .names) }
        if let silent = candidates.first(where: { $0.toolsVersion == nil }) {
            return .ambiguous(
                "the versions have \(families.count) different names (\(Family.list(families))) and version "
                    + "'\(silent.name)' records no lastSavedToolsVersion to tell which came first")
        }
        let sorted = families.sorted { ($0.oldest, $0.newest, $0.key) < ($1.oldest, $1.newest, $1.key) }
        for (earlier, later) in zip(sorted, sorted.dropFirst()) where !earlier.precedes(later) {
            return .ambiguous(
                "the versions have \(families.count) different names and the Xcode builds that saved them overlap: "
                    + "\(earlier.described) and \(later.described), so neither can be put first")
        }
        if let current, let last = sorted.last, !last.members.contains(current) {
            return .ambiguous(
                "the Xcode builds that saved the versions put \(last.described) last, but .xccurrentversion "
                    + "names '\(current)' as the current version")
        }
        return .ordered(sorted.flatMap(\.members), .savedToolsVersions)
    }

    /// The versions whose names differ only from their first digit on, in natural order.
    struct Family: Sendable {
        /// The shared start of the names, such as `Model` for `Model 2` and `Model v3.1`.
        var key: String
        /// The names, in natural order.
        var members: [String]
        /// The oldest and newest build that saved a member (only read when every member has one).
        var oldest: ToolsVersion
        var newest: ToolsVersion

        /// Whether every member was saved by a build no later than any of `other`'s, and the two
        /// families were not all saved by one build (which would say nothing).
        func precedes(_ other: Family) -> Bool {
            newest <= other.oldest && oldest < other.newest
        }

        /// `'A' … 'A 5' (saved by Xcode builds 14135–15400)`.
        var described: String {
            let names = members.count == 1 ? "'\(members[0])'" : "'\(members[0])' … '\(members[members.count - 1])'"
            let builds = oldest == newest ? "build \(oldest)" : "builds \(oldest)–\(newest)"
            return "\(names) (saved by Xcode \(builds))"
        }

        /// The families of `candidates`, in the order of their first member.
        static func split(_ candidates: [Candidate]) -> [Family] {
            var families: [Family] = []
            for candidate in candidates {
                let key = Self.key(of: candidate.name)
                let build = candidate.toolsVersion ?? ToolsVersion.unknown
                if let index = families.firstIndex(where: { $0.key == key }) {
                    families[index].members.append(candidate.name)
                    families[index].oldest = min(families[index].oldest, build)
                    families[index].newest = max(families[index].newest, build)
                } else {
                    families.append(Family(key: key, members: [candidate.name], oldest: build, newest: build))
                }
            }
            return families
        }

        /// `'A' (5 versions), 'B' (8 versions)`.
        static func list(_ families: [Family]) -> String {
            families.map { "'\($0.members[0])' (\($0.members.count) version\($0.members.count == 1 ? "" : "s"))" }
                .joined(separator: ", ")
        }

        /// The name up to its first digit, without trailing separators or a version mark:
        /// `Model 2`, `Model_v3` and `Model.V10` are all `Model`; `SampleModel3_v2` is `SampleModel`.
        static func key(of name: String) -> String {
            var base = Substring(name.prefix { !($0.isASCII && $0.isNumber) })
            base = trimmed(base)
            if let last = base.last, last == "v" || last == "V" {
                let rest = base.dropLast()
                if let before = rest.last, separators.contains(before) || (last == "V" && before.isLowercase) {
                    base = trimmed(rest)
                }
            }
            return String(base)
        }

        private static let separators: Set<Character> = [" ", "_", "-", "."]

        private static func trimmed(_ text: Substring) -> Substring {
            var text = text
            while let last = text.last, separators.contains(last) { text = text.dropLast() }
            return text
        }
    }
}

/// An Xcode build number as a model file records it: `21754`, or with a fraction, `14490.99`.
/// Parts compare as numbers, so `14492.1` is later than `14490.99`.
struct ToolsVersion: Sendable, Comparable, CustomStringConvertible {
    /// The dot-separated parts.
    var parts: [Int]
    /// The text as written.
    var description: String

    /// A placeholder for a version that records no build; never compared once a family lacks one.
    static let unknown = ToolsVersion(parts: [], description: "?")

    /// Reads `text`; `nil` unless it is one to four dot-separated runs of at most nine digits.
    init?(_ text: String) {
        let pieces = text.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...4).contains(pieces.count) else { return nil }
        var parts: [Int] = []
        for piece in pieces {
            guard (1...9).contains(piece.count), piece.allSatisfy({ $0.isASCII && $0.isNumber }),
                let number = Int(piece)
            else { return nil }
            parts.append(number)
        }
        self.init(parts: parts, description: text)
    }

    private init(parts: [Int], description: String) {
        self.parts = parts
        self.description = description
    }

    static func < (lhs: ToolsVersion, rhs: ToolsVersion) -> Bool {
        for index in 0..<max(lhs.parts.count, rhs.parts.count) {
            let left = index < lhs.parts.count ? lhs.parts[index] : 0
            let right = index < rhs.parts.count ? rhs.parts[index] : 0
            if left != right { return left < right }
        }
        return false
    }

    static func == (lhs: ToolsVersion, rhs: ToolsVersion) -> Bool { !(lhs < rhs) && !(rhs < lhs) }
}

extension CoreDataVersionOrder {
    /// Why the renaming identifiers contradict `earlier` coming just before `later`, if they do:
    /// an entity or attribute of `earlier` that was renamed (its `elementID` is its old name)
    /// while `later` still has the old name and not the new one, which reads as the rename
    /// happening in the other direction.
    static func renameContradiction(
        earlier: (name: String, model: CoreDataModel), later: (name: String, model: CoreDataModel)
    ) -> String? {
        let laterEntities = Dictionary(
            later.model.entities.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for entity in earlier.model.entities {
            if let old = entity.elementID, old != entity.name, laterEntities[old] != nil,
                laterEntities[entity.name] == nil
            {
                return "'\(earlier.name)' has entity '\(entity.name)' renamed from '\(old)' (elementID), "
                    + "but '\(later.name)', which the builds put after it, still has '\(old)'"
            }
            guard let counterpart = laterEntities[entity.name] else { continue }
            let laterAttributes = Set(counterpart.attributes.map(\.name))
            for attribute in entity.attributes {
                if let old = attribute.elementID, old != attribute.name, laterAttributes.contains(old),
                    !laterAttributes.contains(attribute.name)
                {
                    return "'\(earlier.name)' has attribute '\(entity.name).\(attribute.name)' renamed from "
                        + "'\(old)' (elementID), but '\(later.name)', which the builds put after it, still has '\(old)'"
                }
            }
        }
        return nil
    }
}
