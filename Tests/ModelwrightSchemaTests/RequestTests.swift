import Modelwright
import ModelwrightTestSupport
import Testing

@testable import ModelwrightSchema

/// Named requests: `request name: Entity where "NSPredicate format"`, resolved against the graph
/// with typed parameters, and every mistake reported at its line and column inside the predicate.
struct RequestTests {
    private static let model = """
        model M version 1
        entity User {
            name: String
            nickname: String?
            rating: Int16 = 0
            joinedAt: Date = now
            avatar: Data?
            kind: Kind = .member
            team: Team?
            trips: Set<Trip>
        }
        entity Team {
            title: String
            members: Set<User>
        }
        entity Trip {
            title: String
            owner: User
            budget: Decimal?
        }
        enum Kind: String {
            member
            admin = "administrator"
        }

        """

    private func requests(_ declarations: String) throws -> [EntityGraph.Request] {
        try graph(Self.model + declarations).requests
    }

    private func errors(_ declarations: String) -> [String] {
        diagnose(Self.model + declarations)
    }

    /// The line the first declaration after the model is on.
    private static let line = model.split(separator: "\n", omittingEmptySubsequences: false).count

    @Test func variablesBecomeTypedParametersInOrderOfFirstUse() throws {
        let request = try #require(
            try requests(
                #"request search: User where "name BEGINSWITH[cd] $PREFIX AND rating >= $MIN_RATING AND team == $team AND trips.@count > $count AND nickname IN $nicknames AND name != $PREFIX""#
            ).first)
        #expect(request.name == "search")
        #expect(request.entity == "User")
        #expect(
            request.parameters == [
                .init(name: "prefix", variable: "PREFIX", kind: .value(.string)),
                .init(name: "minRating", variable: "MIN_RATING", kind: .value(.int16)),
                .init(name: "team", variable: "team", kind: .id(entity: "Team")),
                .init(name: "count", variable: "count", kind: .count),
                .init(name: "nicknames", variable: "nicknames", kind: .list(.string)),
            ])
        #expect(RequestResolver.parameterName("SITE_ID") == "siteID")
        #expect(RequestResolver.parameterName("humanName") == "humanName")
        #expect(RequestResolver.parameterName("Status") == "status")
    }

    @Test func constantsAreTypedAgainstTheAttribute() throws {
        let request = try #require(
            try requests(
                #"request r: User where "kind == 'administrator' AND rating < -2 AND joinedAt > '2024-01-01T00:00:00Z' AND nickname == nil""#
            ).first)
        guard case .and(let parts) = request.predicate, parts.count == 4,
            case .comparison(let kind) = parts[0], case .comparison(let rating) = parts[1],
            case .comparison(let joined) = parts[2], case .comparison(let nickname) = parts[3]
        else {
            Issue.record("unexpected shape: \(String(describing: request.predicate))")
            return
        }
        #expect(kind.values == [.constant(.enumCase("admin"))], "an enum compares by raw value, as Core Data stores it")
        #expect(rating.values == [.constant(.integer(-2))])
        #expect(joined.values == [.constant(.date(secondsSince1970: 1_704_067_200))])
        #expect(nickname.values == [.constant(nil)])
    }

    @Test func aVariableOnTheLeftIsTurnedAround() throws {
        let request = try #require(try requests(#"request r: User where "$low < rating""#).first)
        guard case .comparison(let comparison) = request.predicate else {
            Issue.record("expected a comparison")
            return
        }
        #expect(comparison.path == ["rating"])
        #expect(comparison.operation == .greater)
    }

    @Test func quantifiersReachThroughToManyRelationships() throws {
        let request = try #require(try requests(#"request r: Team where "NONE members.trips.@count > 2""#).first)
        guard case .quantified(let path, let quantifier, .comparison(let inner)) = request.predicate else {
            Issue.record("expected a quantified condition, got \(String(describing: request.predicate))")
            return
        }
        #expect(path == ["members"])
        #expect(quantifier == .none)
        #expect(inner.path == ["trips"])
        #expect(inner.target == .count)
    }

    @Test func mistakesPointIntoThePredicate() {
        let line = Self.line
        let cases: [(String, String)] = [
            (
                #"request r: User where "team.titel == $t""#,
                "\(line):29: error: 'Team' has no attribute or relationship 'titel'"
            ),
            (
                #"request r: User where "trips.title == 'x'""#,
                "\(line):24: error: 'trips' is a to-many relationship: write ANY, ALL or NONE before the key path, or compare 'trips.@count'"
            ),
            (
                #"request r: User where "rating == 'high'""#,
                "\(line):34: error: constant \"high\" does not match the attribute's type Int16"
            ),
            (
                #"request r: User where "name == $x OR rating == $x""#,
                "\(line):48: error: $x is used as an Int16 here and as a String before"
            ),
            (
                #"request r: User where "avatar < $a""#,
                "\(line):31: error: < needs values with an order, and 'avatar' is Data"
            ),
            (
                #"request r: User where "rating BEGINSWITH 'x'""#,
                "\(line):31: error: BEGINSWITH compares strings, and 'rating' is an Int16"
            ),
            (
                #"request r: User where "name == 'x' AND""#,
                "\(line):39: error: expected a key path, a $variable or a constant, found the end of the predicate"
            ),
            (
                #"request r: User where "name MATCHES '.*'""#,
                "\(line):29: error: MATCHES (regular expressions) is not supported; use LIKE, BEGINSWITH, ENDSWITH or CONTAINS"
            ),
            (
                #"request r: User where "SUBQUERY(trips, $t, $t.title == 'x').@count > 0""#,
                "\(line):24: error: SUBQUERY is not supported; use ANY, ALL or NONE with a key path through the to-many relationship"
            ),
            (
                #"request r: Usr"#,
                "\(line):12: error: request 'r' fetches unknown entity 'Usr'"
            ),
            (
                #"request r: User where "name == \"x\" AND ratin > 1""#,
                "\(line):42: error: 'User' has no attribute or relationship 'ratin'"
            ),
            (
                #"request request: User"#,
                "\(line):9: error: 'request' is a member every generated record has; choose another request name"
            ),
            (
                #"request r: Trip where "owner == nil""#,
                "\(line):33: error: NIL never matches here: the value is never missing"
            ),
        ]
        for (declaration, expected) in cases {
            #expect(errors(declaration) == [expected], "\(declaration)")
        }
    }

    @Test func twoRequestsCannotShareAName() {
        let found = errors("request r: User\nrequest r: Trip\n")
        #expect(found == ["\(Self.line + 1):9: error: duplicate request 'r'"])
    }

    @Test func deepNestingIsAnErrorNotACrash() {
        let deep = String(repeating: "(", count: 200) + "name == 'x'" + String(repeating: ")", count: 200)
        let found = errors(#"request r: User where ""# + deep + "\"")
        #expect(found.count == 1)
        #expect(found.first?.contains("nests more than 64 levels deep") == true)
    }

    @Test func anyJumbleOfPredicateTokensIsAPredicateOrOneError() {
        // Deterministic pseudo-random predicates from the grammar's pieces, escapes and stray bytes.
        let pieces = [
            "name", "team", ".", "title", "trips", "@count", "@sum", "ANY", "NONE", "==", "!=", "<", ">=", "=<",
            "BEGINSWITH", "[cd]", "[", "]", "IN", "BETWEEN", "{", "}", ",", "(", ")", "AND", "||", "NOT", "!", "$x",
            "$", "'a'", "'", "\\\"", "\\", "3", "-", "2.5e", "NIL", "TRUE", "SUBQUERY", "é", " ",
        ]
        var state = SplitMix64(seed: 42)
        for _ in 0..<500 {
            var predicate = ""
            for _ in 0..<Int.random(in: 1...12, using: &state) {
                predicate += pieces[Int.random(in: 0..<pieces.count, using: &state)] + " "
            }
            let (graph, diagnostics) = checked(
                SourceFile(path: "Test.v1.model", text: Self.model + "request r: User where \"\(predicate)\"\n"))
            let errors = diagnostics.filter { $0.severity == .error }
            #expect(graph?.requests.count == 1 || errors.count >= 1, "\(predicate)")
        }
    }
}
