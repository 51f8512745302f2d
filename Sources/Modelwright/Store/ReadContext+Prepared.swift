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
        try records(of: try rows(of: request, check, identity, values), limit: request.fetchLimit)
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
        let slots = try self.slots(of: request, check, identity)
        let shape = RequestShape.prepared(identity.key)
        let statement: any DatabaseStatement
        if let kept = connection.keptStatement(for: shape) {
            statement = kept
        } else {
            let entity = try layout.entity(Target.entityName)
            let (sql, _) = try select(entity.selectList, request, entity: entity)
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

    /// Where each argument of the prepared request's SQL comes from on this connection, worked out
    /// on its first run here: the arguments of its two builds, which differ only in their
    /// parameters' stand-ins.
    private func slots<Target: Record>(
        of request: FetchRequest<Target>, _ check: FetchRequest<Target>, _ identity: PreparedIdentity
    ) throws -> [PreparedSlot] {
        if let slots = connection.preparedArguments[identity.key] { return slots }
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
        // An app prepares a few dozen requests; one that prepares a request for each run does not
        // fill the connection's memory.
        if connection.preparedArguments.count > 512 { connection.preparedArguments.removeAll() }
        connection.preparedArguments[identity.key] = slots
        return slots
    }
}
