/// A request with parameters, for a read an app repeats with new values: its SQL is rendered and its
/// statement prepared once per connection, and each run only binds the values and steps the rows.
///
/// ```swift
/// static let newest = PreparedRequest { (age: RequestParameter<Int>) in
///     Person.request().filter { $0.age == age }.sorted { [$0.createdAt.descending] }.limit(5)
/// }
///
/// let people = try await store.performQuery { try $0.fetch(Self.newest, 42) }
/// ```
///
/// A ``FetchRequest`` built anew for each run gives the same rows; the store then finds its statement
/// by the request's shape, which it builds and compares on every run. Build a prepared request once (a
/// `static let`, or a property of what runs it) and run it many times.
///
/// A parameter stands for a value in a comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`), of a field of
/// its type or of that type's optional; it may be used more than once. Other tests (`in`, string
/// tests, searches) take values, which are fixed when the request is built. A value that cannot be
/// stored (a NaN), or `nil`, is refused when the request runs. A prepared request cannot page with
/// ``FetchRequest/after(_:)``, and is not observed (``Store/observe(_:)`` takes a ``FetchRequest``).
///
/// The builder runs twice when the request is made, with other stand-ins for the parameters each
/// time: where the two requests' values differ is where each run's values go. It must therefore
/// build the same request both times; one that does not is refused when the request runs.
///
/// ## Topics
///
/// ### Running
/// - ``ReadContext/fetch(_:_:)``
/// - ``ReadContext/fetchOne(_:_:)``
/// - ``ReadContext/count(_:_:)``
/// - ``ReadContext/exists(_:_:)``
public struct PreparedRequest<Target: Record, each Argument: ColumnValue>: Sendable {
    /// The request, each parameter standing in as ``RequestParameter/standIn`` of the first build.
    @usableFromInline let request: FetchRequest<Target>
    /// The request again, with the second build's stand-ins: the arguments that differ are the parameters.
    @usableFromInline let check: FetchRequest<Target>
    /// Its statements' key, and which of its arguments are parameters. Not generic, so that a run
    /// whose statement and arguments are known touches no generic type's metadata (a type with a
    /// parameter pack is looked up by its mangled name).
    @usableFromInline let identity: PreparedIdentity
    /// The same for ``ReadContext/fetchOne(_:_:)``, which runs the request limited to one row.
    @usableFromInline let firstRow: PreparedIdentity
    /// The same for ``ReadContext/count(_:_:)``, which counts the request's rows.
    @usableFromInline let rowCount: PreparedIdentity
    /// The same for ``ReadContext/exists(_:_:)``, which counts at most one row.
    @usableFromInline let existence: PreparedIdentity

    /// The request `build` returns, given a stand-in for each parameter.
    ///
    /// Inlined into the app, where the parameters' types are known: called through the parameter
    /// pack, the first request of a process looks the pack's conformances up at run time, 0.4 M to
    /// 0.7 M instructions (`FetchProbe`: 1,000 sorted fetches 104.63 M against 103.95 M inlined).
    @inlinable public init(_ build: (repeat RequestParameter<each Argument>) -> FetchRequest<Target>) {
        let nonce = UInt64.random(in: 0...0xF_FFFF)  // the 20 bits a stand-in holds (``StandIn``)
        var next = 0
        func parameter<Value>(_ type: Value.Type, copy: Int) -> RequestParameter<Value> {
            defer { next += 1 }
            return RequestParameter(nonce: nonce, index: next, copy: copy)
        }
        request = build(repeat parameter((each Argument).self, copy: 0))
        let count = next
        next = 0
        check = build(repeat parameter((each Argument).self, copy: 1))
        let isScoped = request.scope != nil
        // At most one row: none when the request's limit is 0.
        let oneRow = request.fetchLimit == 0 ? 0 : 1
        identity = PreparedIdentity(
            nonce: nonce, parameterCount: count, isScoped: isScoped, fetchLimit: request.fetchLimit, limitsRows: false,
            counts: false)
        firstRow = PreparedIdentity(
            nonce: nonce, parameterCount: count, isScoped: isScoped, fetchLimit: oneRow, limitsRows: true, counts: false
        )
        rowCount = PreparedIdentity(
            nonce: nonce, parameterCount: count, isScoped: isScoped, fetchLimit: request.fetchLimit, limitsRows: false,
            counts: true)
        existence = PreparedIdentity(
            nonce: nonce, parameterCount: count, isScoped: isScoped, fetchLimit: oneRow, limitsRows: true, counts: true)
    }
}

/// A parameter of a ``PreparedRequest``: the value given when the request runs, compared with a field.
public struct RequestParameter<Value>: Sendable {
    /// The request's own random number (20 bits), so that a parameter that escapes its builder is
    /// known for another request's in the request it is used in.
    @usableFromInline let nonce: UInt64
    /// Its position among the request's parameters.
    @usableFromInline let index: Int
    /// Which of the two builds of the request it stands in (``PreparedRequest/init(_:)``).
    @usableFromInline let copy: Int

    @usableFromInline init(nonce: UInt64, index: Int, copy: Int) {
        self.nonce = nonce
        self.index = index
        self.copy = copy
    }

    /// The value standing in for the parameter in one build (``StandIn``).
    var standIn: SQLValue { StandIn(nonce: nonce, index: index, copy: copy).value }
}

/// What stands in for a parameter in a build of a prepared request: a NaN, which no value a request
/// compares with can be (a comparison with a NaN is decided when the request is built), whose
/// payload holds a marker, the request's random number, the parameter's position and the build.
/// The two builds differ in their stand-ins alone, so each argument of the request's SQL is a
/// fixed value, the same in both, or a parameter, this request's stand-in in both. (A NaN, not
/// bytes: `Data` cost the first request 0.37 M instructions more, `FetchProbe`.)
struct StandIn: Equatable {
    /// The request's random number, 20 bits of it.
    let nonce: UInt64
    let index: Int
    let copy: Int

    /// A quiet NaN with the marker in the high bits of its payload: 12 bits of marker, 20 of
    /// nonce, 18 of position and 1 of build fill its 51 bits.
    private static let quietNaN: UInt64 = 0x7FF8_0000_0000_0000
    private static let marker: UInt64 = 0xA5B << 39
    private static let markerMask: UInt64 = 0xFFF << 39

    var value: SQLValue {
        let payload = Self.marker | (nonce & 0xF_FFFF) << 19 | UInt64(index & 0x3_FFFF) << 1 | UInt64(copy & 1)
        return .real(Double(bitPattern: Self.quietNaN | payload))
    }

    /// The stand-in `value` is, if it is one.
    init?(_ value: SQLValue) {
        guard case .real(let number) = value, number.isNaN else { return nil }
        let bits = number.bitPattern
        guard bits & (Self.quietNaN | Self.markerMask) == Self.quietNaN | Self.marker else { return nil }
        self.init(nonce: bits >> 19 & 0xF_FFFF, index: Int(bits >> 1 & 0x3_FFFF), copy: Int(bits & 1))
    }

    init(nonce: UInt64, index: Int, copy: Int) {
        self.nonce = nonce & 0xF_FFFF
        self.index = index
        self.copy = copy
    }
}

/// Where a prepared request's statements are kept, and where each of its arguments comes from.
@usableFromInline final class PreparedIdentity: Sendable {
    /// Unique in the process, so a statement kept for one prepared request is never found by another.
    let key: Int
    /// The request's random number, which its parameters' stand-ins hold.
    let nonce: UInt64
    /// How many parameters the request has.
    let parameterCount: Int
    /// Whether the request is scoped to a relationship, and its limit: kept here, so that a run
    /// reads no field of the generic request (which would look its type up).
    let isScoped: Bool
    let fetchLimit: Int?
    /// Whether ``fetchLimit`` replaces the request's limit (the one-row statement of `fetchOne`
    /// and `exists`).
    let limitsRows: Bool
    /// Whether the statement counts the request's rows (`count` and `exists`) instead of reading them.
    let counts: Bool
    /// Where each argument of the request's SQL comes from, for each engine's dialect it ran on
    /// (one binds a list as one argument, another a value each). Found by the dialect's type, which
    /// lives as long as the process: a list of a type that is not generic, not a dictionary, whose
    /// type the runtime would look up the first time (0.4 M instructions, `FetchProbe`).
    private let slotsByDialect = Locked<[DialectSlots]>([])

    /// The slots of one dialect.
    private struct DialectSlots {
        let dialect: ObjectIdentifier
        let slots: [PreparedSlot]
    }

    /// The slots worked out for `dialect`, if they were; a scoped request has none kept, since its
    /// arguments depend on the store's layout too (whether its order is a position in a join table).
    func slots(for dialect: any SQLDialect) -> [PreparedSlot]? {
        guard !isScoped else { return nil }
        let dialect = ObjectIdentifier(type(of: dialect))
        return slotsByDialect.withLock { known in known.first { $0.dialect == dialect }?.slots }
    }

    /// Keeps the slots worked out for `dialect`.
    func keep(_ slots: [PreparedSlot], for dialect: any SQLDialect) {
        guard !isScoped else { return }
        let dialect = ObjectIdentifier(type(of: dialect))
        slotsByDialect.withLock { known in
            if !known.contains(where: { $0.dialect == dialect }) {
                known.append(DialectSlots(dialect: dialect, slots: slots))
            }
        }
    }

    private static let lastKey = Locked(0)

    @usableFromInline init(
        nonce: UInt64, parameterCount: Int, isScoped: Bool, fetchLimit: Int?, limitsRows: Bool, counts: Bool
    ) {
        self.nonce = nonce
        self.parameterCount = parameterCount
        self.isScoped = isScoped
        self.fetchLimit = fetchLimit
        self.limitsRows = limitsRows
        self.counts = counts
        key = Self.lastKey.withLock {
            $0 += 1
            return $0
        }
    }

    /// The value of parameter `number` (from 1) as the store binds it. A value that cannot be stored
    /// (a NaN) or is missing is refused: the request's SQL compares with a value, and a comparison
    /// with a missing one is a test a request states when it is built (`isNil`, `isNotNil`).
    @usableFromInline static func value(_ argument: some ColumnValue, number: Int) throws -> SQLValue {
        let value: SQLValue
        do {
            value = try argument.sqlValue
        } catch {
            throw StoreError.unsupportedQuery("parameter \(number) of a prepared request cannot be stored: \(error)")
        }
        guard value != .null else {
            throw StoreError.unsupportedQuery(
                "parameter \(number) of a prepared request is nil: test a missing value with isNil or isNotNil")
        }
        return value
    }
}

/// One argument of a prepared request's SQL: a value fixed when it was built, or a parameter.
enum PreparedSlot: Equatable {
    case constant(SQLValue)
    case parameter(Int)
}

// MARK: - Comparisons with parameters

extension Field where Value: ColumnValue {
    /// The field holds the parameter's value.
    public static func == (field: Field, parameter: RequestParameter<Value>) -> Condition {
        .comparison(field.path, .equal, parameter.standIn)
    }

    /// The field does not hold the parameter's value (true when it is missing).
    public static func != (field: Field, parameter: RequestParameter<Value>) -> Condition {
        .comparison(field.path, .notEqual, parameter.standIn)
    }
}

extension Field where Value: ColumnValue & Comparable {
    /// The field is less than the parameter's value.
    public static func < (field: Field, parameter: RequestParameter<Value>) -> Condition {
        .comparison(field.path, .less, parameter.standIn)
    }

    /// The field is at most the parameter's value.
    public static func <= (field: Field, parameter: RequestParameter<Value>) -> Condition {
        .comparison(field.path, .lessOrEqual, parameter.standIn)
    }

    /// The field is greater than the parameter's value.
    public static func > (field: Field, parameter: RequestParameter<Value>) -> Condition {
        .comparison(field.path, .greater, parameter.standIn)
    }

    /// The field is at least the parameter's value.
    public static func >= (field: Field, parameter: RequestParameter<Value>) -> Condition {
        .comparison(field.path, .greaterOrEqual, parameter.standIn)
    }
}

extension Field where Value: OptionalField, Value.Wrapped: ColumnValue {
    /// The field holds the parameter's value.
    public static func == (field: Field, parameter: RequestParameter<Value.Wrapped>) -> Condition {
        .comparison(field.path, .equal, parameter.standIn)
    }

    /// The field does not hold the parameter's value (true when it is missing).
    public static func != (field: Field, parameter: RequestParameter<Value.Wrapped>) -> Condition {
        .comparison(field.path, .notEqual, parameter.standIn)
    }
}

extension Field where Value: OptionalField, Value.Wrapped: ColumnValue & Comparable {
    /// The field is less than the parameter's value (false when it is missing).
    public static func < (field: Field, parameter: RequestParameter<Value.Wrapped>) -> Condition {
        .comparison(field.path, .less, parameter.standIn)
    }

    /// The field is at most the parameter's value (false when it is missing).
    public static func <= (field: Field, parameter: RequestParameter<Value.Wrapped>) -> Condition {
        .comparison(field.path, .lessOrEqual, parameter.standIn)
    }

    /// The field is greater than the parameter's value (false when it is missing).
    public static func > (field: Field, parameter: RequestParameter<Value.Wrapped>) -> Condition {
        .comparison(field.path, .greater, parameter.standIn)
    }

    /// The field is at least the parameter's value (false when it is missing).
    public static func >= (field: Field, parameter: RequestParameter<Value.Wrapped>) -> Condition {
        .comparison(field.path, .greaterOrEqual, parameter.standIn)
    }
}
