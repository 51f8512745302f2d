import ModelwrightTestSupport

/// Makes schema inputs: the example model's versions with one to four stacked mutations in one
/// of them, or a small folder built to stress one check (huge version numbers, deep inheritance,
/// a huge unknown type among many entities).
struct SchemaMutator {
    /// The seeds to start from.
    let seeds: FuzzSeeds

    /// The SQL a hostile string default tries to run; it would create the file `fuzzcanary` in the
    /// working folder, which the executor checks for after every input. (SQLite takes a bare name
    /// as ATTACH's file name, so the payload needs no quote that a correct escaper would double.)
    static let sqlPayload = "x\u{0600}'); ATTACH DATABASE fuzzcanary AS fuzz; CREATE TABLE fuzz.t(x); --"

    /// Words the schema language knows, and values at the edges, to splice in.
    static let dictionary: [String] = [
        "entity", "abstract", "enum", "composite", "model", "version", "migration", "from", "custom", "lossy",
        "request", "where", "case", "@unique", "@indexed", "@index(", "@sort(", "@inverse(", "@delete(",
        "@renamed(from:", "@coreData(", "Set<", "Codable<", "[", "]", "?", "=", "{", "}", "(", ")", ":", ";", ",",
        ".", "-", "@", "<", ">", "0", "-1", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
        "99999999999999999999999999", "1e999", "-0.0", "0x10", "1_000", "nan", "now", "nil", "true", "\"\"",
        "\"\\", "\"\\u{0}\"", "\"\\u{110000}\"", "\"\\(x)\"", "\"\"\"", "`", "`class`", "``", "self", "Self", "Type",
        "Protocol", "Any", "String", "Int16", "Int", "Bool", "Date", "Decimal", "UUID", "URL", "Data", "Double",
        "descending", "nullify", "cascade", "deny", "noAction", "/*", "*/", "//", "///", "\\", "$x", "\u{0}",
        "versionHashModifier:", "User", "Trip", "Item", "Note", "Role", "Address", "id", "ID", "rowid", "Record",
        "Trips", "init", "deinit", "subscript", "default", "internal", "public", "import",
    ]

    /// The input with number `index`, made with `random`.
    func make(index: Int, random: inout SplitMix64) -> FuzzInput {
        let roll = random.index(below: 1000)
        if roll < 8 { return hugeVersionNumber(index: index, random: &random) }
        if roll < 14 { return deepInheritance(index: index, random: &random) }
        if roll < 20 { return unknownTypeAmongMany(index: index, random: &random) }
        let versions = seeds.schemaVersions
        let singleOnly = roll < 170
        // The current version has the most to break; older ones exercise the version checks.
        let which = singleOnly ? versions.count - 1 : random.pick([2, 2, 1, 0])
        var bytes = versions[which].bytes
        var mutations = ["seed \(versions[which].name)"]
        for _ in 0..<random.size(in: 1...4) {
            mutations.append(mutate(&bytes, &random))
        }
        var files: [FuzzInput.File] = [FuzzInput.File(path: "Trips/modelwright-config.json", bytes: seeds.config)]
        if singleOnly {
            files.append(FuzzInput.File(path: "Trips/\(versions[which].name)", bytes: bytes))
        } else {
            for (number, seed) in versions.enumerated() {
                files.append(FuzzInput.File(path: "Trips/\(seed.name)", bytes: number == which ? bytes : seed.bytes))
            }
        }
        return FuzzInput(
            index: index, kind: .schema, files: files, target: "Trips", singleFile: "Trips/\(versions[which].name)",
            mutations: mutations)
    }

    /// Applies one random mutation and says which.
    private func mutate(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        switch random.index(below: 22) {
        case 0: ByteMutations.flipBits(&bytes, &random)
        case 1: ByteMutations.randomBytes(&bytes, &random)
        case 2: ByteMutations.truncate(&bytes, &random)
        case 3: ByteMutations.deleteRange(&bytes, &random)
        case 4: ByteMutations.duplicateRange(&bytes, &random)
        case 5: ByteMutations.insertInvalidUTF8(&bytes, &random)
        case 6: ByteMutations.insertSpecialScalar(&bytes, &random)
        case 7: ByteMutations.lineEnds(&bytes, &random)
        case 8, 9: replaceToken(&bytes, &random)
        case 10: duplicateToken(&bytes, &random)
        case 11: deleteToken(&bytes, &random)
        case 12: insertWord(&bytes, &random)
        case 13: breakOutOfComment(&bytes, &random)
        case 14: breakOutOfString(&bytes, &random)
        case 15: hostileDefault(&bytes, &random)
        case 16: deepNesting(&bytes, &random)
        case 17: deepPredicate(&bytes, &random)
        case 18: hugeName(&bytes, &random)
        case 19: edgeNumber(&bytes, &random)
        case 20: hostileEnumRawValue(&bytes, &random)
        default: hostileName(&bytes, &random)
        }
    }

    // MARK: - Tokens

    /// The byte ranges of the file's tokens, roughly as the lexer sees them: names, numbers,
    /// string literals, comments and single punctuation; whitespace is skipped.
    static func tokens(_ bytes: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var offset = 0
        func isWord(_ byte: UInt8) -> Bool {
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x5F || byte >= 0x80
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            let start = offset
            if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                offset += 1
                continue
            } else if isWord(byte) {
                while offset < bytes.count, isWord(bytes[offset]) { offset += 1 }
            } else if byte == UInt8(ascii: "\"") {
                offset += 1
                while offset < bytes.count, bytes[offset] != UInt8(ascii: "\""), bytes[offset] != 0x0A { offset += 1 }
                offset = min(offset + 1, bytes.count)
            } else if byte == UInt8(ascii: "/"), offset + 1 < bytes.count, bytes[offset + 1] == UInt8(ascii: "/") {
                while offset < bytes.count, bytes[offset] != 0x0A { offset += 1 }
            } else {
                offset += 1
            }
            ranges.append(start..<offset)
        }
        return ranges
    }

    /// Replaces a token with another token of the file or a word of the dictionary.
    private func replaceToken(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let tokens = Self.tokens(bytes)
        guard !tokens.isEmpty else { return "replaceToken(none)" }
        let target = random.pick(tokens)
        let replacement =
            random.chance(0.5) ? Array(bytes[random.pick(tokens)]) : Array(random.pick(Self.dictionary).utf8)
        let old = String(decoding: bytes[target], as: UTF8.self)
        bytes.replaceSubrange(target, with: replacement)
        return "replaceToken(\(Self.short(old)) at \(target.lowerBound) with \(Self.short(replacement)))"
    }

    /// Repeats a token one to a thousand times in place.
    private func duplicateToken(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let tokens = Self.tokens(bytes)
        guard !tokens.isEmpty else { return "duplicateToken(none)" }
        let target = random.pick(tokens)
        let times = random.size(in: 1...1000)
        let separator: [UInt8] = random.chance(0.5) ? [0x20] : []
        let copy = Array(bytes[target]) + separator
        bytes.insert(contentsOf: Array(repeating: copy, count: times).joined(), at: target.lowerBound)
        return "duplicateToken(\(Self.short(Array(bytes[target]))) at \(target.lowerBound), \(times)x)"
    }

    /// Removes a token.
    private func deleteToken(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let tokens = Self.tokens(bytes)
        guard !tokens.isEmpty else { return "deleteToken(none)" }
        let target = random.pick(tokens)
        let old = Array(bytes[target])
        bytes.removeSubrange(target)
        return "deleteToken(\(Self.short(old)) at \(target.lowerBound))"
    }

    /// Inserts a word of the dictionary between two tokens.
    private func insertWord(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let tokens = Self.tokens(bytes)
        let offset = tokens.isEmpty ? 0 : random.pick(tokens).upperBound
        let word = random.pick(Self.dictionary)
        bytes.insert(contentsOf: Array(" \(word) ".utf8), at: offset)
        return "insertWord(\(Self.short(Array(word.utf8))) at \(offset))"
    }

    // MARK: - Injection

    /// Text that ends a Swift comment or string and declares something in the generated module.
    private static let breakouts: [String] = [
        "\rpublic let fuzzInjected = 42 //", "\r\npublic let fuzzInjected = 42 //",
        "\u{2028}public let fuzzInjected = 42 //",
        "\u{85}public let fuzzInjected = 42 //", "\u{0B}public let fuzzInjected = 42 //",
        "*/ public let fuzzInjected = 42 /*",
        "\u{0}public let fuzzInjected = 42 //", "\r\r\r", "\r/// \r",
    ]

    /// Puts a line break Swift honours (or one it does not) in a doc comment, followed by a declaration.
    private func breakOutOfComment(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let comments = ByteMutations.occurrences(of: "/// ", in: bytes)
        guard !comments.isEmpty else { return "breakOutOfComment(none)" }
        let place = random.pick(comments).upperBound
        let breakout = random.pick(Self.breakouts)
        bytes.insert(contentsOf: Array(("a doc" + breakout).utf8), at: place)
        return "breakOutOfComment(\(ByteMutations.hex(Array(breakout.utf8.prefix(3)))) at \(place))"
    }

    /// Puts a line break or a quote in a string literal (custom-stage labels, lossy reasons, predicates).
    private func breakOutOfString(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let quotes = ByteMutations.occurrences(of: "\"", in: bytes)
        guard !quotes.isEmpty else { return "breakOutOfString(none)" }
        let place = random.pick(quotes).upperBound
        let breakout = random.pick(Self.breakouts + ["\\\"); fuzzInjected(); (\\\"", "\\\\", "\\u{0}", "\\(fuzz)"])
        bytes.insert(contentsOf: Array(breakout.utf8), at: place)
        return "breakOutOfString(\(Self.short(Array(breakout.utf8))) at \(place))"
    }

    /// String values that attack SQL or Swift literals.
    private static let hostileStrings: [String] = [
        sqlPayload, "x\u{0600}'", "\u{0600}'\u{0600}'", "a'b", "'); --", "x\u{0301}'); --", "\\\"", "\\\\",
        "\\\"); let fuzzInjected = (\\\"", "x\u{2028}y", "x\u{0}y", "\u{202E}evil", "\\u{0}", "\\u{D800}",
        "\\u{0600}'); --", "\r", "\r\n", "\\r", "x\\(y)", "\"\"\"", "#", "\u{FEFF}",
    ]

    /// Adds a string attribute with a hostile default to the first entity.
    private func hostileDefault(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        guard let entity = ByteMutations.occurrences(of: "entity ", in: bytes).first,
            let brace = bytes[entity.upperBound...].firstIndex(of: UInt8(ascii: "{"))
        else { return "hostileDefault(no entity)" }
        let value = random.pick(Self.hostileStrings)
        let optional = random.chance(0.3) ? "?" : ""
        let line = "\n    fuzzHostile: String\(optional) = \"\(value)\"\n"
        bytes.insert(contentsOf: Array(line.utf8), at: brace + 1)
        return "hostileDefault(\(Self.short(Array(value.utf8))))"
    }

    /// Gives an enum case a hostile raw value.
    private func hostileEnumRawValue(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        guard let place = ByteMutations.occurrences(of: "= \"administrator\"", in: bytes).first else {
            return hostileDefault(&bytes, &random)
        }
        let value = random.pick(Self.hostileStrings)
        bytes.replaceSubrange(place, with: Array("= \"\(value)\"".utf8))
        return "hostileEnumRawValue(\(Self.short(Array(value.utf8))))"
    }

    /// Renames a declaration to something no Swift or SQL name may be.
    private func hostileName(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let names = ["`a b`", "`a\"b`", "`a'b`", "`\u{0600}'`", "`class`", "`Type`", "`self`", "`_`", "`0a`", "`a\rb`"]
        let tokens = Self.tokens(bytes).filter { bytes[$0.lowerBound] >= UInt8(ascii: "A") }
        guard !tokens.isEmpty else { return "hostileName(none)" }
        let target = random.pick(tokens)
        let name = random.pick(names)
        bytes.replaceSubrange(target, with: Array(name.utf8))
        return "hostileName(\(Self.short(Array(name.utf8))) at \(target.lowerBound))"
    }

    // MARK: - Size

    /// Nests brackets thousands deep, balanced around a type or left open.
    private func deepNesting(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let depth = random.size(in: 100...100_000)
        let pairs = [("[", "]"), ("Set<", ">"), ("Codable<[", "]>"), ("(", ")"), ("{", "}"), ("<", ">")]
        let (open, close) = random.pick(pairs)
        let types = ByteMutations.occurrences(of: ": String", in: bytes)
        if random.chance(0.6), let type = types.isEmpty ? nil : random.pick(types) {
            let nested =
                ": " + String(repeating: open, count: depth) + "String" + String(repeating: close, count: depth)
            bytes.replaceSubrange(type, with: Array(nested.utf8))
            return "deepNesting(\(open)…\(close) x\(depth) around a type at \(type.lowerBound))"
        }
        let offset = ByteMutations.insertRun(&bytes, unit: open, count: depth, &random)
        return "deepNesting(\(open) x\(depth) open at \(offset))"
    }

    /// Nests a request's predicate thousands deep.
    private func deepPredicate(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        guard let place = ByteMutations.occurrences(of: "where \"", in: bytes).first else {
            return deepNesting(&bytes, &random)
        }
        let depth = random.size(in: 100...100_000)
        let nested =
            random.chance(0.5)
            ? String(repeating: "(", count: depth) + "title == $x" + String(repeating: ")", count: depth) + " AND "
            : String(repeating: "NOT ", count: depth) + "title == $x AND "
        bytes.insert(contentsOf: Array(nested.utf8), at: place.upperBound)
        return "deepPredicate(depth \(depth))"
    }

    /// Replaces a name with one of a thousand to a hundred thousand letters.
    private func hugeName(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let tokens = Self.tokens(bytes).filter { bytes[$0.lowerBound] >= UInt8(ascii: "A") }
        guard !tokens.isEmpty else { return "hugeName(none)" }
        let target = random.pick(tokens)
        let length = random.size(in: 1_000...100_000)
        bytes.replaceSubrange(target, with: Array(ByteMutations.identifier(length: length, &random).utf8))
        return "hugeName(\(length) letters at \(target.lowerBound))"
    }

    /// Replaces a number with one at or past the edges of the integer and floating-point types.
    private func edgeNumber(_ bytes: inout [UInt8], _ random: inout SplitMix64) -> String {
        let numbers = Self.tokens(bytes).filter {
            bytes[$0.lowerBound] >= UInt8(ascii: "0") && bytes[$0.lowerBound] <= UInt8(ascii: "9")
        }
        let values = [
            "9223372036854775807", "9223372036854775808", "18446744073709551616", "32768", "-32769", "2147483648",
            "1e309", "nan", "-0", "0.1e-400", "00000000000000000000001", String(repeating: "9", count: 5000),
        ]
        guard !numbers.isEmpty else { return "edgeNumber(none)" }
        let target = random.pick(numbers)
        let value = random.pick(values)
        bytes.replaceSubrange(target, with: Array(value.utf8))
        return "edgeNumber(\(Self.short(Array(value.utf8))) at \(target.lowerBound))"
    }

    // MARK: - Built folders

    /// Version 1 beside a copy of version 2 numbered at or past the integer limits.
    private func hugeVersionNumber(index: Int, random: inout SplitMix64) -> FuzzInput {
        let numbers = [
            "9223372036854775807", "9223372036854775808", "18446744073709551616", "4294967297", "100000000", "100000",
            "0", "-1", "007", "2", "1",
        ]
        let number = random.pick(numbers)
        var second = seeds.schemaVersions[1].bytes
        if let header = ByteMutations.occurrences(of: "version 2", in: second).first {
            second.replaceSubrange(header, with: Array("version \(number)".utf8))
        }
        let files = [
            FuzzInput.File(path: "Trips/Trips.v1.model", bytes: seeds.schemaVersions[0].bytes),
            FuzzInput.File(path: "Trips/Trips.v\(number).model", bytes: second),
        ]
        return FuzzInput(
            index: index, kind: .schema, files: files, target: "Trips", singleFile: "Trips/Trips.v\(number).model",
            mutations: ["hugeVersionNumber(Trips.v\(number).model)"])
    }

    /// An inheritance chain tens to thousands of entities deep.
    private func deepInheritance(index: Int, random: inout SplitMix64) -> FuzzInput {
        let depth = random.size(in: 10...3000)
        var text = "model Trips version 1\n\nentity E0 {\n    a0: Int = 0\n}\n"
        for level in 1..<depth {
            text += "entity E\(level): E\(level - 1) {\n    a\(level): Int = 0\n}\n"
        }
        let files = [FuzzInput.File(path: "Trips/Trips.v1.model", bytes: Array(text.utf8))]
        return FuzzInput(
            index: index, kind: .schema, files: files, target: "Trips", singleFile: nil,
            mutations: ["deepInheritance(\(depth))"])
    }

    /// Hundreds to thousands of entities and one attribute whose type is a huge unknown name.
    private func unknownTypeAmongMany(index: Int, random: inout SplitMix64) -> FuzzInput {
        let entities = random.size(in: 10...3000)
        let length = random.size(in: 100...100_000)
        var text = "model Trips version 1\n\n"
        for number in 0..<entities {
            text += "entity Entity\(number) {\n    name: String\n}\n"
        }
        text += "entity Broken {\n    value: \(ByteMutations.identifier(length: length, &random))\n}\n"
        let files = [FuzzInput.File(path: "Trips/Trips.v1.model", bytes: Array(text.utf8))]
        return FuzzInput(
            index: index, kind: .schema, files: files, target: "Trips", singleFile: nil,
            mutations: ["unknownTypeAmongMany(\(entities) entities, \(length)-letter type)"])
    }

    /// A short, printable form of some bytes for a mutation list.
    static func short(_ bytes: [UInt8]) -> String {
        let text = String(decoding: bytes.prefix(24), as: UTF8.self).unicodeScalars.map { scalar in
            scalar.value < 0x20 || (scalar.value >= 0x7F && scalar.value < 0xA0) || scalar.properties.isBidiControl
                ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
        }.joined()
        return "'" + text + (bytes.count > 24 ? "…'" : "'")
    }

    /// ``short(_:)`` for text.
    static func short(_ text: String) -> String { short(Array(text.utf8)) }
}
