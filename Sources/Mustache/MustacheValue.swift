/// The data a Mustache template renders.
///
/// Templates stay logic-less: the generator works out everything a template shows (names, flags,
/// lists of attributes) and hands it over as these values. Literals build them directly:
///
/// ```swift
/// let context: MustacheValue = [
///     "entity": "User",
///     "isAbstract": false,
///     "attributes": [
///         ["name": "username", "type": "String"],
///         ["name": "rating", "type": "Int16"],
///     ],
/// ]
/// ```
///
/// In a section (`{{#name}}…{{/name}}`) `null`, `false` and an empty list are falsey; every other
/// value is truthy, the empty string and zero included, as the Mustache specification says.
/// An interpolation (`{{name}}`) shows strings as they are, whole numbers without a fraction
/// (`3.0` renders `3`), other numbers in their shortest exact form (`1.21`), booleans as `true` or
/// `false`, and `null` as nothing. Lists and objects have no text form: interpolating one is an error.
///
/// ## Topics
///
/// ### Scalars
/// - ``null``
/// - ``bool(_:)``
/// - ``int(_:)``
/// - ``double(_:)``
/// - ``string(_:)``
///
/// ### Collections
/// - ``list(_:)-swift.enum.case``
/// - ``list(_:)-swift.type.method``
/// - ``object(_:)``
/// - ``MustacheList``
/// - ``MustacheObject``
package enum MustacheValue: Sendable, Equatable {
    /// No value: falsey in sections, empty in interpolations.
    case null
    /// A flag, usually tested by a section.
    case bool(Bool)
    /// A whole number.
    case int(Int)
    /// A number with a fraction.
    case double(Double)
    /// Text.
    case string(String)
    /// A list that a section repeats its content for, once per element.
    case list(MustacheList)
    /// Named values that tags look up by key.
    case object(MustacheObject)
}

extension MustacheValue {
    /// A list of an array's elements.
    package static func list(_ elements: [MustacheValue]) -> MustacheValue {
        .list(MustacheList(elements))
    }
}

/// The elements of a list, in memory the list allocates itself.
///
/// The renderer reads elements where the list stores them (see ``elements``) rather than copying
/// them out of an array: a copy retains the element, and on a machine with several cores those
/// atomic counts took a third of rendering. An empty list (most doc comments are) allocates nothing.
// Kept (issue 16) with the renderer's context stack of addresses, which needs elements that stay put.
package struct MustacheList: Sendable, Equatable, RandomAccessCollection, ExpressibleByArrayLiteral {
    private let storage: Storage?

    /// Creates a list of an array's elements.
    package init(_ elements: consuming [MustacheValue]) {
        storage = elements.isEmpty ? nil : Storage(elements)
    }

    /// Creates a list from a literal.
    package init(arrayLiteral elements: MustacheValue...) {
        self.init(elements)
    }

    /// The position of the first element: always 0.
    package var startIndex: Int { 0 }
    /// The number of elements.
    package var endIndex: Int { storage?.elements.count ?? 0 }

    /// The element at `position`.
    package subscript(position: Int) -> MustacheValue {
        elements[position]
    }

    /// The elements where the list stores them; valid as long as this list, or a copy of it, exists.
    var elements: UnsafeBufferPointer<MustacheValue> {
        storage.map { UnsafeBufferPointer($0.elements) } ?? UnsafeBufferPointer(start: nil, count: 0)
    }

    /// Equal when both hold equal elements in the same order.
    package static func == (lhs: MustacheList, rhs: MustacheList) -> Bool {
        lhs.elementsEqual(rhs)
    }

    /// The elements, written once when the list is made and freed with it, hence `@unchecked Sendable`.
    private final class Storage: @unchecked Sendable {
        let elements: UnsafeMutableBufferPointer<MustacheValue>

        /// Moves the array's elements in, unless another copy of the array shares them.
        init(_ array: consuming [MustacheValue]) {
            let elements = UnsafeMutableBufferPointer<MustacheValue>.allocate(capacity: array.count)
            array.withUnsafeMutableBufferPointer { source in
                guard let start = source.baseAddress else { return }
                elements.baseAddress?.moveInitialize(from: start, count: source.count)
                // What the array frees in place of the elements moved out: `null` holds no reference.
                start.initialize(repeating: .null, count: source.count)
            }
            self.elements = elements
        }

        deinit {
            elements.baseAddress?.deinitialize(count: elements.count)
            elements.deallocate()
        }
    }
}

/// The named values of an object, kept in the order given.
///
/// Rendering looks keys up hundreds of thousands of times, in objects of a handful of short keys.
/// An optimised build compares those in turn faster than it hashes the one looked for (two short
/// names compare as two machine words), and building an object hashes nothing, where a dictionary
/// hashes every key it stores. The entries live in memory the object allocates itself and reads
/// through plain pointers, which keeps a debug build (the build plugin runs one) about as fast as
/// with a dictionary.
// Kept (issue 16) with the context stack of addresses; a `Dictionary` alone cost 3% in debug (0.692 → 0.711 s).
package struct MustacheObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    private let storage: Storage

    /// Creates an object from a literal; when a key repeats, the first value wins.
    package init(dictionaryLiteral elements: (String, MustacheValue)...) {
        storage = Storage(elements)
    }

    /// Creates an object holding a dictionary's entries.
    package init(_ fields: [String: MustacheValue]) {
        storage = Storage(Array(fields))
    }

    /// Creates an object from entries; when a key repeats, the first value wins.
    package init(_ entries: consuming [(String, MustacheValue)]) {
        storage = Storage(entries)
    }

    /// How many entries the object holds, counting a repeated key each time.
    package var count: Int { storage.count }

    /// The value for `key`, or `nil` when the object has no such key.
    package subscript(key: String) -> MustacheValue? {
        storage.value(for: key)
    }

    /// Where the value for `key` is stored, or `nil` when the object has no such key. The address
    /// stays valid as long as this object, or a copy of it, exists.
    func address(of key: String) -> UnsafePointer<MustacheValue>? {
        storage.address(of: key, length: key.utf8.count)
    }

    /// The same, for a key whose UTF-8 length the caller already knows.
    func address(of key: String, length: Int) -> UnsafePointer<MustacheValue>? {
        storage.address(of: key, length: length)
    }

    /// This object's entries, and `other`'s for the keys this one does not have.
    package func adding(_ other: MustacheObject) -> MustacheObject {
        // The first of repeated keys is the one found, so this object's entries go first.
        MustacheObject(storage: Storage(storage, other.storage))
    }

    private init(storage: Storage) {
        self.storage = storage
    }

    /// Equal when both give every key the same value.
    package static func == (lhs: MustacheObject, rhs: MustacheObject) -> Bool {
        lhs.storage.keySet == rhs.storage.keySet && lhs.storage.keySet.allSatisfy { lhs[$0] == rhs[$0] }
    }

    /// The entries, written once when the object is made and freed with it, hence `@unchecked Sendable`.
    /// Keys, values and the keys' UTF-8 lengths share one allocation: a large model's context has
    /// tens of thousands of objects, and each allocation is paid again when the tree is freed.
    private final class Storage: @unchecked Sendable {
        let count: Int
        private let keys: UnsafeMutablePointer<String>
        private let values: UnsafeMutablePointer<MustacheValue>
        /// Compared before the keys: comparing two different strings runs the standard library's
        /// full comparison, and most keys differ in length from the one looked for.
        private let lengths: UnsafeMutablePointer<Int>

        /// Memory for `count` keys, then `count` values, then `count` lengths.
        private static func allocate(count: Int) -> (
            UnsafeMutablePointer<String>, UnsafeMutablePointer<MustacheValue>, UnsafeMutablePointer<Int>
        ) {
            let keysSize = count * MemoryLayout<String>.stride
            let valuesSize = count * MemoryLayout<MustacheValue>.stride
            let memory = UnsafeMutableRawPointer.allocate(
                byteCount: keysSize + valuesSize + count * MemoryLayout<Int>.stride,
                alignment: max(MemoryLayout<String>.alignment, MemoryLayout<MustacheValue>.alignment)
            )
            return (
                memory.bindMemory(to: String.self, capacity: count),
                (memory + keysSize).bindMemory(to: MustacheValue.self, capacity: count),
                (memory + keysSize + valuesSize).bindMemory(to: Int.self, capacity: count)
            )
        }

        /// Moves the entries in, unless another copy of the array shares them.
        init(_ entries: consuming [(String, MustacheValue)]) {
            let count = entries.count
            let (keys, values, lengths) = Self.allocate(count: count)
            // A counted loop over a plain pointer: iterating the array of tuples would ask the
            // runtime for the tuple type's metadata at every step in a debug build.
            entries.withUnsafeMutableBufferPointer { buffer in
                guard let entries = buffer.baseAddress else { return }
                var index = 0
                while index < count {
                    let (key, value) = (entries + index).move()
                    (lengths + index).initialize(to: key.utf8.count)
                    (keys + index).initialize(to: key)
                    (values + index).initialize(to: value)
                    // What the array frees in place of the entry moved out: neither holds a reference.
                    (entries + index).initialize(to: ("", .null))
                    index += 1
                }
            }
            self.count = count
            self.keys = keys
            self.values = values
            self.lengths = lengths
        }

        /// The entries of `first`, then those of `second`.
        init(_ first: Storage, _ second: Storage) {
            count = first.count + second.count
            (keys, values, lengths) = Self.allocate(count: count)
            lengths.initialize(from: first.lengths, count: first.count)
            (lengths + first.count).initialize(from: second.lengths, count: second.count)
            keys.initialize(from: first.keys, count: first.count)
            (keys + first.count).initialize(from: second.keys, count: second.count)
            values.initialize(from: first.values, count: first.count)
            (values + first.count).initialize(from: second.values, count: second.count)
        }

        deinit {
            keys.deinitialize(count: count)
            values.deinitialize(count: count)
            UnsafeMutableRawPointer(keys).deallocate()
        }

        func value(for key: String) -> MustacheValue? {
            address(of: key, length: key.utf8.count)?.pointee
        }

        /// Searches from the start: contexts list the keys templates use most (`name`) first.
        /// A key matches only one of the same UTF-8 length, as tags spell names.
        func address(of key: String, length: Int) -> UnsafePointer<MustacheValue>? {
            var index = 0
            while index < count {
                if lengths[index] == length, keys[index] == key { return UnsafePointer(values + index) }
                index &+= 1
            }
            return nil
        }

        var keySet: Set<String> {
            Set(UnsafeBufferPointer(start: keys, count: count))
        }
    }
}

extension MustacheValue {
    /// Whether a section shows its content for this value.
    var isTruthy: Bool {
        switch self {
        case .null: false
        case .bool(let value): value
        case .list(let values): !values.isEmpty
        case .int, .double, .string, .object: true
        }
    }

    /// The text an interpolation tag shows, or `nil` for lists and objects, which have none.
    var interpolationText: String? {
        switch self {
        case .null: ""
        case .bool(let value): value ? "true" : "false"
        case .int(let value): String(value)
        case .double(let value): Self.text(for: value)
        case .string(let value): value
        case .list, .object: nil
        }
    }

    /// A short name for the kind of value, for error messages.
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .int, .double: "number"
        case .string: "string"
        case .list: "list"
        case .object: "object"
        }
    }

    /// Whole numbers print without `.0` (data decoded from JSON often holds them as doubles);
    /// anything else uses Swift's shortest round-tripping form, so `1.21` stays `1.21`.
    private static func text(for value: Double) -> String {
        if value.isFinite, value.rounded() == value, abs(value) < 1e15 {
            return String(Int64(value))
        }
        return String(value)
    }
}

// MARK: - ExpressibleByStringLiteral

extension MustacheValue: ExpressibleByStringLiteral {
    /// Creates a string value from a literal.
    package init(stringLiteral value: String) {
        self = .string(value)
    }
}

// MARK: - ExpressibleByIntegerLiteral

extension MustacheValue: ExpressibleByIntegerLiteral {
    /// Creates a whole-number value from a literal.
    package init(integerLiteral value: Int) {
        self = .int(value)
    }
}

// MARK: - ExpressibleByFloatLiteral

extension MustacheValue: ExpressibleByFloatLiteral {
    /// Creates a number value from a literal.
    package init(floatLiteral value: Double) {
        self = .double(value)
    }
}

// MARK: - ExpressibleByBooleanLiteral

extension MustacheValue: ExpressibleByBooleanLiteral {
    /// Creates a flag from a literal.
    package init(booleanLiteral value: Bool) {
        self = .bool(value)
    }
}

// MARK: - ExpressibleByArrayLiteral

extension MustacheValue: ExpressibleByArrayLiteral {
    /// Creates a list from a literal.
    package init(arrayLiteral elements: MustacheValue...) {
        self = .list(MustacheList(elements))
    }
}

// MARK: - ExpressibleByDictionaryLiteral

extension MustacheValue: ExpressibleByDictionaryLiteral {
    /// Creates an object from a literal; when a key repeats, the first value wins.
    package init(dictionaryLiteral elements: (String, MustacheValue)...) {
        self = .object(MustacheObject(elements))
    }
}
