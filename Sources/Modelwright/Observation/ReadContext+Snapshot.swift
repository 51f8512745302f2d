extension ReadContext {
    /// The request's IDs in order, grouped into sections by the value at `sectionKey` (one
    /// section named "" without a key): one query that reads two columns per row and decodes no
    /// record. `expectedCount` (the previous snapshot's, or else a count now) sizes the array of
    /// IDs, which growing by doubling would leave up to twice as large as it needs.
    func snapshot<Target: Record>(
        _ request: FetchRequest<Target>,
        sectionKey: ColumnPath?,
        sectionName: (SQLValue) -> String,
        loader: RecordLoader<Target>,
        expectedCount: Int?
    ) throws -> ResultsSnapshot<Target> {
        let entity = try layout.entity(Target.entityName)
        var columns = "t0.\"id\""
        if let sectionKey {
            columns +=
                ", "
                + (try SQLPredicateRenderer(layout: layout, dialect: connection.dialect).value(
                    at: sectionKey, entity: entity, alias: "t0"))
        }
        let (sql, arguments) = try select(columns, request, entity: entity)
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        for (index, argument) in arguments.enumerated() {
            statement.bind(argument, Int32(index + 1))
        }
        var ids: [Target.ID] = []
        ids.reserveCapacity((try expectedCount ?? count(request)) + 64)
        var sections: [ResultsSection] = []
        var currentKey: SQLValue?
        var start = 0
        func closeSection() {
            guard let key = currentKey else { return }
            let name = sectionName(key)
            let title = name.first.map { String($0).uppercased() } ?? ""
            sections.append(ResultsSection(name: name, indexTitle: title, range: start..<ids.count, key: key))
        }
        while try statement.step() {
            guard let uuid = statement.uuid(0) else {
                throw StoreError.invalidValue(entity: entity.name, message: "a row has no valid ID")
            }
            if sectionKey != nil {
                let key = statement.value(1)
                if key != currentKey {
                    closeSection()
                    currentKey = key
                    start = ids.count
                }
            }
            ids.append(RecordID(uuid))
        }
        if sectionKey == nil { currentKey = .null }
        closeSection()
        return ResultsSnapshot(sections: sections, ids: ids, loader: loader)
    }
}
