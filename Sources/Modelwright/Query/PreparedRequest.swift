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
/// ``FetchRequest/after(_:)``.
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
public struct PreparedRequest<Target: Record, each Argument: ColumnValue>: Sendable {
    /// The request, each parameter standing in as ``RequestParameter/standIn`` of the first build.
    @usableFromInline let request: FetchRequest<Target>
    /// The request again, with the second build's stand-ins: the arguments that differ are the parameters.
    @usableFromInline let check: FetchRequest<Target>
    /// Its statements' key, and which of its arguments are parameters. Not generic, so that a run
    /// whose statement and arguments are known touches no generic type's metadata (a type with a
    /// parameter pack is looked up by its mangled name).
    @usableFromInline let identity: PreparedIdentity

    /// The request `build` returns, given a stand-in for each parameter.
    ///
    /// Inlined into the app, where the parameters' types are known: otherwise the first request of a
    /// process looks up each parameter type's conformances at run time (about 1.4 M instructions
    /// in `FetchProbe`, more than 1,000 runs of the request cost beyond raw C).
    @inlinable public init(_ build: (repeat RequestParameter<each Argument>) -> FetchRequest<Target>) {
        var next = 0
        func parameter<Value>(_ type: Value.Type, copy: Int) -> RequestParameter<Value> {
            defer { next += 1 }
            return RequestParameter(index: next, copy: copy)
        }
        request = build(repeat parameter((each Argument).self, copy: 0))
        let count = next
        next = 0
        check = build(repeat parameter((each Argument).self, copy: 1))
        identity = PreparedIdentity(
            parameterCount: count, fetchLimit: request.fetchLimit, isScoped: request.scope != nil)
    }
}

/// A parameter of a ``PreparedRequest``: the value given when the request runs, compared with a field.
public struct RequestParameter<Value>: Sendable {
    /// Its position among the request's parameters.
    @usableFromInline let index: Int
    /// Which of the two builds of the request it stands in (``PreparedRequest/init(_:)``).
    @usableFromInline let copy: Int

    @usableFromInline init(index: Int, copy: Int) {
        self.index = index
        self.copy = copy
    }

    /// The value standing in for the parameter in one build: the two builds differ in it and in
    /// nothing else, so the arguments at which they differ are the parameters, whatever values the
    /// request holds besides.
    var standIn: SQLValue { .integer(Int64(index) * 2 + Int64(copy)) }
}

/// Where a prepared request's statements are kept, and where each of its arguments comes from.
@usableFromInline final class PreparedIdentity: Sendable {
    /// Unique in the process, so a statement kept for one prepared request is never found by another.
    let key: Int
    /// How many parameters the request has.
    let parameterCount: Int
    /// The request's limit and whether it is scoped to a relationship: kept here, so that a run reads
    /// no field of the generic request (which would look its type up).
    let fetchLimit: Int?
    let isScoped: Bool
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

    @usableFromInline init(parameterCount: Int, fetchLimit: Int?, isScoped: Bool) {
        self.parameterCount = parameterCount
        self.fetchLimit = fetchLimit
        self.isScoped = isScoped
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
