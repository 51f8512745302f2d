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
        return try firstRecord(of: request.request, request.check, request.identity, values)
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
            let (sql, _) = try render(entity.selectList, request, entity: entity, defaultSort: true)
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

    /// Where each argument of the prepared request's SQL comes from on this connection's engine,
    /// worked out on its first run there: the arguments of its two builds, which differ only in
    /// their parameters' stand-ins.
    private func slots<Target: Record>(
        of request: FetchRequest<Target>, _ check: FetchRequest<Target>, _ identity: PreparedIdentity
    ) throws -> [PreparedSlot] {
        guard request.pageStart == nil else {
            throw StoreError.unsupportedQuery(
                "a prepared request cannot page with after(_:): run a request built for each page")
        }
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
            guard first != second else { return .constant(first) }
            guard case .integer(let standIn) = first, standIn >= 0, standIn % 2 == 0, second == .integer(standIn + 1),
                standIn / 2 < identity.parameterCount
            else { throw notTheSame }
            return .parameter(Int(standIn / 2))
        }
        identity.keep(slots, for: connection.dialect)
        return slots
    }
}
