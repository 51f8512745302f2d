import Foundation
@_spi(Generated) import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing

/// Full-text indexes across migrations on PostgreSQL: a stage that marks an attribute
/// `@searchable` creates the GIN index over the rows already there, one that renames the
/// attribute and its entity and drops `@searchable` from another attribute rebuilds it under the
/// new names, and after each stage every drawn query selects what `SearchQuery.matches` selects
/// over the rows. The index is part of the schema a store compares at open: dropped by hand, the
/// store is refused, naming it.
@Suite(.heavy, .enabled(if: postgresIsAvailable))
struct PostgresSearchMigrationTests {
    private static let words = ["swift", "sweet", "café", "CAFÉ", "ΟΔΟΣ", "naïve", "x1", "data", "date"]

    private static func schema(version: Int, searchable: [String], renamed: Bool) -> SchemaDescription {
        SchemaDescription(
            modelName: "SearchMigration", version: version,
            entities: [
                EntityDescription(
                    name: renamed ? "Article" : "Doc",
                    attributes: [
                        AttributeDescription(
                            name: renamed ? "heading" : "title", type: .string, renamedFrom: renamed ? "title" : nil),
                        AttributeDescription(name: "body", type: .string, isOptional: true),
                    ],
                    searchableAttributes: searchable,
                    renamedFrom: renamed ? "Doc" : nil)
            ])
    }

    private static func text(_ random: inout SplitMix64) -> String {
        (0..<(1 + Int(random.next() % 5))).map { _ in words[Int(random.next() % UInt64(words.count))] }
            .joined(separator: [" ", "-", " & ", "!"][Int(random.next() % 4)])
    }

    private static func query(_ random: inout SplitMix64) throws -> SearchQuery {
        let word = { (random: inout SplitMix64) in words[Int(random.next() % UInt64(words.count))] }
        switch random.next() % 4 {
        case 0: return try SearchQuery(word(&random))
        case 1: return try SearchQuery(String(word(&random).prefix(2)) + "*")
        case 2: return try SearchQuery("\"\(word(&random)) \(word(&random))\"")
        default: return try SearchQuery("\(word(&random)) OR \(word(&random)) NOT \(word(&random))")
        }
    }

    /// Every drawn query selects on `field` of `store` what `matches` selects over `rows`.
    private static func compare<Target: Record>(
        _ random: inout SplitMix64, _ store: Store, _ rows: [UUID: String], _ type: Target.Type,
        field: @escaping @Sendable (Target.Fields) -> Field<String>, stage: String
    ) async throws {
        for _ in 0..<30 {
            let query = try Self.query(&random)
            let fetched = try await store.performQuery { context in
                Set(try context.fetch(Target.request().filter { field($0).matches(query) }).map(\.id.uuid))
            }
            #expect(fetched == Set(rows.filter { query.matches($0.value) }.keys), "\(stage): \(query)")
        }
    }

    @Test func stagesCreateAndRebuildTheIndexAndTheCheckAtOpenSeesIt() async throws {
        let configuration = try await makeDatabase()
        let plain = Self.schema(version: 1, searchable: [], renamed: false)
        let searchable = Self.schema(version: 2, searchable: ["title", "body"], renamed: false)
        let renamed = Self.schema(version: 3, searchable: ["heading"], renamed: true)
        let toSearchable = MigrationStage.lightweight(from: plain, to: searchable)
        var random = SplitMix64(seed: 0x9A16)
        var rows: [UUID: String] = [:]
        do {
            let store = try Store(postgres: configuration, schema: plain, readers: 1)
            let written = (0..<40).map { _ in Doc(title: Self.text(&random)) }
            try await store.performAndSave { context in
                for doc in written { try context.insert(doc) }
            }
            for doc in written { rows[doc.id.uuid] = doc.title }
            try store.close()
        }
        do {
            let store = try Store(
                postgres: configuration, migrationPlan: MigrationPlan(current: searchable, stages: [toSearchable]),
                readers: 1)
            try await Self.compare(&random, store, rows, Doc.self, field: { $0.title }, stage: "added")
            let written = (0..<20).map { _ in Doc(title: Self.text(&random)) }
            try await store.performAndSave { context in
                for doc in written { try context.insert(doc) }
            }
            for doc in written { rows[doc.id.uuid] = doc.title }
            try await Self.compare(&random, store, rows, Doc.self, field: { $0.title }, stage: "written")
            try store.close()
        }
        let plan = MigrationPlan(
            current: renamed, stages: [toSearchable, .lightweight(from: searchable, to: renamed)])
        do {
            let store = try Store(postgres: configuration, migrationPlan: plan, readers: 1)
            try await Self.compare(&random, store, rows, Article.self, field: { $0.heading }, stage: "renamed")
            let body = try SearchQuery("x")
            await #expect(throws: StoreError.self, "body is no longer searchable") {
                try await store.performQuery { try $0.fetch(Article.request().filter { $0.body.matches(body) }) }
            }
            try store.close()
        }
        // The index dropped by hand: the store is refused, and the difference names it.
        let connection = try await PostgresConnection(configuration)
        try await connection.execute("DROP INDEX \"_modelwright_search_Article\"")
        await connection.close()
        #expect {
            try Store(postgres: configuration, migrationPlan: plan, readers: 1)
        } throws: { error in
            guard case StoreError.unexpectedSchema(_, let differences) = error else { return false }
            return differences.contains { $0.contains("Article") && $0.contains("to_tsvector") }
        }
    }

    /// Hand edits of the text search configuration the indexes use (`pg_catalog.simple`, per
    /// database): an index and a fresh store built on the changed configuration agree, so only the
    /// comparison with the configuration PostgreSQL ships sees them, and without it searches miss
    /// rows (red team rtpg2: `StopWords = english` made "the" find nothing). Each edit is refused at
    /// open with a sentence naming the configuration; undone, the store opens and searches again.
    @Test(arguments: [
        (
            "ALTER TEXT SEARCH DICTIONARY simple (StopWords = english)",
            "ALTER TEXT SEARCH DICTIONARY simple (StopWords)"
        ),
        (
            "ALTER TEXT SEARCH CONFIGURATION simple DROP MAPPING FOR asciiword",
            "ALTER TEXT SEARCH CONFIGURATION simple ADD MAPPING FOR asciiword WITH simple"
        ),
        (
            "ALTER TEXT SEARCH CONFIGURATION simple ALTER MAPPING FOR word WITH english_stem",
            "ALTER TEXT SEARCH CONFIGURATION simple ALTER MAPPING FOR word WITH simple"
        ),
        (
            "ALTER TEXT SEARCH CONFIGURATION simple ADD MAPPING FOR tag WITH simple",
            "ALTER TEXT SEARCH CONFIGURATION simple DROP MAPPING FOR tag"
        ),
    ])
    func aChangedSearchConfigurationIsRefusedAtOpen(edit: String, undo: String) async throws {
        let configuration = try await makeDatabase()
        let schema = Self.schema(version: 1, searchable: ["title"], renamed: false)
        let doc = Doc(title: "the café")
        do {
            let store = try Store(postgres: configuration, schema: schema, readers: 1)
            try await store.performAndSave { try $0.insert(doc) }
            try store.close()
        }
        let connection = try await PostgresConnection(configuration)
        try await connection.execute(edit)
        #expect {
            try Store(postgres: configuration, schema: schema, readers: 1)
        } throws: { error in
            guard case StoreError.unexpectedSchema(_, let differences) = error else { return false }
            return differences.contains { $0.contains("pg_catalog.simple") }
        }
        try await connection.execute(undo)
        await connection.close()
        let store = try Store(postgres: configuration, schema: schema, readers: 1)
        let query = try SearchQuery("the")
        let found = try await store.performQuery { context in
            try context.fetch(Doc.request().filter { $0.title.matches(query) }).map(\.id)
        }
        #expect(found == [doc.id])
        try store.close()
    }
}

/// A document before its entity and title were renamed.
private struct Doc: Record {
    typealias ID = RecordID<Doc>
    static let entityName = "Doc"

    let id: ID
    var title: String
    var body: String?

    init(title: String) {
        id = ID()
        self.title = title
    }

    func encode(to row: inout RowEncoder) throws {
        try row.encode(title)
        try row.encode(body)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        title = try row.decode()
        body = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Doc
        let path: FieldPath
        var title: Field<String> { path.field("title") }
    }
}

/// `Doc` renamed `Article`, its title `heading`.
private struct Article: Record {
    typealias ID = RecordID<Article>
    static let entityName = "Article"

    let id: ID
    var heading: String
    var body: String?

    func encode(to row: inout RowEncoder) throws {
        try row.encode(heading)
        try row.encode(body)
    }

    init(id: ID, row: inout RowDecoder) throws {
        self.id = id
        heading = try row.decode()
        body = try row.decode()
    }

    struct Fields: RecordFields {
        typealias Target = Article
        let path: FieldPath
        var heading: Field<String> { path.field("heading") }
        var body: Field<String?> { path.field("body") }
    }
}
