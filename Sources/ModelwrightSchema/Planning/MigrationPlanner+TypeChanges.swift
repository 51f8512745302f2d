import Modelwright

/// How an attribute's type change is classified (the one conversion rule, as the migrator casts).
extension MigrationPlanner {
    /// Whether a lightweight type change rewrites the stored values (SQLite's CAST) rather than
    /// keeping them as they are.
    package static func rewritesValues(from old: AttributeType, to new: AttributeType) -> Bool {
        guard let old = old.scalar, let new = new.scalar else { return false }
        return old.conversion(to: new)?.rewritesValues ?? false
    }

    /// Whether an enum (an attribute's, or a composite field's) keeps cases by name at other raw
    /// values, which the migrator rewrites though no table changes.
    static func movesEnumCases(from old: AttributeType, to new: AttributeType) -> Bool {
        switch (old, new) {
        case (.enumeration(let before), .enumeration(let after)):
            return before.rawValueChanges(to: after)?.isEmpty == false
        case (.composite(let before), .composite(let after)):
            return after.fields.contains { field in
                before.fields.first { $0.name == field.name }.map { movesEnumCases(from: $0.type, to: field.type) }
                    ?? false
            }
        default:
            return false
        }
    }

    /// How a type change migrates, with a reason for people; `nil` when the stored form is unchanged.
    package static func typeChange(from old: AttributeType, to new: AttributeType) -> (SchemaChange.Kind, String?)? {
        switch (old, new) {
        case _ where old == new: return nil
        case (.enumeration(let before), .enumeration(let after)):
            guard before.rawType == after.rawType else { return (.needsCustomStage, "the raw type changes") }
            // Rows keep their case by name: the migrator rewrites the raw values of kept cases
            // that moved (see `EnumDescription.rawValueChanges(to:)`).
            guard let moves = before.rawValueChanges(to: after) else {
                return (.needsCustomStage, "cases change raw values while others are removed or renamed")
            }
            if !moves.isEmpty {
                let names = Dictionary(
                    before.cases.map { ($0.rawValue, $0.name) }, uniquingKeysWith: { first, _ in first })
                let list = moves.map { "\(names[$0.from] ?? $0.from) \($0.from) → \($0.to)" }
                return (.lightweight, "stored raw values are mapped by case name: " + list.joined(separator: ", "))
            }
            let kept = Set(after.cases.map(\.rawValue))
            let dropped = before.cases.filter { !kept.contains($0.rawValue) }.map(\.name)
            return dropped.isEmpty
                ? nil : (.needsCustomStage, "rows holding \(dropped.joined(separator: ", ")) cannot be read")
        case (.composite(let before), .composite(let after)):
            let beforeFields = Dictionary(before.fields.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            let afterFields = Dictionary(after.fields.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
            if beforeFields.keys.contains(where: { afterFields[$0] == nil }) { return (.lossy, "fields are removed") }
            for (name, field) in afterFields {
                guard let previous = beforeFields[name] else {
                    if !field.isOptional && field.defaultValue == nil {
                        return (.needsDefault, "field \(name) is new and required")
                    }
                    continue
                }
                // An enum field whose cases only move is mapped by the migrator, as an attribute's is.
                if case .enumeration = previous.type, case .enumeration = field.type,
                    (typeChange(from: previous.type, to: field.type)?.0 ?? .lightweight) == .lightweight
                {
                    continue
                }
                if previous.type != field.type { return (.needsCustomStage, "field \(name) changes type") }
                if previous.isOptional, !field.isOptional, field.defaultValue == nil {
                    return (.needsDefault, "field \(name) becomes required")
                }
            }
            return (.lightweight, nil)
        case (.codable, .codable): return (.needsCustomStage, "the JSON must be re-encoded")
        default: break
        }
        // The one conversion rule, the runtime's: the migrator converts by the same facts.
        if let old = old.scalar, let new = new.scalar, let conversion = old.conversion(to: new) {
            return (conversion.isLossless ? .lightweight : .lossy, conversion.reason)
        }
        return (.needsCustomStage, "no lossless conversion")
    }
}
