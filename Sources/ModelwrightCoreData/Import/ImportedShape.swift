/// What an imported version kept, by Core Data name: the next version's renaming identifiers are
/// checked against it, and a rename may only name something that was imported.
struct ImportedShape {
    /// An imported property.
    struct Property {
        var schemaName: String
        /// `elementID`, or the name when there is none: what Core Data matches across versions.
        var renamingID: String
    }

    /// An imported entity.
    struct Entity {
        var coreDataName: String
        var schemaName: String
        var renamingID: String
        var attributes: [String: Property]
        var relationships: [String: Property]
        /// Core Data names by renaming identifier; `nil` where two properties share one.
        var attributeIDs: [String: String?] = [:]
        var relationshipIDs: [String: String?] = [:]

        /// Fills the identifier indexes, so renames are found without scanning every property.
        mutating func index() {
            for (name, property) in attributes {
                attributeIDs[property.renamingID] = attributeIDs[property.renamingID] == nil ? .some(name) : .some(nil)
            }
            for (name, property) in relationships {
                relationshipIDs[property.renamingID] =
                    relationshipIDs[property.renamingID] == nil ? .some(name) : .some(nil)
            }
        }
    }

    /// The entities, by Core Data name.
    var entities: [String: Entity] = [:]
}
