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
    private enum CodingKeys: String, CodingKey {
        case entity, id, inserted, deleted, attributes, links
    }

    /// One link as messages carry it.
    private struct EncodedLink: Codable {
        var relationship: String
        var target: UUID
        var added: HybridTimestamp?
        var removed: HybridTimestamp?
    }

    /// Decodes a change; a link listed twice is merged, as a repeated change would be.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        key = RowKey(
            entity: try container.decode(String.self, forKey: .entity),
            id: try container.decode(UUID.self, forKey: .id))
        inserted = try container.decodeIfPresent(HybridTimestamp.self, forKey: .inserted)
        deleted = try container.decodeIfPresent(HybridTimestamp.self, forKey: .deleted)
        attributes = try container.decodeIfPresent([String: StampedValue].self, forKey: .attributes) ?? [:]
        links = [:]
        for link in try container.decodeIfPresent([EncodedLink].self, forKey: .links) ?? [] {
            let stamps = LinkStamps(added: link.added, removed: link.removed)
            let linkKey = LinkKey(relationship: link.relationship, target: link.target)
            links[linkKey] = links[linkKey]?.merged(with: stamps) ?? stamps
        }
    }

    /// Encodes the change with its links in a fixed order, so equal changes encode to equal bytes
    /// (with `JSONEncoder`'s `.sortedKeys`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(key.entity, forKey: .entity)
        try container.encode(key.id, forKey: .id)
        try container.encodeIfPresent(inserted, forKey: .inserted)
        try container.encodeIfPresent(deleted, forKey: .deleted)
        if !attributes.isEmpty { try container.encode(attributes, forKey: .attributes) }
        if !links.isEmpty {
            let encoded = links.sorted { $0.key < $1.key }.map {
                EncodedLink(
                    relationship: $0.key.relationship, target: $0.key.target, added: $0.value.added,
                    removed: $0.value.removed)
            }
            try container.encode(encoded, forKey: .links)
        }
    }
}
