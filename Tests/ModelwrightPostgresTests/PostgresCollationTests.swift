import Foundation
import Modelwright
import ModelwrightPostgres
import ModelwrightTestSupport
import Testing
import Trips

/// Text orders by code point on PostgreSQL whatever the database's collation: on a database whose
/// default collation is ICU's `en-US` (where `a` sorts before `B`), sorts and comparisons give
/// exactly the order SQLite gives, drawn strings of both cases, accents, digits, punctuation, Greek,
/// CJK and emoji.
@Suite(.heavy, .enabled(if: postgresIsAvailable, "PostgreSQL is not installed"))
struct PostgresCollationTests {
    private static let alphabet = Array("aAbBzZ09 _-.,éÉèeEàÀñÑßøÆαΑΩ漢🙂\u{301}")

    private static func draw(_ random: inout SplitMix64) -> String {
        String((0..<(1 + Int(random.next() % 6))).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
    }

    /// A new database whose default collation is ICU's `en-US`, or `nil` (with the reason printed)
    /// when this server cannot make one.
    private static func icuDatabase() throws -> PostgresConfiguration? {
        let cluster = try #require(PostgresCluster.shared)
        let name = "mw_icu_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())"
        do {
            try cluster.psql(
                "CREATE DATABASE \(name) LOCALE_PROVIDER icu ICU_LOCALE 'en-US' TEMPLATE template0",
                database: "postgres")
        } catch {
            print("PostgresCollationTests skipped: this server cannot create an ICU database: \(error)")
            return nil
        }
        // The collation is in effect: under en-US `a` sorts before `B`, by code point it does not.
        let order = try cluster.psql(
            "SELECT 'a' < 'B', datlocprovider FROM pg_database WHERE datname = '\(name)'", database: name)
        #expect(order.trimmingCharacters(in: .whitespacesAndNewlines) == "t|i", "\(order)")
        return PostgresConfiguration(cluster.connectionString(database: name))
    }

    @Test(arguments: 0..<3 as Range<UInt64>)
    func textOrdersByCodePointOnAnICUDatabaseAsOnSQLite(seed: UInt64) async throws {
        guard let configuration = try Self.icuDatabase() else { return }
        var random = SplitMix64(seed: seed)
        let names = (0..<60).map { _ in Self.draw(&random) }
        let users = names.enumerated().map { index, name in
            User(
                username: String(format: "u%03d", index), givenName: "G", familyName: name,
                joinedAt: Date(timeIntervalSinceReferenceDate: 790_000_000))
        }
        let pivots = (0..<8).map { _ in Self.draw(&random) }
        let postgres = try Store(postgres: configuration, schema: Trips.schema, readers: 1)
        let sqlite = try Store.inMemory(schema: Trips.schema)
        var orders: [[[String]]] = []
        for store in [postgres, sqlite] {
            _ = try await store.performAndSave { try $0.batchInsert(users) }
            let order = try await store.performQuery { context in
                var order = [
                    try context.fetch(User.request().sorted { [$0.familyName.ascending, $0.username.ascending] })
                        .map(\.familyName),
                    try context.fetch(User.request().sorted { [$0.familyName.descending, $0.username.ascending] })
                        .map(\.familyName),
                ]
                for pivot in pivots {
                    order.append(
                        try context.fetch(
                            User.request().filter { $0.familyName < pivot }.sorted { [$0.username.ascending] }
                        ).map(\.familyName))
                    order.append(
                        try context.fetch(
                            User.request().filter { $0.familyName >= pivot }.sorted { [$0.username.ascending] }
                        ).map(\.familyName))
                }
                return order
            }
            orders.append(order)
        }
        try postgres.close()
        try sqlite.close()
        // Code point order, which is UTF-8 byte order: what SQLite's BINARY collation compares.
        let codePoint = names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
        #expect(orders[1].first == codePoint)
        #expect(orders[0].first == codePoint)
        for (index, (onPostgres, onSQLite)) in zip(orders[0], orders[1]).enumerated() {
            #expect(onPostgres == onSQLite, "order \(index): PostgreSQL \(onPostgres), SQLite \(onSQLite)")
        }
    }
}
