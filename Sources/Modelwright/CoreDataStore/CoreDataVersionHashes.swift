import Foundation

/// Core Data's entity version hashes, computed from a ``CoreDataStoreModel/Version`` by the recipe
/// `NSEntityDescription.versionHash` follows (see `coredata-store-format.md`, §9): what a store's
/// `NSStoreModelVersionHashes` are matched against to find the version that wrote it.
///
/// Strings are UTF-8 without a terminator, integers little-endian, every digest SHA-256.
enum CoreDataVersionHashes {
    /// Each entity's 32-byte version hash, by Core Data entity name.
    static func hashes(of version: CoreDataStoreModel.Version) -> [String: Data] {
        var entities: [String: CoreDataStoreModel.Entity] = [:]
        for entity in version.entities where entities[entity.name] == nil { entities[entity.name] = entity }
        var memo: [String: [UInt8]] = [:]
        var result: [String: Data] = [:]
        for name in entities.keys {
            var visiting: Set<String> = []
            result[name] = Data(entityHash(name, entities, &memo, &visiting))
        }
        return result
    }

    /// `NSStoreModelVersionChecksumKey`: base64 of the SHA-256 of every entity hash, in entity-name order.
    static func checksum(of hashes: [String: Data]) -> String {
        var bytes: [UInt8] = []
        for name in hashes.keys.sorted(by: coreDataOrder) { bytes += hashes[name] ?? Data() }
        return Data(SHA256.digest(of: bytes)).base64EncodedString()
    }

    /// `NSStoreModelVersionHashesDigest`: base64 of the SHA-512 of every entity's name (UTF-8)
    /// followed by its hash, in entity-name order. Checked against a store written by Core Data.
    static func digest(of hashes: [String: Data]) -> String {
        var bytes: [UInt8] = []
        for name in hashes.keys.sorted(by: coreDataOrder) { bytes += Array(name.utf8) + (hashes[name] ?? Data()) }
        return Data(SHA512.digest(of: bytes)).base64EncodedString()
    }

    /// Core Data sorts names as `NSString.compare` does with no options: by UTF-16 code unit.
    static func coreDataOrder(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf16.lexicographicallyPrecedes(rhs.utf16)
    }

    private static func entityHash(
        _ name: String, _ entities: [String: CoreDataStoreModel.Entity], _ memo: inout [String: [UInt8]],
        _ visiting: inout Set<String>
    ) -> [UInt8] {
        if let known = memo[name] { return known }
        guard let entity = entities[name] else { return [] }
        visiting.insert(name)
        var bytes = Array(entity.name.utf8)
        bytes.append(entity.isAbstract ? 1 : 0)
        // A parent cycle is not a model Core Data would load; it is cut where it closes.
        if let parent = entity.parent, entities[parent] != nil, !visiting.contains(parent) {
            bytes += entityHash(parent, entities, &memo, &visiting)
        }
        var properties: [(name: String, hash: [UInt8])] = []
        var seen: Set<String> = []
        var owner: CoreDataStoreModel.Entity? = entity
        var lineage: Set<String> = []
        while let current = owner, lineage.insert(current.name).inserted {
            for attribute in current.attributes where !attribute.isTransient && seen.insert(attribute.name).inserted {
                properties.append((attribute.name, attributeHash(attribute)))
            }
            for relationship in current.relationships
            where !relationship.isTransient && seen.insert(relationship.name).inserted {
                properties.append((relationship.name, relationshipHash(relationship, in: current.name)))
            }
            owner = current.parent.flatMap { entities[$0] }
        }
        for property in properties.sorted(by: { coreDataOrder($0.name, $1.name) }) { bytes += property.hash }
        if let modifier = entity.versionHashModifier { bytes += Array(modifier.utf8) }
        bytes += Array(
            entity.uniquenessConstraints.map { $0.joined(separator: ".") }.sorted(by: coreDataOrder).joined().utf8)
        let digest = SHA256.digest(of: bytes)
        visiting.remove(name)
        memo[name] = digest
        return digest
    }

    /// `P(p)`: the hash every property's own hash starts from.
    private static func propertyBase(name: String, isOptional: Bool, isTransient: Bool, modifier: String?) -> [UInt8] {
        var bytes = Array(name.utf8)
        let flags: UInt16 = (isOptional ? 1 : 0) | (isTransient ? 2 : 0)
        bytes += littleEndian(flags)
        if let modifier { bytes += Array(modifier.utf8) }
        return SHA256.digest(of: bytes)
    }

    static func attributeHash(_ attribute: CoreDataStoreModel.Attribute) -> [UInt8] {
        var bytes = propertyBase(
            name: attribute.name, isOptional: attribute.isOptional, isTransient: attribute.isTransient,
            modifier: attribute.versionHashModifier)
        bytes += littleEndian(Int32(truncatingIfNeeded: attribute.typeCode))
        if attribute.allowsExternalStorage { bytes.append(1) }
        if attribute.preservesValueInHistoryOnDeletion { bytes.append(1) }
        return SHA256.digest(of: bytes)
    }

    static func relationshipHash(_ relationship: CoreDataStoreModel.Relationship, in entity: String) -> [UInt8] {
        var bytes = propertyBase(
            name: relationship.name, isOptional: relationship.isOptional, isTransient: relationship.isTransient,
            modifier: relationship.versionHashModifier)
        bytes += Array(relationship.destination.utf8)
        if let inverse = relationship.inverse, !(inverse == relationship.name && relationship.destination == entity) {
            bytes += Array(inverse.utf8)
        }
        bytes += littleEndian(UInt32(truncatingIfNeeded: relationship.maxCount))
        bytes += littleEndian(UInt32(truncatingIfNeeded: relationship.minCount))
        if relationship.isOrdered { bytes += littleEndian(UInt16(1)) }
        return SHA256.digest(of: bytes)
    }

    private static func littleEndian<Value: FixedWidthInteger>(_ value: Value) -> [UInt8] {
        withUnsafeBytes(of: value.littleEndian) { Array($0) }
    }
}
