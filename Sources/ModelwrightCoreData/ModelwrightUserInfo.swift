import ModelwrightSchema

/// What a Core Data model cannot hold of a schema, kept in `userInfo` under keys of Modelwright's
/// own, so that exporting a model and importing the bundle again gives the schema back: the doc
/// comments of entities and attributes, an entity's default sort and `@sync`, a `now` default, which enum an
/// attribute holds and its default case, and, in the model's own `userInfo`, the enum
/// declarations and the migration block (custom stages by name, `lossy` lines). Export writes the
/// entries and import reads them back instead of keeping them as `@userInfo`; Core Data itself
/// ignores them.
package enum ModelwrightUserInfo {
    /// The doc comment, its lines joined by line feeds.
    static let doc = "modelwright.doc"
    /// An entity's default sort: Core Data property names, each followed by ` descending` where
    /// larger values come first, separated by `, `.
    static let sort = "modelwright.sort"
    /// An attribute's default that Core Data cannot hold: `now`, or an enum case as `.name` (Core
    /// Data holds its raw value).
    static let defaultValue = "modelwright.default"
    /// The enum an attribute holds, by name; Core Data holds its raw values.
    static let enumType = "modelwright.enum"
    /// An entity's `@sync`: its arguments as written between the parentheses (`unique: merge`), or
    /// empty for a plain `@sync`.
    static let sync = "modelwright.sync"
    /// The arguments export writes for `@sync(unique: …)`, one for each resolution.
    private static let syncArguments = Set(
        EntityGraph.SyncMarking.UniqueResolution.allCases.map { "unique: \($0.rawValue)" })
    /// In the model's `userInfo`: the version's enum declarations, as schema text.
    static let enums = "modelwright.enums"
    /// In the model's `userInfo`: the version's migration block, as schema text.
    static let migration = "modelwright.migration"

    /// One key of a default sort: a Core Data property name and its direction.
    struct SortKey: Equatable {
        var name: String
        var ascending: Bool
    }

    /// What import reads back from a `userInfo`: the entries that are not Modelwright's, and what
    /// Modelwright's held.
    struct Read {
        var kept: [UserInfoEntry] = []
        var doc: [String] = []
        var sort: [SortKey] = []
        /// The arguments of the entity's `@sync`, empty for a plain one; `nil` when it has none.
        var sync: String?
        var isNowDefault = false
        /// The enum the attribute holds, by name.
        var enumName: String?
        /// The attribute's default case, by name, without the dot.
        var enumDefault: String?
        /// The model's enum declarations, as schema text.
        var enums: String?
        /// The model's migration block, as schema text.
        var migration: String?
    }

    /// The entries export adds for a doc comment, a default sort, `@sync` (its arguments) and a
    /// `now` default.
    static func entries(
        doc: [String], sort: [SortKey] = [], sync: String? = nil, isNowDefault: Bool = false,
        enumName: String? = nil, enumDefault: String? = nil
    ) -> [UserInfoEntry] {
        var entries: [UserInfoEntry] = []
        if !doc.isEmpty { entries.append(UserInfoEntry(key: Self.doc, value: doc.joined(separator: "\n"))) }
        if !sort.isEmpty {
            let value = sort.map { $0.name + ($0.ascending ? "" : " descending") }.joined(separator: ", ")
            entries.append(UserInfoEntry(key: Self.sort, value: value))
        }
        if let sync { entries.append(UserInfoEntry(key: Self.sync, value: sync)) }
        if isNowDefault { entries.append(UserInfoEntry(key: defaultValue, value: "now")) }
        if let enumName { entries.append(UserInfoEntry(key: enumType, value: enumName)) }
        if let enumDefault { entries.append(UserInfoEntry(key: defaultValue, value: "." + enumDefault)) }
        return entries
    }

    /// The entries export adds to the model's own `userInfo`: the enum declarations and the
    /// migration block, each as the schema text it was written in.
    static func modelEntries(enums: String, migration: String?) -> [UserInfoEntry] {
        var entries: [UserInfoEntry] = []
        if !enums.isEmpty { entries.append(UserInfoEntry(key: Self.enums, value: enums)) }
        if let migration { entries.append(UserInfoEntry(key: Self.migration, value: migration)) }
        return entries
    }

    /// Splits `entries` into the ones to keep as `@userInfo` and what Modelwright's entries held.
    static func read(_ entries: [UserInfoEntry]) -> Read {
        var read = Read()
        for entry in entries {
            switch entry.key {
            case doc:
                read.doc = entry.value.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            case sort:
                read.sort = entry.value.split(separator: ",").compactMap { key in
                    let words = key.split(separator: " ")
                    guard let name = words.first, words.count <= 2 else { return nil }
                    return SortKey(name: String(name), ascending: words.count == 1 || words[1] != "descending")
                }
            case sync where entry.value.isEmpty || syncArguments.contains(entry.value):
                // Only what export writes: other text stays a `@userInfo` entry, never schema text.
                read.sync = entry.value
            case defaultValue where entry.value == "now":
                read.isNowDefault = true
            case defaultValue where entry.value.hasPrefix("."):
                read.enumDefault = String(entry.value.dropFirst())
            case enumType:
                read.enumName = entry.value
            case enums:
                read.enums = entry.value
            case migration:
                read.migration = entry.value
            default:
                read.kept.append(entry)
            }
        }
        return read
    }
}
