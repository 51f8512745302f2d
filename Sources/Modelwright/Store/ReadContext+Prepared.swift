extension ReadContext {
    /// Every record the prepared request matches with these parameter values, in its order.
    ///
    /// ```swift
    /// let people = try context.fetch(newest, 42)
    /// ```
    @inlinable public func fetch<Target: Record, each Argument: ColumnValue>(
        _ request: PreparedRequest<Target, repeat each Argument>, _ arguments: repeat each Argument
    ) throws -> [Target] {
        // Inlined into the app, where the parameters' types are known: the values are gathered
        // without a generic function over the parameter pack.
        var values: [SQLValue] = []
        for argument in repeat each arguments {
            values.append(try PreparedIdentity.value(argument, number: values.count + 1))
        }
        return try records(of: request.request, request.check, request.identity, values)
    }

    /// The first record the prepared request matches with these parameter values.
    @inlinable public func fetchOne<Target: Record, each Argument: ColumnValue>(
        _ request: PreparedRequest<Target, repeat each Argument>, _ arguments: repeat each Argument
    ) throws -> Target? {
        var values: [SQLValue] = []
        for argument in repeat each arguments {
            values.append(try PreparedIdentity.value(argument, number: values.count + 1))
        }
        return try firstRecord(of: request.request, request.check, request.firstRow, values)
    }

    /// The records of a prepared request's rows with these values.
    @usableFromInline func records<Target: Record>(
        of request: FetchRequest<Target>, _ check: FetchRequest<Target>, _ identity: PreparedIdentity,
        _ values: [SQLValue]
    ) throws -> [Target] {
        try records(of: try rows(of: request, check, identity, values), limit: identity.fetchLimit)
    }

    /// The record of a prepared request's first row with these values.
    @usableFromInline func firstRecord<Target: Record>(
        of request: FetchRequest<Target>, _ check: FetchRequest<Target>, _ identity: PreparedIdentity,
        _ values: [SQLValue]
    ) throws -> Target? {
        try firstRecord(of: try rows(of: request, check, identity, values))
    }

    /// The prepared request's rows, its statement (kept by the connection for the request) bound
    /// with its fixed values and `values`.
    private func rows<Target: Record>(
        of request: FetchRequest<Target>, _ check: FetchRequest<Target>, _ identity: PreparedIdentity,
        _ values: [SQLValue]
    ) throws -> RowCursor {
        let slots = try identity.slots(for: connection.dialect) ?? self.slots(of: request, check, identity)
        let shape = RequestShape.prepared(identity.key)
        let statement: any DatabaseStatement
        if let kept = connection.keptStatement(for: shape) {
            statement = kept
        } else {
            let entity = try layout.entity(Target.entityName)
            // Rendered, not looked up by its shape: the statement is kept by the request's key.
            let (sql, _) = try render(
                entity.selectList, Self.limited(request, identity), entity: entity, defaultSort: true)
            statement = try connection.keepStatement(sql, for: shape)
        }
        for (index, slot) in slots.enumerated() {
            switch slot {
            case .constant(let value): statement.bind(value, Int32(index + 1))
            case .parameter(let parameter): statement.bind(values[parameter], Int32(index + 1))
            }
        }
        return RowCursor(statement: statement, entity: Target.entityName)
    }

    /// The request as `identity` runs it: limited to one row for `fetchOne`.
    private static func limited<Target: Record>(_ request: FetchRequest<Target>, _ identity: PreparedIdentity)
        -> FetchRequest<Target>
    {
        guard identity.limitsRows else { return request }
        var limited = request
        limited.fetchLimit = identity.fetchLimit
        return limited
    }

    /// Where each argument of the prepared request's SQL comes from on this connection's engine,
    /// worked out on its first run there from the arguments of its two builds. An argument is a
    /// fixed value, the same in both, or a parameter, this request's stand-in for it in both
    /// (``StandIn``); anything else means the builder built two different requests, or used a
    /// parameter of another request.
    private func slots<Target: Record>(
        of request: FetchRequest<Target>, _ check: FetchRequest<Target>, _ identity: PreparedIdentity
    ) throws -> [PreparedSlot] {
        guard request.pageStart == nil else {
            throw StoreError.unsupportedQuery(
                "a prepared request cannot page with after(_:): run a request built for each page")
        }
        let request = Self.limited(request, identity)
        let check = Self.limited(check, identity)
        let entity = try layout.entity(Target.entityName)
        let notTheSame = StoreError.unsupportedQuery(
            "a prepared request's builder built two different requests: it must build the same one every time")
        guard
            selectShape(entity.selectList, request, entity: entity, defaultSort: true)
                == selectShape(entity.selectList, check, entity: entity, defaultSort: true)
        else { throw notTheSame }
        var first = try arguments(of: request, defaultSort: true)
        appendLimit(of: request, to: &first)
        var second = try arguments(of: check, defaultSort: true)
        appendLimit(of: check, to: &second)
        guard first.count == second.count else { throw notTheSame }
        let slots = try zip(first, second).map { first, second -> PreparedSlot in
            let standIns = (StandIn(first), StandIn(second))
            guard standIns.0 != nil || standIns.1 != nil else {
                guard first == second else { throw notTheSame }
                return .constant(first)
            }
            guard let standIn = standIns.0, let other = standIns.1,
                standIn.nonce == identity.nonce, other.nonce == identity.nonce
            else {
                throw StoreError.unsupportedQuery(
                    "a prepared request compares with a parameter of another prepared request: use its own parameters")
            }
            guard standIn.copy == 0, other.copy == 1, other.index == standIn.index,
                standIn.index < identity.parameterCount
            else { throw notTheSame }
            return .parameter(standIn.index)
        }
        identity.keep(slots, for: connection.dialect)
        return slots
    }
}
