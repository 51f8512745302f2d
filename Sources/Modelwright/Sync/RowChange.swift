import Foundation

/// Which row a change is about: its entity (the concrete one) and its client-made ID.
public struct RowKey: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The name of the row's entity.
    public let entity: String
    /// The row's ID (a record's ``RecordID/uuid``).
    public let id: UUID

    /// The row `id` of `entity`.
    public init(entity: String, id: UUID) {
        self.entity = entity
        self.id = id
    }

    /// Orders by entity name, then ID: the order messages list rows in.
    public static func < (lhs: RowKey, rhs: RowKey) -> Bool {
        lhs.entity != rhs.entity ? lhs.entity < rhs.entity : lhs.id.precedes(rhs.id)
    }

    /// `Entity/ID`, for logs.
    public var description: String { "\(entity)/\(id.uuidString)" }
}

/// One link of a to-many relationship that is not the inverse of a to-one: the relationship's
/// name and the target row's ID.
public struct LinkKey: Sendable, Hashable, Comparable, Codable {
    /// The relationship's name.
    public let relationship: String
    /// The ID of the row linked to.
    public let target: UUID

    /// The link from a row to `target` through `relationship`.
    public init(relationship: String, target: UUID) {
        self.relationship = relationship
        self.target = target
    }

    /// Orders by relationship, then target.
    public static func < (lhs: LinkKey, rhs: LinkKey) -> Bool {
        lhs.relationship != rhs.relationship
            ? lhs.relationship < rhs.relationship : lhs.target.precedes(rhs.target)
    }
}

/// The latest add and the latest remove of one link: the link is present when it was added
/// after it was last removed (a last-writer-wins element set).
public struct LinkStamps: Sendable, Hashable, Codable {
    /// When the link was last added.
    public let added: HybridTimestamp?
    /// When the link was last removed.
    public let removed: HybridTimestamp?

    /// A link added at `added` and removed at `removed`.
    public init(added: HybridTimestamp?, removed: HybridTimestamp?) {
        self.added = added
        self.removed = removed
    }

    /// Whether the link is present: added, and not removed since.
    public var isPresent: Bool {
        guard let added else { return false }
        return removed.map { $0 < added } ?? true
    }

    /// Both stamps at their latest.
    func merged(with other: LinkStamps) -> LinkStamps {
        LinkStamps(added: latest(added, other.added), removed: latest(removed, other.removed))
    }
}

/// The later of two optional timestamps.
func latest(_ first: HybridTimestamp?, _ second: HybridTimestamp?) -> HybridTimestamp? {
    guard let first else { return second }
    guard let second else { return first }
    return max(first, second)
}

/// What sync knows of one row: the record of every change made to it, reduced to the latest that
/// matters. A single write is a `RowChange` too (``insert(_:values:at:)``, ``update(_:values:at:)``,
/// ``delete(_:at:)``, ``link(_:_:to:at:)``, ``unlink(_:_:from:at:)``), and two changes of one row
/// combine with ``merged(with:)``, which is commutative, associative and idempotent: replicas that
/// have received the same changes, in any order and any number of times, hold the same row.
///
/// The rules:
///
/// | Part | Kept | Wins |
/// |---|---|---|
/// | each attribute (to-one relationships included) | value and timestamp | the later timestamp |
/// | each to-many link (relationship, target) | latest add, latest remove | present if added after its last removal |
/// | creation | latest insert timestamp | — |
/// | deletion (tombstone) | latest delete timestamp | delete wins over every update, whatever its stamp |
///
/// A row is alive when it was inserted and not deleted since: an update never brings a deleted
/// row back, even one stamped after the delete (a device that had not seen the delete made it).
/// Only an insert of the same ID stamped after the tombstone (an undo of the delete) resurrects
/// it; the values it carries are stamped then, so they win over every write stamped before it.
public struct RowChange: Sendable, Hashable {
    /// The row.
    public let key: RowKey
    /// When the row was last inserted (or resurrected).
    public private(set) var inserted: HybridTimestamp?
    /// When the row was last deleted: its tombstone.
    public private(set) var deleted: HybridTimestamp?
    /// The latest write of each attribute, by attribute name (a to-one relationship by its name,
    /// a composite's field as `attribute.field`).
    public private(set) var attributes: [String: StampedValue]
    /// The add and remove stamps of each to-many link.
    public private(set) var links: [LinkKey: LinkStamps]

    /// A change with the given parts.
    public init(
        key: RowKey,
        inserted: HybridTimestamp? = nil,
        deleted: HybridTimestamp? = nil,
        attributes: [String: StampedValue] = [:],
        links: [LinkKey: LinkStamps] = [:]
    ) {
        self.key = key
        self.inserted = inserted
        self.deleted = deleted
        self.attributes = attributes
        self.links = links
    }

    /// The change without the attributes named in `hidden`: what a device is sent of a row whose
    /// to-one links there point at rows it may not see (see ``SyncServer/Scope``).
    func hiding(_ hidden: Set<String>) -> RowChange {
        guard !hidden.isEmpty else { return self }
        var copy = self
        copy.attributes = attributes.filter { !hidden.contains($0.key) }
        return copy
    }

    /// The change without its to-many links to `target` (those it adds: a removal is kept, the
    /// server accepts it whoever may see `target`), nor the values of its to-one links `toOnes`
    /// (attribute keys) that hold `target`: what a device keeps of a pending change once `target`
    /// left its sight.
    func withoutLinks(to target: UUID, toOnes: Set<String>) -> RowChange {
        var copy = self
        copy.links = links.filter { $0.key.target != target || !$0.value.isPresent }
        copy.attributes = attributes.filter { !toOnes.contains($0.key) || $0.value.value != .uuid(target) }
        return copy
    }

    /// The insert of row `key` with `values`, all written at `stamp`.
    public static func insert(_ key: RowKey, values: [String: SyncValue], at stamp: HybridTimestamp) -> RowChange {
        RowChange(key: key, inserted: stamp, attributes: values.mapValues { StampedValue($0, at: stamp) })
    }

    /// An update of row `key`'s `values`, written at `stamp`.
    public static func update(_ key: RowKey, values: [String: SyncValue], at stamp: HybridTimestamp) -> RowChange {
        RowChange(key: key, attributes: values.mapValues { StampedValue($0, at: stamp) })
    }

    /// The delete of row `key` at `stamp`.
    public static func delete(_ key: RowKey, at stamp: HybridTimestamp) -> RowChange {
        RowChange(key: key, deleted: stamp)
    }

    /// Adding `target` to row `key`'s to-many `relationship` at `stamp`.
    public static func link(
        _ key: RowKey, _ relationship: String, to target: UUID, at stamp: HybridTimestamp
    ) -> RowChange {
        RowChange(
            key: key,
            links: [LinkKey(relationship: relationship, target: target): LinkStamps(added: stamp, removed: nil)])
    }

    /// Removing `target` from row `key`'s to-many `relationship` at `stamp`.
    public static func unlink(
        _ key: RowKey, _ relationship: String, from target: UUID, at stamp: HybridTimestamp
    ) -> RowChange {
        RowChange(
            key: key,
            links: [LinkKey(relationship: relationship, target: target): LinkStamps(added: nil, removed: stamp)])
    }

    /// Whether the row exists: inserted, and not deleted since its latest insert.
    public var isAlive: Bool {
        guard let inserted else { return false }
        return deleted.map { $0 < inserted } ?? true
    }

    /// The row's current values, by attribute name.
    public var values: [String: SyncValue] { attributes.mapValues(\.value) }

    /// The targets of the row's to-many links that are present, by relationship.
    public var linkedTargets: [String: Set<UUID>] {
        var targets: [String: Set<UUID>] = [:]
        for (link, stamps) in links where stamps.isPresent {
            targets[link.relationship, default: []].insert(link.target)
        }
        return targets
    }

    /// The latest timestamp anywhere in the change.
    public var latestStamp: HybridTimestamp? {
        var newest = latest(inserted, deleted)
        for value in attributes.values { newest = latest(newest, value.stamp) }
        for stamps in links.values { newest = latest(newest, latest(stamps.added, stamps.removed)) }
        return newest
    }

    /// The stamps of this change's parts written by `node` after `since` that `other` (the same
    /// row) holds a later write of by the same node, or a write under the same stamp with another
    /// outcome: for each attribute its value, for each link and for the row's existence their
    /// latest add or remove. A node's clock only moves on, so such a write was made after this
    /// one and then lost by the node.
    func ownStamps(shadowedBy other: RowChange, node: SyncNodeID, since: HybridTimestamp) -> Set<HybridTimestamp> {
        func isShadowed(_ mine: HybridTimestamp?, by theirs: HybridTimestamp?, differ: Bool) -> Bool {
            guard let mine, let theirs, mine.node == node, theirs.node == node,
                (mine.milliseconds, mine.counter) > (since.milliseconds, since.counter)
            else { return false }
            return (theirs.milliseconds, theirs.counter) > (mine.milliseconds, mine.counter)
                || (theirs == mine && differ)
        }
        var result: Set<HybridTimestamp> = []
        for (name, mine) in attributes {
            if let theirs = other.attributes[name],
                isShadowed(mine.stamp, by: theirs.stamp, differ: mine.value != theirs.value)
            {
                result.insert(mine.stamp)
            }
        }
        for (link, mine) in links {
            guard let theirs = other.links[link] else { continue }
            let latestMine = latest(mine.added, mine.removed)
            if isShadowed(
                latestMine, by: latest(theirs.added, theirs.removed), differ: mine.isPresent != theirs.isPresent),
                let latestMine
            {
                result.insert(latestMine)
            }
        }
        let existence = latest(inserted, deleted)
        if isShadowed(existence, by: latest(other.inserted, other.deleted), differ: isAlive != other.isAlive),
            let existence
        {
            result.insert(existence)
        }
        return result
    }

    /// The change with each timestamp in `renewed` replaced by its new one, values kept.
    func restamped(_ renewed: [HybridTimestamp: HybridTimestamp]) -> RowChange {
        func renew(_ stamp: HybridTimestamp?) -> HybridTimestamp? { stamp.map { renewed[$0] ?? $0 } }
        return RowChange(
            key: key, inserted: renew(inserted), deleted: renew(deleted),
            attributes: attributes.mapValues { StampedValue($0.value, at: renewed[$0.stamp] ?? $0.stamp) },
            links: links.mapValues { LinkStamps(added: renew($0.added), removed: renew($0.removed)) })
    }

    /// Both changes of the same row combined: every part at its latest. The result does not depend
    /// on the order of the two, on grouping, or on repeats. Changes of two different rows are not
    /// combined: `self` is returned (``ChangeSet`` never asks).
    public func merged(with other: RowChange) -> RowChange {
        var result = self
        result.merge(other)
        return result
    }

    /// Combines `other`, a change of the same row, into this one (see ``merged(with:)``).
    public mutating func merge(_ other: RowChange) {
        guard other.key == key else { return }
        inserted = latest(inserted, other.inserted)
        deleted = latest(deleted, other.deleted)
        attributes.merge(other.attributes) { $0.latest($1) }
        links.merge(other.links) { $0.merged(with: $1) }
    }
}

// MARK: - Codable

extension RowChange: Codable {
    /// Decodes a change written as `[entity, id, inserted, deleted, attributes, links]`, each
    /// attribute as `[name, value, stamp]` and each link as `[relationship, target, added, removed]`.
    /// An attribute or a link listed twice is merged by stamp, as a repeated change would be; a
    /// name outside printable ASCII (schema names are ASCII) is refused with
    /// ``SyncError/malformedMessage(field:reason:)``, so names never differ by normalization alone.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        let entity = try SyncProtocol.checkedName(try container.decode(String.self), at: decoder.codingPath, "entity")
        key = RowKey(entity: entity, id: try container.decode(UUID.self))
        inserted = try container.decodeNil() ? nil : try container.decode(HybridTimestamp.self)
        deleted = try container.decodeNil() ? nil : try container.decode(HybridTimestamp.self)
        attributes = [:]
        var attributeList = try container.nestedUnkeyedContainer()
        while !attributeList.isAtEnd {
            var entry = try attributeList.nestedUnkeyedContainer()
            let name = try SyncProtocol.checkedName(
                try entry.decode(String.self), at: decoder.codingPath, "attribute")
            let written = StampedValue(try entry.decode(SyncValue.self), at: try entry.decode(HybridTimestamp.self))
            try Self.expectEnd(of: entry, "an attribute is [name, value, stamp]")
            attributes[name] = attributes[name]?.latest(written) ?? written
        }
        links = [:]
        var linkList = try container.nestedUnkeyedContainer()
        while !linkList.isAtEnd {
            var entry = try linkList.nestedUnkeyedContainer()
            let relationship = try SyncProtocol.checkedName(
                try entry.decode(String.self), at: decoder.codingPath, "relationship")
            let target = try entry.decode(UUID.self)
            let added = try entry.decodeNil() ? nil : try entry.decode(HybridTimestamp.self)
            let removed = try entry.decodeNil() ? nil : try entry.decode(HybridTimestamp.self)
            try Self.expectEnd(of: entry, "a link is [relationship, target, added, removed]")
            let stamps = LinkStamps(added: added, removed: removed)
            let linkKey = LinkKey(relationship: relationship, target: target)
            links[linkKey] = links[linkKey]?.merged(with: stamps) ?? stamps
        }
        try Self.expectEnd(of: container, "a change is [entity, id, inserted, deleted, attributes, links]")
    }

    /// Encodes the change as arrays only, attributes sorted by name and links by ``LinkKey``: an
    /// object's key order is the encoder's choice (Foundation's varies from run to run unless
    /// `.sortedKeys` is set), an array's is not, so equal changes encode to equal bytes with any
    /// `JSONEncoder`.
    /// A name that is not a schema name (see ``SyncProtocol``) is refused with an `EncodingError`,
    /// as the receiver would refuse it.
    public func encode(to encoder: any Encoder) throws {
        let names = [key.entity] + attributes.keys + links.keys.map(\.relationship)
        if let bad = names.first(where: { !SyncProtocol.isValidName($0) }) {
            throw EncodingError.invalidValue(
                bad,
                EncodingError.Context(
                    codingPath: encoder.codingPath,
                    debugDescription:
                        "\(bad.debugDescription) is not a schema name (printable ASCII, not empty): name entities, attributes and relationships as the schema does"
                ))
        }
        var container = encoder.unkeyedContainer()
        try container.encode(key.entity)
        try container.encode(key.id)
        if let inserted { try container.encode(inserted) } else { try container.encodeNil() }
        if let deleted { try container.encode(deleted) } else { try container.encodeNil() }
        var attributeList = container.nestedUnkeyedContainer()
        for name in attributes.keys.sorted(by: SyncProtocol.namePrecedes) {
            guard let written = attributes[name] else { continue }
            var entry = attributeList.nestedUnkeyedContainer()
            try entry.encode(name)
            try entry.encode(written.value)
            try entry.encode(written.stamp)
        }
        var linkList = container.nestedUnkeyedContainer()
        for (link, stamps) in links.sorted(by: { $0.key < $1.key }) {
            var entry = linkList.nestedUnkeyedContainer()
            try entry.encode(link.relationship)
            try entry.encode(link.target)
            if let added = stamps.added { try entry.encode(added) } else { try entry.encodeNil() }
            if let removed = stamps.removed { try entry.encode(removed) } else { try entry.encodeNil() }
        }
    }

    /// Throws unless `container` has no element left: an array longer than its shape is refused.
    private static func expectEnd(of container: any UnkeyedDecodingContainer, _ shape: String) throws {
        guard container.isAtEnd else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: container.codingPath, debugDescription: shape))
        }
    }
}
