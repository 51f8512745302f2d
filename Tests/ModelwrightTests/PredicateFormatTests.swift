import Foundation
@_spi(Generated) import Modelwright
import Testing

/// Conditions render to the exact `NSPredicate` format text a Core Data app can use, with every
/// key and value passed as an argument, never spliced into the text.
struct PredicateFormatTests {
    // MARK: - Constants

    @Test func trueConstantIsTruePredicate() {
        let rendered = PredicateFormatRenderer.render(.constant(true))
        #expect(rendered.format == "TRUEPREDICATE")
        #expect(rendered.arguments == [])
    }

    @Test func falseConstantIsFalsePredicate() {
        let rendered = PredicateFormatRenderer.render(.constant(false))
        #expect(rendered.format == "FALSEPREDICATE")
        #expect(rendered.arguments == [])
    }

    // MARK: - Comparisons

    @Test func anIDIsTheObjectItselfAndThroughAHopTheRelationship() {
        let id = Trip.ID()
        let trip = Trip.request().filter { $0.id == id || $0.owner.id.in([User.ID()]) }
        let rendered = PredicateFormatRenderer.render(trip.condition!)
        #expect(rendered.format == "(%K == %@) OR (%K IN %@)")
        let keys = rendered.arguments.compactMap { argument -> String? in
            if case .keyPath(let key) = argument { return key }
            return nil
        }
        #expect(keys == ["self", "owner"])
    }

    @Test(arguments: [
        (ComparisonOperator.equal, "%K == %@"),
        (.notEqual, "%K != %@"),
        (.less, "%K < %@"),
        (.lessOrEqual, "%K <= %@"),
        (.greater, "%K > %@"),
        (.greaterOrEqual, "%K >= %@"),
    ])
    func comparisonPassesKeyAndValueAsArguments(comparison: ComparisonOperator, format: String) {
        let rendered = PredicateFormatRenderer.render(
            .comparison(ColumnPath(column: "rating"), comparison, .integer(3)))
        #expect(rendered.format == format)
        #expect(rendered.arguments == [.keyPath("rating"), .value(.integer(3))])
    }

    @Test func equalToNullTestsForMissingValue() {
        let rendered = PredicateFormatRenderer.render(.comparison(ColumnPath(column: "nickname"), .equal, .null))
        #expect(rendered.format == "%K == nil")
        #expect(rendered.arguments == [.keyPath("nickname")])
    }

    @Test func notEqualToNullTestsForPresentValue() {
        let rendered = PredicateFormatRenderer.render(.comparison(ColumnPath(column: "nickname"), .notEqual, .null))
        #expect(rendered.format == "%K != nil")
        #expect(rendered.arguments == [.keyPath("nickname")])
    }

    @Test(arguments: [ComparisonOperator.less, .lessOrEqual, .greater, .greaterOrEqual])
    func orderingComparisonWithNullIsFalse(comparison: ComparisonOperator) {
        let rendered = PredicateFormatRenderer.render(.comparison(ColumnPath(column: "rating"), comparison, .null))
        #expect(rendered.format == "FALSEPREDICATE")
        #expect(rendered.arguments == [])
    }

    @Test func everyValueKindIsPassedUnchanged() {
        let values: [SQLValue] = [.integer(-7), .real(2.5), .text("Ada"), .blob(Data([0, 1, 255]))]
        for value in values {
            let rendered = PredicateFormatRenderer.render(.comparison(ColumnPath(column: "value"), .equal, value))
            #expect(rendered.format == "%K == %@")
            #expect(rendered.arguments == [.keyPath("value"), .value(value)])
        }
    }

    @Test func valueThatLooksLikeSyntaxStaysAnArgument() {
        let hostile = "x' OR 1 == 1 OR name == '%K %@ $x"
        let rendered = PredicateFormatRenderer.render(.comparison(ColumnPath(column: "name"), .equal, .text(hostile)))
        #expect(rendered.format == "%K == %@")
        #expect(rendered.arguments == [.keyPath("name"), .value(.text(hostile))])
    }

    // MARK: - Lists and ranges

    @Test func inListPassesValuesAsOneListArgument() {
        let rendered = PredicateFormatRenderer.render(
            .inList(ColumnPath(column: "status"), [.text("open"), .text("held")])
        )
        #expect(rendered.format == "%K IN %@")
        #expect(rendered.arguments == [.keyPath("status"), .list([.text("open"), .text("held")])])
    }

    @Test func inBuiltThroughFieldPassesStoredValues() {
        let rating: Field<Int16> = FieldPath.root.field("rating")
        let rendered = PredicateFormatRenderer.render(rating.in([1, 2, 5]))
        #expect(rendered.format == "%K IN %@")
        #expect(rendered.arguments == [.keyPath("rating"), .list([.integer(1), .integer(2), .integer(5)])])
    }

    @Test func emptyInBuiltThroughFieldIsFalsePredicate() {
        let name: Field<String> = FieldPath.root.field("name")
        let condition = name.in([])
        #expect(condition == .constant(false))
        let rendered = PredicateFormatRenderer.render(condition)
        #expect(rendered.format == "FALSEPREDICATE")
        #expect(rendered.arguments == [])
    }

    @Test func betweenPassesBoundsAsOneListArgument() {
        let rendered = PredicateFormatRenderer.render(.between(ColumnPath(column: "rating"), .integer(2), .integer(4)))
        #expect(rendered.format == "%K BETWEEN %@")
        #expect(rendered.arguments == [.keyPath("rating"), .list([.integer(2), .integer(4)])])
    }

    @Test func betweenBuiltThroughFieldKeepsBoundsInOrder() {
        let score: Field<Double> = FieldPath.root.field("score")
        let rendered = PredicateFormatRenderer.render(score.between(0.5, 1.5))
        #expect(rendered.format == "%K BETWEEN %@")
        #expect(rendered.arguments == [.keyPath("score"), .list([.real(0.5), .real(1.5)])])
    }

    // MARK: - String tests

    @Test(arguments: [
        (StringOperation.hasPrefix, "%K BEGINSWITH %@"),
        (.hasSuffix, "%K ENDSWITH %@"),
        (.contains, "%K CONTAINS %@"),
        (.like, "%K LIKE %@"),
        (.equals, "%K == %@"),
    ])
    func stringTestWithoutOptionsHasNoBrackets(operation: StringOperation, format: String) {
        let rendered = PredicateFormatRenderer.render(.string(ColumnPath(column: "title"), operation, "Ab*?", []))
        #expect(rendered.format == format)
        #expect(rendered.arguments == [.keyPath("title"), .value(.text("Ab*?"))])
    }

    @Test(arguments: [
        (StringOperation.hasPrefix, "%K BEGINSWITH[cd] %@"),
        (.hasSuffix, "%K ENDSWITH[cd] %@"),
        (.contains, "%K CONTAINS[cd] %@"),
        (.like, "%K LIKE[cd] %@"),
        (.equals, "%K ==[cd] %@"),
    ])
    func stringTestOptionsFollowTheOperator(operation: StringOperation, format: String) {
        let options: StringComparisonOptions = [.caseInsensitive, .diacriticInsensitive]
        let rendered = PredicateFormatRenderer.render(.string(ColumnPath(column: "title"), operation, "é", options))
        #expect(rendered.format == format)
        #expect(rendered.arguments == [.keyPath("title"), .value(.text("é"))])
    }

    @Test func caseInsensitiveOnlyIsC() {
        let title: Field<String> = FieldPath.root.field("title")
        let rendered = PredicateFormatRenderer.render(title.hasPrefix("Ab", caseInsensitive: true))
        #expect(rendered.format == "%K BEGINSWITH[c] %@")
        #expect(rendered.arguments == [.keyPath("title"), .value(.text("Ab"))])
    }

    @Test func diacriticInsensitiveOnlyIsD() {
        let title: Field<String> = FieldPath.root.field("title")
        let rendered = PredicateFormatRenderer.render(title.hasSuffix("é", diacriticInsensitive: true))
        #expect(rendered.format == "%K ENDSWITH[d] %@")
        #expect(rendered.arguments == [.keyPath("title"), .value(.text("é"))])
    }

    @Test func stringTestsBuiltThroughFieldUseTheirKeywords() {
        let title: Field<String?> = FieldPath.root.field("title")
        let condition =
            title.contains("a") || title.like("a*b?", caseInsensitive: true, diacriticInsensitive: true)
            || title.equals("Ab", caseInsensitive: true)
        let rendered = PredicateFormatRenderer.render(condition)
        #expect(rendered.format == "(%K CONTAINS %@) OR (%K LIKE[cd] %@) OR (%K ==[c] %@)")
        #expect(
            rendered.arguments == [
                .keyPath("title"), .value(.text("a")),
                .keyPath("title"), .value(.text("a*b?")),
                .keyPath("title"), .value(.text("Ab")),
            ]
        )
    }

    // MARK: - NOT, AND, OR

    @Test func notWrapsItsOperandInParentheses() {
        let rendered = PredicateFormatRenderer.render(
            .not(.comparison(ColumnPath(column: "rating"), .equal, .integer(1))))
        #expect(rendered.format == "NOT (%K == %@)")
        #expect(rendered.arguments == [.keyPath("rating"), .value(.integer(1))])
    }

    @Test func andJoinsParenthesisedOperands() {
        let rendered = PredicateFormatRenderer.render(
            .and([
                .comparison(ColumnPath(column: "a"), .equal, .integer(1)),
                .comparison(ColumnPath(column: "b"), .less, .integer(2)),
                .comparison(ColumnPath(column: "c"), .greater, .integer(3)),
            ])
        )
        #expect(rendered.format == "(%K == %@) AND (%K < %@) AND (%K > %@)")
        #expect(
            rendered.arguments == [
                .keyPath("a"), .value(.integer(1)), .keyPath("b"), .value(.integer(2)), .keyPath("c"),
                .value(.integer(3)),
            ]
        )
    }

    @Test func orJoinsParenthesisedOperands() {
        let rendered = PredicateFormatRenderer.render(
            .or([
                .comparison(ColumnPath(column: "a"), .equal, .integer(1)),
                .comparison(ColumnPath(column: "b"), .equal, .null),
            ])
        )
        #expect(rendered.format == "(%K == %@) OR (%K == nil)")
        #expect(rendered.arguments == [.keyPath("a"), .value(.integer(1)), .keyPath("b")])
    }

    @Test func emptyAndIsTruePredicate() {
        let rendered = PredicateFormatRenderer.render(.and([]))
        #expect(rendered.format == "TRUEPREDICATE")
        #expect(rendered.arguments == [])
    }

    @Test func emptyOrIsFalsePredicate() {
        let rendered = PredicateFormatRenderer.render(.or([]))
        #expect(rendered.format == "FALSEPREDICATE")
        #expect(rendered.arguments == [])
    }

    @Test func singleOperandAndOrRenderJustThatOperand() {
        let operand = Condition.comparison(ColumnPath(column: "rating"), .greaterOrEqual, .integer(3))
        for condition in [Condition.and([operand]), .or([operand])] {
            let rendered = PredicateFormatRenderer.render(condition)
            #expect(rendered.format == "%K >= %@")
            #expect(rendered.arguments == [.keyPath("rating"), .value(.integer(3))])
        }
    }

    @Test func nestedAndOrNotKeepTheirGrouping() {
        let a = Condition.comparison(ColumnPath(column: "a"), .equal, .integer(1))
        let b = Condition.comparison(ColumnPath(column: "b"), .equal, .integer(2))
        let c = Condition.comparison(ColumnPath(column: "c"), .equal, .integer(3))
        let d = Condition.comparison(ColumnPath(column: "d"), .equal, .integer(4))
        let rendered = PredicateFormatRenderer.render(.or([.and([a, .not(.or([b, c]))]), .not(.not(d))]))
        #expect(rendered.format == "((%K == %@) AND (NOT ((%K == %@) OR (%K == %@)))) OR (NOT (NOT (%K == %@)))")
        #expect(
            rendered.arguments == [
                .keyPath("a"), .value(.integer(1)), .keyPath("b"), .value(.integer(2)),
                .keyPath("c"), .value(.integer(3)), .keyPath("d"), .value(.integer(4)),
            ]
        )
    }

    // MARK: - To-one traversal

    @Test func toOneHopsJoinIntoADottedKeyPath() {
        let rendered = PredicateFormatRenderer.render(
            .comparison(ColumnPath(hops: ["trip", "organization"], column: "name"), .equal, .text("Acme"))
        )
        #expect(rendered.format == "%K == %@")
        #expect(rendered.arguments == [.keyPath("trip.organization.name"), .value(.text("Acme"))])
    }

    @Test func toOneFieldsBuiltThroughTypedAPIUseDottedKeyPaths() {
        let user = UserFields(path: .root)
        let rendered = PredicateFormatRenderer.render(user.organization.name == "Acme" && user.organization.isNotNil)
        #expect(rendered.format == "(%K == %@) AND (%K != nil)")
        #expect(rendered.arguments == [.keyPath("organization.name"), .value(.text("Acme")), .keyPath("organization")])
    }

    // MARK: - Quantifiers

    @Test func anyIsSubqueryWithPositiveCount() {
        let rendered = PredicateFormatRenderer.render(
            .quantified(
                RelationshipPath(relationship: "trips"), .any,
                .string(ColumnPath(column: "title"), .contains, "sea", []))
        )
        #expect(rendered.format == "SUBQUERY(%K, $x, $x.%K CONTAINS %@).@count > 0")
        #expect(rendered.arguments == [.keyPath("trips"), .keyPath("title"), .value(.text("sea"))])
    }

    @Test func allIsSubqueryOfCounterexamplesWithZeroCount() {
        let rendered = PredicateFormatRenderer.render(
            .quantified(
                RelationshipPath(relationship: "trips"), .all,
                .comparison(ColumnPath(column: "days"), .less, .integer(8)))
        )
        #expect(rendered.format == "SUBQUERY(%K, $x, NOT ($x.%K < %@)).@count == 0")
        #expect(rendered.arguments == [.keyPath("trips"), .keyPath("days"), .value(.integer(8))])
    }

    @Test func noneIsSubqueryWithZeroCount() {
        let rendered = PredicateFormatRenderer.render(
            .quantified(
                RelationshipPath(relationship: "trips"), .none, .comparison(ColumnPath(column: "ended"), .equal, .null))
        )
        #expect(rendered.format == "SUBQUERY(%K, $x, $x.%K == nil).@count == 0")
        #expect(rendered.arguments == [.keyPath("trips"), .keyPath("ended")])
    }

    @Test func quantifierBuiltThroughTypedAPIPrefixesEveryDestinationKey() {
        let user = UserFields(path: .root)
        let condition = user.trips.any { $0.days >= 3 && ($0.title.hasPrefix("Sea") || $0.organization.name == "Acme") }
        let rendered = PredicateFormatRenderer.render(condition)
        #expect(
            rendered.format
                == "SUBQUERY(%K, $x, ($x.%K >= %@) AND (($x.%K BEGINSWITH %@) OR ($x.%K == %@))).@count > 0"
        )
        #expect(
            rendered.arguments == [
                .keyPath("trips"), .keyPath("days"), .value(.integer(3)), .keyPath("title"), .value(.text("Sea")),
                .keyPath("organization.name"), .value(.text("Acme")),
            ]
        )
    }

    @Test func quantifierThroughToOneHopUsesDottedCollection() {
        let user = UserFields(path: .root)
        let rendered = PredicateFormatRenderer.render(user.organization.members.none { $0.rating < 2 })
        #expect(rendered.format == "SUBQUERY(%K, $x, $x.%K < %@).@count == 0")
        #expect(rendered.arguments == [.keyPath("organization.members"), .keyPath("rating"), .value(.integer(2))])
    }

    @Test func nestedQuantifiersUseOneVariablePerDepth() {
        let user = UserFields(path: .root)
        let condition = user.trips.all { trip in
            trip.stops.any { stop in stop.visits.none { $0.rating >= 4 } }
        }
        let rendered = PredicateFormatRenderer.render(condition)
        #expect(
            rendered.format
                == "SUBQUERY(%K, $x, NOT (SUBQUERY($x.%K, $y, SUBQUERY($y.%K, $z, $z.%K >= %@).@count == 0).@count > 0))"
                + ".@count == 0"
        )
        #expect(
            rendered.arguments == [
                .keyPath("trips"), .keyPath("stops"), .keyPath("visits"), .keyPath("rating"), .value(.integer(4)),
            ]
        )
    }

    @Test func variablesPastTheThirdDepthAreNumbered() {
        let leaf = Condition.comparison(ColumnPath(column: "v"), .equal, .integer(5))
        var condition = leaf
        for _ in 1...5 {
            condition = .quantified(RelationshipPath(relationship: "r"), .any, condition)
        }
        let rendered = PredicateFormatRenderer.render(condition)
        let expected =
            "SUBQUERY(%K, $x, SUBQUERY($x.%K, $y, SUBQUERY($y.%K, $z, SUBQUERY($z.%K, $x4, SUBQUERY($x4.%K, $x5, "
            + "$x5.%K == %@).@count > 0).@count > 0).@count > 0).@count > 0).@count > 0"
        #expect(rendered.format == expected)
        #expect(rendered.arguments == Array(repeating: .keyPath("r"), count: 5) + [.keyPath("v"), .value(.integer(5))])
    }

    @Test func siblingQuantifiersReuseTheirDepthVariable() {
        let user = UserFields(path: .root)
        let rendered = PredicateFormatRenderer.render(user.trips.any { $0.days > 1 } && user.trips.none { $0.days > 9 })
        #expect(
            rendered.format
                == "(SUBQUERY(%K, $x, $x.%K > %@).@count > 0) AND (SUBQUERY(%K, $x, $x.%K > %@).@count == 0)"
        )
        #expect(
            rendered.arguments == [
                .keyPath("trips"), .keyPath("days"), .value(.integer(1)),
                .keyPath("trips"), .keyPath("days"), .value(.integer(9)),
            ]
        )
    }

    // MARK: - Counts

    @Test(arguments: [
        (ComparisonOperator.equal, "%K.@count == %@"),
        (.notEqual, "%K.@count != %@"),
        (.less, "%K.@count < %@"),
        (.lessOrEqual, "%K.@count <= %@"),
        (.greater, "%K.@count > %@"),
        (.greaterOrEqual, "%K.@count >= %@"),
    ])
    func countComparesTheRelationshipCount(comparison: ComparisonOperator, format: String) {
        let rendered = PredicateFormatRenderer.render(.count(RelationshipPath(relationship: "trips"), comparison, 2))
        #expect(rendered.format == format)
        #expect(rendered.arguments == [.keyPath("trips"), .value(.integer(2))])
    }

    @Test func countBuiltThroughTypedAPIInsideSubqueryIsPrefixed() {
        let user = UserFields(path: .root)
        let rendered = PredicateFormatRenderer.render(
            user.organization.trips.count >= 1 && user.trips.any { $0.stops.count == 0 })
        #expect(rendered.format == "(%K.@count >= %@) AND (SUBQUERY(%K, $x, $x.%K.@count == %@).@count > 0)")
        #expect(
            rendered.arguments == [
                .keyPath("organization.trips"), .value(.integer(1)), .keyPath("trips"), .keyPath("stops"),
                .value(.integer(0)),
            ]
        )
    }

    // MARK: - Typed API

    @Test func typedComparisonsRenderStoredValues() {
        let rating: Field<Int16> = FieldPath.root.field("rating")
        let familyName: Field<String> = FieldPath.root.field("familyName")
        let rendered = PredicateFormatRenderer.render(
            rating >= 3 && rating < 5 && familyName.hasPrefix("I", caseInsensitive: true))
        #expect(rendered.format == "(%K >= %@) AND (%K < %@) AND (%K BEGINSWITH[c] %@)")
        #expect(
            rendered.arguments == [
                .keyPath("rating"), .value(.integer(3)), .keyPath("rating"), .value(.integer(5)),
                .keyPath("familyName"), .value(.text("I")),
            ]
        )
    }

    @Test func typedNegationWrapsInNot() {
        let rating: Field<Int16> = FieldPath.root.field("rating")
        let rendered = PredicateFormatRenderer.render(!(rating == 3) || rating != 4)
        #expect(rendered.format == "(NOT (%K == %@)) OR (%K != %@)")
        #expect(
            rendered.arguments == [.keyPath("rating"), .value(.integer(3)), .keyPath("rating"), .value(.integer(4))]
        )
    }

    @Test func optionalFieldComparesWithNilAndWithItsWrappedType() {
        let nickname: Field<String?> = FieldPath.root.field("nickname")
        let rendered = PredicateFormatRenderer.render(nickname == nil || nickname == "Ada" || nickname.isNotNil)
        #expect(rendered.format == "(%K == nil) OR (%K == %@) OR (%K != nil)")
        #expect(
            rendered.arguments == [
                .keyPath("nickname"), .keyPath("nickname"), .value(.text("Ada")), .keyPath("nickname"),
            ])
    }

    @Test func typedComparisonWithNaNIsAConstant() {
        let score: Field<Double> = FieldPath.root.field("score")
        #expect(PredicateFormatRenderer.render(score == .nan).format == "FALSEPREDICATE")
        #expect(PredicateFormatRenderer.render(score < .nan).format == "FALSEPREDICATE")
        #expect(PredicateFormatRenderer.render(score != .nan).format == "TRUEPREDICATE")
    }
}

// MARK: - Fields

/// Hand-written stand-ins for generated record fields: a user, its organization, trips, stops and visits.
/// Rendering reads only paths, so every stand-in names the fixture's `Sample` as its record type.
private struct UserFields: RecordFields {
    typealias Target = Sample
    let path: FieldPath
    var rating: Field<Int16> { path.field("rating") }
    var organization: ToOne<OrganizationFields> { path.toOne("organization") }
    var trips: ToMany<TripFields> { path.toMany("trips") }
}

private struct OrganizationFields: RecordFields {
    typealias Target = Sample
    let path: FieldPath
    var name: Field<String> { path.field("name") }
    var members: ToMany<UserFields> { path.toMany("members") }
    var trips: ToMany<TripFields> { path.toMany("trips") }
}

private struct TripFields: RecordFields {
    typealias Target = Sample
    let path: FieldPath
    var title: Field<String> { path.field("title") }
    var days: Field<Int> { path.field("days") }
    var organization: ToOne<OrganizationFields> { path.toOne("organization") }
    var stops: ToMany<StopFields> { path.toMany("stops") }
}

private struct StopFields: RecordFields {
    typealias Target = Sample
    let path: FieldPath
    var visits: ToMany<VisitFields> { path.toMany("visits") }
}

private struct VisitFields: RecordFields {
    typealias Target = Sample
    let path: FieldPath
    var rating: Field<Int16> { path.field("rating") }
}
