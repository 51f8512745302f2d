import ModelwrightTestSupport

/// Makes Core Data inputs: a `contents` file of the corpus with one to four stacked mutations,
/// in a one-version bundle, a two-version bundle (so the planner runs) or a bare `.xcdatamodel`.
struct XMLMutator {
    /// The seeds to start from.
    let seeds: FuzzSeeds

    /// Document type declarations: internal and external entities, parameter entities and a
    /// billion laughs.
    static let doctypes: [String] = [
        "<!DOCTYPE model [<!ENTITY e \"Injected\">]>",
        "<!DOCTYPE model [<!ENTITY e SYSTEM \"file:///etc/passwd\">]>",
        "<!DOCTYPE model SYSTEM \"http://127.0.0.1:9/model.dtd\">",
        "<!DOCTYPE model [<!ENTITY % p SYSTEM \"file:///etc/passwd\"> %p;]>",
        "<!DOCTYPE model [<!ENTITY e \"&e;\">]>",
        "<!DOCTYPE model [<!ENTITY e \"<entity name='X'/>\">]>",
        "<!DOCTYPE model [<!ELEMENT model ANY><!ATTLIST entity name CDATA \"Defaulted\">]>",
        "<!DOCTYPE model [",
        billionLaughs,
    ]

    /// Ten levels of ten references each: 10^10 copies of "lol" if expanded.
    static let billionLaughs: String = {
        var text = "<!DOCTYPE model [<!ENTITY e0 \"lol\">"
        for level in 1...9 {
            text += "<!ENTITY e\(level) \"" + String(repeating: "&e\(level - 1);", count: 10) + "\">"
        }
        return text + "<!ENTITY e \"&e9;\">]>"
    }()

    /// XML declarations that are broken, odd or lie about the encoding.
    static let declarations: [String] = [
        "<?xml?>", "<?xml ?>", "<?xml version=\"9.9\"?>", "<?xml version=\"1.0\" encoding=\"EBCDIC-US\"?>",
        "<?xml version=\"1.0\" encoding=\"UTF-16\"?>", "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>",
        "<?xml version='1.0' standalone='maybe'?>", "<?xml version=\"1.0\"", "<?xml", "\u{FEFF}<?xml version=\"1.0\"?>",
        "\n\n<?xml version=\"1.0\"?>", "<?XML version=\"1.0\"?>", "<?xml-stylesheet href=\"x\"?>", "",
    ]

    /// Values to put in attributes: Core Data's own words, edges, and hostile text.
    static let values: [String] = [
        "", "YES", "NO", "yes", "String", "Integer 16", "Integer 32", "Integer 64", "Decimal", "Double", "Float",
        "Boolean", "Date", "Binary", "UUID", "URI", "Transformable", "ObjectID", "Undefined", "Nullify", "Cascade",
        "Deny", "No Action", "Bogus", "-1", "0", "1", "9223372036854775808", "1e999", "nan", "Model", "Model 2",
        "class", "Type", "self", "a b", "a.b", "0name", "_", "$x", SchemaMutator.sqlPayload, "x\u{0600}'", "\u{0600}\"",
        "a&quot;b", "&lt;x&gt;", "&#0;", "&#x600;'); --", "&#13;", "&#x2028;", "\u{202E}", "&e;", "&undefined;",
        "&#xD800;", "&#1114112;", "a\rb", "@count", "photos.@count", "now()", "NSDate",
    ]

    /// The input with number `index`, made with `random`.
    func make(index: Int, random: inout SplitMix64) -> FuzzInput {
        let group = random.pick(seeds.xmlGroups)
        let seed = random.pick(group)
        var bytes = seed.bytes
        var mutations = ["seed \(seed.name)"]
        for _ in 0..<random.size(in: 1...4) {
            mutations.append(mutate(&bytes, &random))
        }
        let layout = random.index(below: 10)
        var files: [FuzzInput.File]
        let target: String
        if layout < 6 {
            target = "Fuzz.xcdatamodeld"
            files = [FuzzInput.File(path: "Fuzz.xcdatamodeld/Fuzz.xcdatamodel/contents", bytes: bytes)]
        } else if layout < 9 {
            // The mutated file is the newer of two versions, so the importer plans a step from the seed.
            target = "Fuzz.xcdatamodeld"
            files = [
                FuzzInput.File(path: "Fuzz.xcdatamodeld/Fuzz.xcdatamodel/contents", bytes: seed.bytes),
                FuzzInput.File(path: "Fuzz.xcdatamodeld/Fuzz 2.xcdatamodel/contents", bytes: bytes),
            ]
            mutations.insert("layout two versions (seed, then mutated)", at: 1)
        } else {
            target = "Fuzz.xcdatamodel"
            files = [FuzzInput.File(path: "Fuzz.xcdatamodel/contents", bytes: bytes)]
            mutations.insert("layout bare .xcdatamodel", at: 1)
        }
        return FuzzInput(index: index, kind: .xml, files: files, target: target, singleFile: nil, mutations: mutations)
    }

    /// Applies one random mutation and says which.
    private func mutate(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        switch random.index(below: 20) {
        case 0: ByteMutations.flipBits(&bytes, &random)
        case 1: ByteMutations.truncate(&bytes, &random)
        case 2: ByteMutations.deleteRange(&bytes, &random)
        case 3: ByteMutations.duplicateRange(&bytes, &random)
        case 4: ByteMutations.insertInvalidUTF8(&bytes, &random)
        case 5: ByteMutations.insertSpecialScalar(&bytes, &random)
        case 6: ByteMutations.lineEnds(&bytes, &random)
        case 7: replaceDeclaration(&bytes, &random)
        case 8: insertDoctype(&bytes, &random)
        case 9: invalidUTF8InMarkup(&bytes, &random)
        case 10: deepNesting(&bytes, &random)
        case 11: unclosedTag(&bytes, &random)
        case 12: duplicateAttribute(&bytes, &random)
        case 13, 14: replaceAttributeValue(&bytes, &random)
        case 15: hugeName(&bytes, &random)
        case 16: duplicateElement(&bytes, &random)
        case 17: removeAttribute(&bytes, &random)
        case 18: insertMarkup(&bytes, &random)
        default: ByteMutations.randomBytes(&bytes, &random)
        }
    }

    /// The byte ranges of every attribute's value (between its quotes).
    static func attributeValues(_ bytes: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var offset = 0
        while offset + 1 < bytes.count {
            if bytes[offset] == UInt8(ascii: "="), bytes[offset + 1] == UInt8(ascii: "\"") {
                let start = offset + 2
                var end = start
                while end < bytes.count, bytes[end] != UInt8(ascii: "\"") { end += 1 }
                ranges.append(start..<end)
                offset = end + 1
            } else {
                offset += 1
            }
        }
        return ranges
    }

    /// The byte ranges of every attribute, `name="value"`.
    static func attributes(_ bytes: [UInt8]) -> [Range<Int>] {
        attributeValues(bytes).compactMap { value in
            var start = value.lowerBound - 2
            while start > 0, bytes[start - 1] != 0x20, bytes[start - 1] != UInt8(ascii: "<") { start -= 1 }
            let end = min(value.upperBound + 1, bytes.count)
            return start < end ? start..<end : nil
        }
    }

    private func replaceDeclaration(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let declaration = random.pick(Self.declarations)
        if let start = ByteMutations.occurrences(of: "<?xml", in: bytes).first,
            let end = ByteMutations.occurrences(of: "?>", in: bytes).first(where: { $0.lowerBound >= start.lowerBound })
        {
            bytes.replaceSubrange(start.lowerBound..<end.upperBound, with: Array(declaration.utf8))
        } else {
            bytes.insert(contentsOf: Array(declaration.utf8), at: 0)
        }
        return "replaceDeclaration(\(SchemaMutator.short(declaration)))"
    }

    /// Adds a document type declaration and references its entities in attribute values.
    private func insertDoctype(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let doctype = random.pick(Self.doctypes)
        let end = ByteMutations.occurrences(of: "?>", in: bytes).first?.upperBound ?? 0
        bytes.insert(contentsOf: Array(("\n" + doctype + "\n").utf8), at: end)
        let values = Self.attributeValues(bytes).filter { $0.lowerBound > end }
        var references = 0
        for _ in 0..<random.size(in: 1...8) where !values.isEmpty {
            let value = random.pick(values)
            bytes.insert(contentsOf: Array("&e;".utf8), at: value.lowerBound + references * 3)
            references += 1
        }
        return "insertDoctype(\(SchemaMutator.short(doctype)), \(references) references)"
    }

    /// Puts bytes that are not UTF-8 in an element name, an attribute name, a value or a comment.
    private func invalidUTF8InMarkup(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let sequence = random.pick(ByteMutations.invalidUTF8)
        switch random.index(below: 4) {
        case 0:
            let opens = ByteMutations.occurrences(of: "<", in: bytes)
            guard !opens.isEmpty else { break }
            let place = random.pick(opens).upperBound + 1
            bytes.insert(contentsOf: sequence, at: min(place, bytes.count))
            return "invalidUTF8(\(ByteMutations.hex(sequence)) in an element name at \(place))"
        case 1:
            let attributes = Self.attributes(bytes)
            guard !attributes.isEmpty else { break }
            let place = random.pick(attributes).lowerBound + 1
            bytes.insert(contentsOf: sequence, at: place)
            return "invalidUTF8(\(ByteMutations.hex(sequence)) in an attribute name at \(place))"
        case 2:
            let values = Self.attributeValues(bytes)
            guard !values.isEmpty else { break }
            let place = random.pick(values).lowerBound
            bytes.insert(contentsOf: sequence, at: place)
            return "invalidUTF8(\(ByteMutations.hex(sequence)) in an attribute value at \(place))"
        default: break
        }
        let end = ByteMutations.occurrences(of: "?>", in: bytes).first?.upperBound ?? 0
        bytes.insert(contentsOf: Array("<!-- ".utf8) + sequence + Array(" -->".utf8), at: end)
        return "invalidUTF8(\(ByteMutations.hex(sequence)) in a comment at \(end))"
    }

    /// Nests elements hundreds to a hundred thousand deep, closed or left open.
    private func deepNesting(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let depth = random.size(in: 100...100_000)
        let names = ["a", "entity", "model", "attribute", "elements", "userInfo"]
        let name = random.pick(names)
        let closed = random.chance(0.7)
        let place = ByteMutations.occurrences(of: "</model>", in: bytes).first?.lowerBound ?? bytes.count
        var nested = String(repeating: "<\(name)>", count: depth)
        if closed { nested += String(repeating: "</\(name)>", count: depth) }
        bytes.insert(contentsOf: Array(nested.utf8), at: place)
        return "deepNesting(<\(name)> x\(depth)\(closed ? "" : ", unclosed"))"
    }

    /// Removes a closing tag or turns an empty element into an open one.
    private func unclosedTag(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let ends = ByteMutations.occurrences(of: "/>", in: bytes) + ByteMutations.occurrences(of: "</", in: bytes)
        guard !ends.isEmpty else { return "unclosedTag(none)" }
        let place = random.pick(ends)
        if bytes[place.lowerBound] == UInt8(ascii: "/") {
            bytes.replaceSubrange(place, with: Array(">".utf8))
        } else if let close = bytes[place.upperBound...].firstIndex(of: UInt8(ascii: ">")) {
            bytes.removeSubrange(place.lowerBound...close)
        }
        return "unclosedTag(at \(place.lowerBound))"
    }

    /// Repeats an attribute in its element, with the same or another value.
    private func duplicateAttribute(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let attributes = Self.attributes(bytes)
        guard !attributes.isEmpty else { return "duplicateAttribute(none)" }
        let attribute = random.pick(attributes)
        var copy = Array(bytes[attribute])
        if random.chance(0.5), let equals = copy.firstIndex(of: UInt8(ascii: "=")) {
            copy = Array(copy[...equals]) + Array("\"\(random.pick(Self.values))\"".utf8)
        }
        bytes.insert(contentsOf: [0x20] + copy, at: attribute.upperBound)
        return "duplicateAttribute(\(SchemaMutator.short(copy)) at \(attribute.upperBound))"
    }

    /// Replaces an attribute's value with a word Core Data knows, an edge, or another value of the file.
    private func replaceAttributeValue(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let values = Self.attributeValues(bytes)
        guard !values.isEmpty else { return "replaceAttributeValue(none)" }
        let target = random.pick(values)
        let replacement = random.chance(0.6) ? Array(random.pick(Self.values).utf8) : Array(bytes[random.pick(values)])
        let old = Array(bytes[target])
        bytes.replaceSubrange(target, with: replacement)
        return
            "replaceAttributeValue(\(SchemaMutator.short(old)) at \(target.lowerBound) with \(SchemaMutator.short(replacement)))"
    }

    /// Gives an entity, attribute or relationship a name of a thousand to a hundred thousand letters.
    private func hugeName(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let names = ByteMutations.occurrences(of: " name=\"", in: bytes)
        guard !names.isEmpty else { return "hugeName(none)" }
        let place = random.pick(names).upperBound
        let length = random.size(in: 1_000...100_000)
        bytes.insert(contentsOf: Array(ByteMutations.identifier(length: length, &random).utf8), at: place)
        return "hugeName(\(length) letters at \(place))"
    }

    /// Repeats an element (an entity, attribute or relationship), so names collide.
    private func duplicateElement(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let kinds = ["<attribute ", "<relationship ", "<entity ", "<fetchedProperty ", "<configuration "]
        let kind = random.pick(kinds)
        let starts = ByteMutations.occurrences(of: kind, in: bytes)
        guard !starts.isEmpty else { return "duplicateElement(no \(kind))" }
        let start = random.pick(starts).lowerBound
        let endMarker = kind == "<entity " ? "</entity>" : "/>"
        guard let end = ByteMutations.occurrences(of: endMarker, in: Array(bytes[start...])).first else {
            return "duplicateElement(unclosed)"
        }
        let element = Array(bytes[start..<(start + end.upperBound)])
        let times = random.size(in: 1...50)
        bytes.insert(contentsOf: Array(repeating: element + [0x0A], count: times).joined(), at: start)
        return "duplicateElement(\(kind.dropFirst())x\(times) at \(start))"
    }

    /// Removes an attribute from its element.
    private func removeAttribute(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let attributes = Self.attributes(bytes)
        guard !attributes.isEmpty else { return "removeAttribute(none)" }
        let attribute = random.pick(attributes)
        let old = Array(bytes[attribute])
        bytes.removeSubrange(attribute)
        return "removeAttribute(\(SchemaMutator.short(old)))"
    }

    /// Inserts a comment, CDATA, a processing instruction or stray markup between elements.
    private func insertMarkup(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let markup = [
            "<!-- -- -->", "<![CDATA[<entity name=\"X\"/>]]>", "<?pi data?>", "<!-->", "</model>", "<model>", "&e;",
            "&#0;", "<entity/>", "<entity name=\"\"/>", "<attribute name=\"orphan\" attributeType=\"String\"/>",
            "\u{0}", "<a xmlns:a=\"x\" a:b=\"1\" b=\"2\"/>", "<:>", "<1a/>",
        ]
        let closings = ByteMutations.occurrences(of: ">", in: bytes)
        let place = closings.isEmpty ? 0 : random.pick(closings).upperBound
        let text = random.pick(markup)
        bytes.insert(contentsOf: Array(text.utf8), at: place)
        return "insertMarkup(\(SchemaMutator.short(text)) at \(place))"
    }
}
