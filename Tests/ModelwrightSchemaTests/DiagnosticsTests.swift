import Testing

@testable import ModelwrightSchema

/// Every mistake the checker knows is reported at its exact line and column, all in one run.
struct DiagnosticsTests {
    @Test func unknownTypeSuggestsTheClosestName() {
        let text = """
            model M version 1
            entity User {
                organization: Organisation?
            }
            entity Organization {
                name: Strng
            }
            """
        #expect(
            diagnose(text) == [
                "3:19: error: unknown type 'Organisation'",
                "6:11: error: unknown type 'Strng'",
            ]
        )
        #expect(notes(text) == ["3:19: did you mean 'Organization'?", "6:11: did you mean 'String'?"])
    }

    @Test func duplicates() {
        let text = """
            model M version 1
            entity User {
                name: String
                name: String
            }
            entity User {}
            enum Role: String { member, admin, member }
            """
        #expect(
            diagnose(text) == [
                "4:5: error: duplicate property 'name' in entity 'User'",
                "6:8: error: duplicate declaration of 'User'",
                "7:36: error: duplicate case 'member' in enum 'Role'",
            ]
        )
        #expect(notes(text).first == "3:5: 'name' is first declared here")
    }

    @Test func missingInverseIsAWarning() {
        let text = """
            model M version 1
            entity User {
                trips: Set<Trip>
            }
            entity Trip {
                title: String
            }
            """
        #expect(
            diagnose(text) == [
                "3:5: warning: relationship 'User.trips' has no inverse; 'Trip' has no relationship back to 'User'"
            ]
        )
    }

    @Test func inverseNamingAPropertyOfAnotherEntity() {
        let text = """
            model M version 1
            entity User {
                trips: Set<Trip> @inverse(members)
                organization: Organization?
            }
            entity Trip {
                owner: User?
            }
            entity Organization {
                members: Set<User>
            }
            """
        #expect(
            diagnose(text) == [
                "3:31: error: 'Trip' has no relationship 'members' to be the inverse",
                "7:5: warning: relationship 'Trip.owner' has no inverse; 'User' has no relationship back to 'Trip'",
            ]
        )
        #expect(notes(text).first == "3:31: 'members' is a relationship of 'Organization', not of 'Trip'")
    }

    @Test func inverseThatIsAnAttributeOrPointsElsewhere() {
        let text = """
            model M version 1
            entity User {
                trips: Set<Trip> @inverse(title)
                drafts: Set<Trip> @inverse(place)
                owned: Set<Trip> @inverse(owner)
            }
            entity Trip {
                title: String
                place: Place?
                owner: User? @inverse(owned)
            }
            entity Place {
                trips: Set<Trip> @inverse(place)
            }
            """
        #expect(
            diagnose(text) == [
                "3:31: error: inverse 'Trip.title' is an attribute, not a relationship",
                "4:32: error: inverse 'Trip.place' points to 'Place', not back to 'User'",
            ]
        )
    }

    @Test func inversesThatDoNotPointBack() {
        let text = """
            model M version 1
            entity User {
                trips: Set<Trip> @inverse(owner)
                drafts: Set<Trip> @inverse(editor)
            }
            entity Trip {
                owner: User? @inverse(drafts)
                editor: User? @inverse(drafts)
            }
            """
        let found = diagnose(text)
        #expect(
            found.contains(
                "3:5: error: 'User.trips' and 'Trip.owner' do not name each other as inverses ('owner' points back to 'drafts')"
            )
        )
        #expect(found.contains("7:5: error: 'User.drafts' is the inverse of both 'Trip.editor' and 'Trip.owner'"))
    }

    @Test func ambiguousInverse() {
        let text = """
            model M version 1
            entity User {
                trips: Set<Trip>
            }
            entity Trip {
                driver: User?
                passenger: User?
            }
            """
        let found = diagnose(text)
        #expect(
            found.first
                == "3:5: error: the inverse of 'User.trips' is ambiguous: 'driver', 'passenger' on 'Trip' all point back"
        )
        #expect(notes(text).first == "3:21: add '@inverse(driver)' to say which")
    }

    @Test func defaultsAreTypedAgainstTheirAttribute() {
        let text = """
            model M version 1
            entity User {
                rating: Int16 = "high"
                level: Int16 = 40000
                role: Role = .owner
                name: String = nil
                photo: Data? = "x"
                site: URL = "not a url"
                born: Date = "yesterday"
            }
            enum Role: String { member, admin }
            """
        #expect(
            diagnose(text) == [
                "3:21: error: default value \"high\" does not match the attribute's type Int16",
                "4:20: error: 40000 does not fit in Int16 (-32768...32767)",
                "5:18: error: enum 'Role' has no case 'owner'",
                "6:20: error: 'nil' is not a value of a non-optional attribute",
                "7:20: error: Data attributes cannot have a default value",
                "8:17: error: \"not a url\" is not an absolute URL",
                "9:18: error: \"yesterday\" is not an ISO 8601 date",
            ]
        )
    }

    @Test func inheritanceCycleAndNonEntityParent() {
        let text = """
            model M version 1
            entity A: B {}
            entity B: A {}
            entity C: Role {}
            entity D: Missing {}
            enum Role: String { member }
            """
        #expect(
            diagnose(text) == [
                "2:11: error: inheritance cycle: 'A' inherits from itself through 'B'",
                "4:11: error: 'Role' is not an entity; an entity can only inherit from an entity",
                "5:11: error: unknown parent entity 'Missing'",
            ]
        )
    }

    @Test func constraintsNameExistingColumns() {
        let text = """
            model M version 1
            entity User {
                name: String
                trips: Set<Trip>
                home: Address?
                @unique(trips)
                @index(nmae)
                @sort(home)
            }
            entity Trip {
                owner: User?
            }
            composite Address { city: String }
            """
        #expect(
            diagnose(text) == [
                "6:13: error: '@unique' cannot use the to-many relationship 'trips'; only attributes and to-one relationships have a column",
                "7:12: error: '@index' names 'nmae', which is not a property of 'User'",
                "8:11: error: '@sort' cannot use 'home': Address values are not comparable columns",
            ]
        )
        #expect(notes(text).contains("7:12: did you mean 'name'?"))
    }

    @Test func invalidIdentifiers() {
        let text = """
            model M version 1
            entity user {
                Name: String
                café: String
                id: UUID
            }
            """
        #expect(
            diagnose(text) == [
                "2:8: error: type name 'user' must start with an uppercase letter (Core Data requires it)",
                "3:5: error: property name 'Name' must start with a lowercase letter (Core Data requires it)",
                "4:5: error: 'café' is not a valid name: use ASCII letters, digits and underscores (names become Swift and SQL identifiers)",
                "5:5: error: 'id' is reserved for the record's identifier; choose another name",
            ]
        )
        #expect(notes(text).prefix(2) == ["2:8: did you mean 'User'?", "3:5: did you mean 'name'?"])
    }

    @Test func keywordsAreValidNames() throws {
        let graph = try graph(
            """
            model M version 1
            entity Order {
                default: Bool = false
                index: Int32 = 0
                `select`: String
                group: Group?
            }
            entity Group {
                orders: Set<Order>
            }
            """
        )
        #expect(graph.entities.map(\.name) == ["Order", "Group"])
        #expect(graph.entities[0].attributes.map(\.name) == ["default", "index", "select"])
        #expect(graph.entities[0].relationships[0].inverse == "orders")
    }

    @Test func syntaxErrorsAreAllReportedAndParsingGoesOn() {
        let text = """
            model M version 1
            entity User {
                name String
                age: = 3
                rating: Int16 = 0 extra
            }
            enity Trip {}
            entity Stop {
                name: String
            """
        #expect(
            diagnose(text) == [
                "3:10: error: expected ':' and a type after property 'name', found `String`",
                "4:10: error: expected a type, found '='",
                "5:23: error: expected a new line after property 'rating', found `extra`",
                "7:1: error: expected a declaration ('entity', 'enum', 'composite', 'request' or 'migration'), found `enity`",
                "9:17: error: expected '}' to close entity 'Stop'",
            ]
        )
        #expect(notes(text).contains("7:1: did you mean 'entity'?"))
    }

    @Test func annotationsInTheWrongPlace() {
        let text = """
            model M version 1
            entity User {
                name: String @delete(cascade) @sort(name)
                trips: Set<Trip> @unique @indexd
                @indexed
            }
            entity Trip {
                owner: User?
            }
            """
        #expect(
            diagnose(text) == [
                "3:18: error: '@delete' applies to relationships, and 'name' is an attribute",
                "3:35: error: unknown property annotation '@sort'",
                "4:22: error: '@unique' applies to attributes, and 'trips' is a relationship; use '@unique(trips, …)' on the entity for a to-one relationship",
                "4:30: error: unknown property annotation '@indexd'",
                "5:5: error: unknown entity annotation '@indexed'",
            ]
        )
    }

    @Test func toManyMustBeAnEntityAndNotOptional() {
        let text = """
            model M version 1
            entity User {
                tags: [String]
                trips: Set<Trip>?
            }
            entity Trip {
                owner: User?
            }
            """
        #expect(
            diagnose(text) == [
                "3:12: error: '[String]' is a to-many relationship, but 'String' is not an entity",
                "4:21: error: a to-many relationship cannot be optional: an empty collection means 'none'",
            ]
        )
        #expect(notes(text).first == "3:11: to store a collection of values, use 'Codable<[String]>'")
    }

    @Test func codableTypesMustHaveMatchingBrackets() {
        #expect(
            diagnose("model M version 1\nentity A {\n    a: Codable<[String)>\n    b: Codable<>\n}") == [
                "3:23: error: mismatched ')' in 'Codable<…>'; expected ']'",
                "4:15: error: expected a Swift type inside 'Codable<…>'",
            ]
        )
    }

    @Test func intEnumRawValuesDoNotOverflow() {
        #expect(
            diagnose("model M version 1\nenum E: Int { a = 9223372036854775807, b }") == [
                "2:15: error: case 'a' has the largest Int64 raw value, so the next case has none; give it an explicit raw value"
            ]
        )
    }

    @Test func printedInTheCompilerFormat() {
        let diagnostic = ResolvedFile.compile(
            SourceFile(path: "Models/M/M.v1.model", text: "model M version 1\nentity A { x: Y }")
        )
        .diagnostics[0]
        #expect(diagnostic.description == "Models/M/M.v1.model:2:15: error: unknown type 'Y'")
    }
}
