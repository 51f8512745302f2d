import ModelwrightSchema

/// Respells the key paths of a predicate's text, for the names the schema and Core Data spell
/// differently (`id` is `id_` in the schema): the importer turns Core Data names into schema
/// names, the exporter turns them back.
enum PredicateKeyPaths {
    /// `text` (whose `predicate` has ranges that are offsets into it) with each key path name
    /// respelled. `lookup(name, entity)` gives a property's new spelling and, for a relationship,
    /// the entity it leads to; a name it does not know ends the walk, unchanged.
    static func respelled(
        _ text: String, _ predicate: AST.Predicate, from entity: String,
        lookup: (_ name: String, _ entity: String) -> (name: String, destination: String?)?
    ) -> String {
        var replacements: [(range: SourceRange, name: String)] = []
        func visit(_ predicate: AST.Predicate) {
            switch predicate {
            case .constant: break
            case .not(let operand): visit(operand)
            case .and(let operands), .or(let operands): operands.forEach(visit)
            case .comparison(let comparison):
                guard case .keyPath(let names) = comparison.left else { return }
                var current: String? = entity
                for name in names where name.text != "@count" {
                    guard let owner = current, let found = lookup(name.text, owner) else { break }
                    if found.name != name.text { replacements.append((name.range, found.name)) }
                    current = found.destination
                }
            }
        }
        visit(predicate)
        guard !replacements.isEmpty else { return text }
        var bytes = Array(text.utf8)
        for replacement in replacements.sorted(by: { $0.range.start > $1.range.start }) {
            bytes.replaceSubrange(replacement.range.start..<replacement.range.end, with: Array(replacement.name.utf8))
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
