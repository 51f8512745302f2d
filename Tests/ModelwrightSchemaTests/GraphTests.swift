import Modelwright
import Testing

@testable import ModelwrightSchema

/// Names resolve into a graph: inverses, inheritance, enums, composites and typed defaults.
struct GraphTests {
    @Test func inversesAreExplicitOrInferredWhenUnambiguous() throws {
        let graph = try graph(
            """
            model M version 1
            entity User {
                trips: Set<Trip> @inverse(owner) @delete(cascade)
                favourite: Trip? @inverse(fans)
                parent: User?
                children: [User]
            }
            entity Trip {
                owner: User
                fans: Set<User>
                stops: [Stop] @delete(deny)
            }
            entity Stop {
                trip: Trip? @delete(noAction)
            }
            """
        )
        let user = try #require(graph.entity(named: "User"))
        #expect(user.relationships.map(\.inverse) == ["owner", "fans", "children", "parent"])
        #expect(user.relationships.map(\.cardinality) == [.toMany, .toOne, .toOne, .toMany])
        #expect(user.relationships.map(\.isOrdered) == [false, false, false, true])
        #expect(user.relationships[0].deleteRule == .cascade)
        #expect(user.relationships[1].deleteRule == .nullify)
        let trip = try #require(graph.entity(named: "Trip"))
        #expect(trip.relationships.map(\.inverse) == ["trips", "favourite", "trip"])
        #expect(trip.relationships[0].isOptional == false)
        #expect(trip.relationships[2].deleteRule == .deny)
        #expect(graph.entity(named: "Stop")?.relationships[0].deleteRule == .noAction)
    }

    @Test func anExplicitClaimSettlesWhatWouldBeAmbiguous() throws {
        let graph = try graph(
            """
            model M version 1
            entity User {
                driving: Set<Trip> @inverse(driver)
                riding: Set<Trip>
            }
            entity Trip {
                driver: User?
                passenger: User? @inverse(riding)
            }
            """
        )
        #expect(graph.entity(named: "Trip")?.relationships.map(\.inverse) == ["driving", "riding"])
    }

    @Test func oneWayRelationshipsAreMarkedAndTakePartInNoInference() throws {
        let text = """
            model M version 1
            entity Person {
                parent: Person?
                children: Set<Person>
                bookmarked: Set<Person> @noInverse
                idol: Person? @noInverse
            }
            """
        let graph = try graph(text)
        let person = try #require(graph.entity(named: "Person"))
        #expect(person.relationships.map(\.inverse) == ["children", "parent", nil, nil])
        #expect(diagnose(text).isEmpty, "@noInverse silences the missing-inverse warning")
        #expect(
            diagnose("model M version 1\nentity A {\n    b: B? @inverse(a)\n}\nentity B {\n    a: A? @noInverse\n}")
                == [
                    "3:20: error: 'B.a' is marked '@noInverse', so it cannot be the inverse of 'A.b'"
                ]
        )
    }

    @Test func inheritanceSharesPropertiesAndInverses() throws {
        let graph = try graph(
            """
            model M version 1
            abstract entity Item {
                title: String
                owner: User?
            }
            entity Note: Item {
                body: String
            }
            entity User {
                items: Set<Item>
            }
            """
        )
        let note = try #require(graph.entity(named: "Note"))
        #expect(note.parent == "Item")
        #expect(graph.entity(named: "Item")?.isAbstract == true)
        #expect(graph.allAttributes(of: note).map(\.name) == ["title", "body"])
        #expect(graph.allRelationships(of: note).map(\.name) == ["owner"])
        #expect(graph.entity(named: "User")?.relationships[0].inverse == "owner")
        #expect(
            diagnose("model M version 1\nentity A { x: Int }\nentity B: A { x: Int }") == [
                "3:15: error: property 'x' is already inherited from 'A'"
            ])
    }

    @Test func enumsGetRawValues() throws {
        let graph = try graph(
            """
            model M version 1
            /// Roles.
            enum Role: String {
                /// A member.
                member
                admin = "administrator"
            }
            enum Priority: Int { low, normal, high = 10, urgent }
            entity User {
                role: Role = .member
                priority: Priority = .high
            }
            """
        )
        let role = graph.enumerations[0]
        #expect(role.schemaDescription.rawType == .string)
        #expect(role.schemaDescription.cases.map(\.rawValue) == ["member", "administrator"])
        #expect(role.doc == ["Roles."])
        #expect(role.caseDocs["member"] == ["A member."])
        let priority = graph.enumerations[1].schemaDescription
        #expect(priority.cases.map(\.rawValue) == ["0", "1", "10", "11"])
        let user = try #require(graph.entity(named: "User"))
        #expect(user.attributes[0].type == .enumeration(role.schemaDescription))
        #expect(user.attributes[1].defaultValue == .enumCase("high"))
        #expect(
            diagnose("model M version 1\nenum E: Int { a = 1, b = 1 }\nenum F: Double { x }") == [
                "2:22: error: cases 'a' and 'b' of enum 'E' share the raw value 1",
                "3:9: error: enum raw type must be 'String' or 'Int', not 'Double'",
            ]
        )
    }

    @Test func compositesHoldFieldsOfBuiltInTypesAndEnums() throws {
        let graph = try graph(
            """
            model M version 1
            composite Address { street: String; zip: String?; kind: Kind = .home }
            enum Kind: String { home, work }
            entity User {
                home: Address?
            }
            """
        )
        let address = try #require(graph.composites.first)
        #expect(address.fields.map(\.name) == ["street", "zip", "kind"])
        #expect(address.fields[1].isOptional)
        guard case .composite(let description)? = graph.entity(named: "User")?.attributes.first?.type else {
            Issue.record("expected a composite attribute")
            return
        }
        #expect(description == address.schemaDescription)
        #expect(
            diagnose("model M version 1\ncomposite A { b: B }\ncomposite B { x: Int }") == [
                "2:18: error: 'B' cannot be the type of a composite field; use one of the built-in types and enums"
            ]
        )
    }

    @Test func everyAttributeTypeAndDefault() throws {
        let graph = try graph(
            """
            model M version 1
            entity All {
                bool: Bool = true
                int16: Int16 = -7
                int32: Int32 = 70000
                int64: Int64 = 9000000000
                int: Int = 1
                double: Double = 2.5
                float: Float = 3
                decimal: Decimal = 19.99
                string: String = "hi"
                date: Date = "2024-05-01T09:30:00Z"
                created: Date = now
                data: Data?
                uuid: UUID = "E621E1F8-C36C-495A-93FC-0C247A3E6E5F"
                url: URL = "https://example.com/a"
                json: Codable<[String]>?
                optional: String? = nil
                early: Date = "0001-01-01T00:00:00Z"
                offset: Date = "1582-10-15T02:00:00+02:00"
            }
            """
        )
        let attributes = try #require(graph.entity(named: "All")).attributes
        #expect(
            attributes.map(\.type) == [
                .bool, .int16, .int32, .int64, .int, .double, .float, .decimal, .string, .date, .date, .data, .uuid,
                .url, .codable(typeName: "[String]"), .string, .date, .date,
            ]
        )
        #expect(
            attributes.map(\.defaultValue) == [
                .bool(true), .integer(-7), .integer(70000), .integer(9_000_000_000), .integer(1), .floatingPoint(2.5),
                .floatingPoint(3), .decimal("19.99"), .string("hi"), .date(secondsSince1970: 1_714_555_800), .now, nil,
                .string("E621E1F8-C36C-495A-93FC-0C247A3E6E5F"), .string("https://example.com/a"), nil, nil,
                // Proleptic Gregorian, as ISO 8601 means: not Foundation's Julian days before 1582.
                .date(secondsSince1970: -62_135_596_800), .date(secondsSince1970: -12_219_292_800),
            ]
        )
        #expect(attributes.map(\.isOptional).filter { $0 }.count == 3)
    }

    @Test func uniquenessIndexesAndSortAreCollected() throws {
        let graph = try graph(
            """
            model M version 1
            entity User {
                username: String @unique
                givenName: String
                familyName: String
                rating: Int16 @indexed
                organization: Organization?
                @unique(givenName, familyName)
                @index(organization, rating)
                @sort(familyName, rating descending)
            }
            entity Organization {
                members: Set<User>
            }
            """
        )
        let user = try #require(graph.entity(named: "User"))
        #expect(user.uniquenessConstraints == [["username"], ["givenName", "familyName"]])
        #expect(user.indexes == [["rating"], ["organization", "rating"]])
        #expect(
            user.defaultSort == [
                SortDescription(attribute: "familyName"), SortDescription(attribute: "rating", ascending: false),
            ])
    }

    @Test func docCommentsReachTheGraph() throws {
        let graph = try graph(
            """
            /// The model.
            model M version 1
            /// A user.
            /// Second line.
            entity User {
                /// The name.
                name: String
            }
            """
        )
        #expect(graph.doc == ["The model."])
        #expect(graph.entities[0].doc == ["A user.", "Second line."])
        #expect(graph.entities[0].attributes[0].doc == ["The name."])
    }

    @Test func docCommentsAndOrderDoNotChangeTheChecksum() throws {
        let original = """
            model M version 1
            /// Users.
            entity User {
                name: String
                rating: Int16 = 0
                trips: Set<Trip>
            }
            entity Trip {
                owner: User?
            }
            """
        let reordered = """
            model M version 1
            entity Trip {
                /// Who owns it.
                owner: User?
            }
            /// People.
            entity User {
                trips: Set<Trip>
                rating: Int16 = 0
                name: String
            }
            """
        let changes = [
            original.replacingOccurrences(of: "name: String", with: "name: String?"),
            original.replacingOccurrences(of: "rating: Int16 = 0", with: "rating: Int32 = 0"),
            original.replacingOccurrences(of: "trips: Set<Trip>", with: "trips: Set<Trip> @delete(cascade)"),
            original.replacingOccurrences(of: "name: String", with: "name: String @unique"),
            original.replacingOccurrences(of: "rating: Int16 = 0", with: "rating: Int16 = 5"),
        ]
        let checksum = SchemaLowering.lower(try graph(original)).checksum
        #expect(SchemaLowering.lower(try graph(reordered)).checksum == checksum)
        for changed in changes {
            #expect(SchemaLowering.lower(try graph(changed)).checksum != checksum)
        }
    }
}
