import Foundation
import ModelwrightTestSupport
import Testing

/// Generated member names come from the namespace model only: a named request that compares a
/// to-one relationship uses the ID field the record's `Fields` declares for it, also when a
/// property of the model already has the name `<relationship>ID` (then the field is
/// `<relationship>RecordID`).
struct GeneratedMemberNameTests {
    @Test(arguments: 0..<12)
    func namedRequestsCompareToOneRelationshipsThroughTheirDeclaredField(seed: Int) throws {
        var random = SplitMix64(seed: 2603, index: seed)
        let count = 1 + random.next(below: 3)
        var attributes: [String] = ["    title: String"]
        var relationships: [String] = []
        var requests: [String] = []
        var collides: [String: Bool] = [:]
        for index in 0..<count {
            let name = ["owner", "buyer", "seller"][index]
            collides[name] = random.next(below: 2) == 0
            if collides[name] == true { attributes.append("    \(name)ID: String?") }
            relationships.append("    \(name): Customer?")
            let test = random.next(below: 2) == 0 ? "\(name) == nil" : "\(name) == $\(name)"
            requests.append("request by\(name.capitalized): Order where \"\(test)\"")
        }
        let model = """
            model Shop version 1

            entity Customer {
                name: String
            }

            entity Order {
            \((attributes + relationships).joined(separator: "\n"))
            }

            \(requests.joined(separator: "\n"))
            """
        let folder = try ModelFolder(["Shop.v1.model": model])
        defer { folder.remove() }
        let queries = try #require(try folder.generate()["Shop+Queries.swift"], "\(model)")
        for (name, collides) in collides {
            let field = collides ? "\(name)RecordID" : "\(name)ID"
            #expect(queries.contains("var \(field): Field<Customer.ID?> { path.field(\"\(name)\") }"), "\(queries)")
            let request = try #require(queries.range(of: "func by\(name.capitalized)("), "\(queries)")
            let body = queries[request.upperBound...].prefix { $0 != "}" }
            #expect(body.contains("$0.\(field)"), "by\(name.capitalized) uses the declared field: \(body)")
        }
    }
}
