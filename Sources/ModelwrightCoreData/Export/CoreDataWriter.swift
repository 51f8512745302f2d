import ModelwrightSchema

/// Writes a ``CoreDataModel`` as the `contents` XML Xcode writes: the same element and attribute
/// names, value spellings, attribute order and four-space indentation, so an exported model
/// diffs cleanly against one Xcode saved. Same model, same bytes.
enum CoreDataWriter {
    /// The root attributes an exported model gets when it has none of its own.
    static let defaultRootAttributes = [
        CoreDataXMLAttribute("type", "com.apple.IDECoreDataModeler.DataModel"),
        CoreDataXMLAttribute("documentVersion", "1.0"),
        CoreDataXMLAttribute("lastSavedToolsVersion", "22758"),
        CoreDataXMLAttribute("systemVersion", "23F79"),
        CoreDataXMLAttribute("minimumToolsVersion", "Automatic"),
        CoreDataXMLAttribute("sourceLanguage", "Swift"),
        CoreDataXMLAttribute("userDefinedModelVersionIdentifier", ""),
    ]

    /// The `contents` file's text; throws when a value holds a character XML 1.0 cannot carry.
    static func xml(_ model: CoreDataModel) throws(XMLAttributeText.Unwritable) -> String {
        var out = "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n"
        out += try "<model" + attributes(model.rootAttributes.isEmpty ? defaultRootAttributes : model.rootAttributes)
        out += ">\n"
        for entity in model.entities {
            try write(entity, to: &out)
        }
        for request in model.fetchRequests {
            out += try "    <fetchRequest" + attributes(request.attributes) + "/>\n"
        }
        for configuration in model.configurations {
            out += try "    <configuration" + attributes([.init("name", configuration.name)] + configuration.attributes)
            out += ">\n"
            for member in configuration.memberEntities {
                out += try "        <memberEntity" + attributes([.init("name", member)]) + "/>\n"
            }
            out += "    </configuration>\n"
        }
        try writeUserInfo(model.userInfo, indent: "    ", to: &out)
        return out + "</model>\n"
    }

    private static func write(_ entity: CoreDataModel.Entity, to out: inout String) throws(XMLAttributeText.Unwritable)
    {
        var pairs = [CoreDataXMLAttribute("name", entity.name)]
        if let className = entity.representedClassName { pairs.append(.init("representedClassName", className)) }
        if let parent = entity.parentEntity { pairs.append(.init("parentEntity", parent)) }
        if entity.isAbstract { pairs.append(.init("isAbstract", "YES")) }
        if let elementID = entity.elementID { pairs.append(.init("elementID", elementID)) }
        if let modifier = entity.versionHashModifier { pairs.append(.init("versionHashModifier", modifier)) }
        pairs.append(.init("syncable", "YES"))
        if let generation = entity.codeGenerationType { pairs.append(.init("codeGenerationType", generation)) }
        let isEmpty =
            entity.attributes.isEmpty && entity.relationships.isEmpty && entity.userInfo.isEmpty
            && entity.fetchIndexes.isEmpty && entity.uniquenessConstraints.isEmpty
        out += try "    <entity" + attributes(pairs) + (isEmpty ? "/>\n" : ">\n")
        guard !isEmpty else { return }
        for attribute in entity.attributes {
            try write(attribute, to: &out)
        }
        for relationship in entity.relationships {
            try write(relationship, to: &out)
        }
        try writeUserInfo(entity.userInfo, indent: "        ", to: &out)
        for index in entity.fetchIndexes {
            out += try "        <fetchIndex" + attributes([.init("name", index.name)]) + ">\n"
            for element in index.elements {
                var pairs: [CoreDataXMLAttribute] = []
                if let property = element.property { pairs.append(.init("property", property)) }
                if let expression = element.expression { pairs.append(.init("expression", expression)) }
                pairs += [.init("type", element.type), .init("order", element.order)]
                out += try "            <fetchIndexElement" + attributes(pairs) + "/>\n"
            }
            out += "        </fetchIndex>\n"
        }
        if !entity.uniquenessConstraints.isEmpty {
            out += "        <uniquenessConstraints>\n"
            for constraint in entity.uniquenessConstraints {
                out += "            <uniquenessConstraint>\n"
                for name in constraint {
                    out += try "                <constraint" + attributes([.init("value", name)]) + "/>\n"
                }
                out += "            </uniquenessConstraint>\n"
            }
            out += "        </uniquenessConstraints>\n"
        }
        out += "    </entity>\n"
    }

    private static func write(_ attribute: CoreDataModel.Attribute, to out: inout String) throws(XMLAttributeText
        .Unwritable)
    {
        var pairs = [CoreDataXMLAttribute("name", attribute.name)]
        if attribute.isOptional { pairs.append(.init("optional", "YES")) }
        if attribute.isTransient { pairs.append(.init("transient", "YES")) }
        pairs.append(.init("attributeType", attribute.attributeType))
        if let value = attribute.defaultValueString { pairs.append(.init("defaultValueString", value)) }
        if let value = attribute.defaultDateTimeInterval { pairs.append(.init("defaultDateTimeInterval", value)) }
        if attribute.isDerived { pairs.append(.init("derived", "YES")) }
        if let expression = attribute.derivationExpression { pairs.append(.init("derivationExpression", expression)) }
        if let transformer = attribute.valueTransformerName { pairs.append(.init("valueTransformerName", transformer)) }
        if let className = attribute.customClassName { pairs.append(.init("customClassName", className)) }
        if let scalar = attribute.usesScalarValueType {
            pairs.append(.init("usesScalarValueType", scalar ? "YES" : "NO"))
        }
        if attribute.isIndexed { pairs.append(.init("indexed", "YES")) }
        if let elementID = attribute.elementID { pairs.append(.init("elementID", elementID)) }
        if let modifier = attribute.versionHashModifier { pairs.append(.init("versionHashModifier", modifier)) }
        pairs += attribute.otherAttributes
        try writeElement("attribute", pairs, userInfo: attribute.userInfo, to: &out)
    }

    private static func write(_ relationship: CoreDataModel.Relationship, to out: inout String) throws(XMLAttributeText
        .Unwritable)
    {
        var pairs = [CoreDataXMLAttribute("name", relationship.name)]
        if relationship.isOptional { pairs.append(.init("optional", "YES")) }
        if relationship.isToMany { pairs.append(.init("toMany", "YES")) }
        if let count = relationship.minCount { pairs.append(.init("minCount", String(count))) }
        if let count = relationship.maxCount { pairs.append(.init("maxCount", String(count))) }
        pairs.append(.init("deletionRule", relationship.deletionRule ?? CoreDataModel.DeletionRule.nullify.rawValue))
        if relationship.isOrdered { pairs.append(.init("ordered", "YES")) }
        pairs.append(.init("destinationEntity", relationship.destinationEntity))
        if let inverse = relationship.inverseName { pairs.append(.init("inverseName", inverse)) }
        if let inverse = relationship.inverseEntity { pairs.append(.init("inverseEntity", inverse)) }
        if relationship.isIndexed { pairs.append(.init("indexed", "YES")) }
        if let elementID = relationship.elementID { pairs.append(.init("elementID", elementID)) }
        if let modifier = relationship.versionHashModifier { pairs.append(.init("versionHashModifier", modifier)) }
        pairs += relationship.otherAttributes
        try writeElement("relationship", pairs, userInfo: relationship.userInfo, to: &out)
    }

    private static func writeElement(
        _ name: String, _ pairs: [CoreDataXMLAttribute], userInfo: [UserInfoEntry], to out: inout String
    ) throws(XMLAttributeText.Unwritable) {
        guard !userInfo.isEmpty else {
            out += try "        <\(name)" + attributes(pairs) + "/>\n"
            return
        }
        out += try "        <\(name)" + attributes(pairs) + ">\n"
        try writeUserInfo(userInfo, indent: "            ", to: &out)
        out += "        </\(name)>\n"
    }

    private static func writeUserInfo(
        _ entries: [UserInfoEntry], indent: String, to out: inout String
    ) throws(XMLAttributeText.Unwritable) {
        guard !entries.isEmpty else { return }
        out += indent + "<userInfo>\n"
        for entry in entries {
            out +=
                try indent + "    <entry" + attributes([.init("key", entry.key), .init("value", entry.value)]) + "/>\n"
        }
        out += indent + "</userInfo>\n"
    }

    private static func attributes(_ pairs: [CoreDataXMLAttribute]) throws(XMLAttributeText.Unwritable) -> String {
        var text = ""
        for pair in pairs {
            text += " \(pair.name)=\"\(try XMLAttributeText.escaped(pair.value))\""
        }
        return text
    }
}

/// The order Xcode writes entities and properties in: by name, ignoring case (`excludedProducts`
/// before `excludeSaleItems`), so imports read and exports write Xcode's order.
enum XcodeOrder {
    static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        let left = lhs.lowercased()
        let right = rhs.lowercased()
        return left == right ? lhs < rhs : left < right
    }

    /// `items` in Xcode's order of their names, lowercasing each name once.
    static func sorted<Item>(_ items: [Item], by name: (Item) -> String) -> [Item] {
        let keyed: [(key: String, name: String, item: Item)] = items.map { item in
            let itemName = name(item)
            return (itemName.lowercased(), itemName, item)
        }
        let ordered = keyed.sorted { lhs, rhs in
            lhs.key == rhs.key ? lhs.name < rhs.name : lhs.key < rhs.key
        }
        return ordered.map { $0.item }
    }
}
