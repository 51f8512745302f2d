/// The syntax tree of one schema file, exactly as written: names are not resolved yet and every
/// node keeps its source range, so later stages can point at it.
package enum AST {
    /// A whole schema file: one complete version of a model.
    package struct Root: Sendable {
        /// The file the tree was parsed from.
        package var path: String
        /// The `model Name version N` header, absent only when the file is broken.
        package var header: Header?
        /// The declarations after the header, in order.
        package var declarations: [Declaration]
    }

    /// A name as written, with where it was written.
    package struct Name: Sendable, Hashable {
        /// The name without backticks.
        package var text: String
        /// Where it was written.
        package var range: SourceRange
    }

    /// `model Trips version 3`.
    package struct Header: Sendable {
        /// The model's name.
        package var name: Name
        /// The version number.
        package var version: Int
        /// Where the version number was written.
        package var versionRange: SourceRange
        /// The `///` lines above the header.
        package var doc: [String]
    }

    /// A top-level declaration.
    package enum Declaration: Sendable {
        /// `entity User { … }`.
        case entity(Entity)
        /// `enum Role: String { … }`.
        case enumeration(Enumeration)
        /// `composite Address { … }`.
        case composite(Composite)
        /// `migration from 2 { … }`.
        case migration(Migration)
        /// `request byTitle: Trip where "title == $title"`.
        case request(Request)
    }

    /// `abstract entity Item: Base { … }`.
    package struct Entity: Sendable {
        /// The entity's name.
        package var name: Name
        /// Whether the entity was declared `abstract`.
        package var isAbstract: Bool
        /// The parent written after `:`.
        package var parent: Name?
        /// The properties, in order.
        package var properties: [Property]
        /// The annotations written on their own line in the body (`@sort(…)`, `@unique(…)`, …).
        package var annotations: [Annotation]
        /// The `///` lines above the declaration.
        package var doc: [String]
        /// From the first keyword to the closing brace.
        package var range: SourceRange
    }

    /// `name: Type = default @annotation…`: an attribute or relationship, or a composite's field.
    package struct Property: Sendable {
        /// The property's name.
        package var name: Name
        /// Its type as written.
        package var type: TypeReference
        /// Its default value, if one was written.
        package var defaultValue: Literal?
        /// The annotations after it on the same line.
        package var annotations: [Annotation]
        /// The `///` lines above it.
        package var doc: [String]
    }

    /// A type as written after a property's colon.
    package struct TypeReference: Sendable {
        /// The shapes a type can take.
        package enum Kind: Sendable {
            /// `Name`: a built-in type, an enum, a composite, or an entity (a to-one relationship).
            case named(Name)
            /// `Set<Name>`: an unordered to-many relationship.
            case set(Name)
            /// `[Name]`: an ordered to-many relationship.
            case array(Name)
            /// `Codable<SwiftType>`: an app-defined Codable value stored as JSON; the Swift type as written.
            case codable(String)
        }

        /// What was written.
        package var kind: Kind
        /// Whether a `?` followed.
        package var isOptional: Bool
        /// Where the type was written.
        package var range: SourceRange
    }

    /// A literal value: a default, an enum raw value, an annotation argument.
    package struct Literal: Sendable {
        /// The kinds of literal.
        package enum Kind: Sendable, Equatable {
            /// Digits, possibly with a leading minus, such as `-3`.
            case integer(String)
            /// A decimal number, such as `2.5` or `1e-3`.
            case float(String)
            /// A string literal's decoded text.
            case string(String)
            /// `true` or `false`.
            case bool(Bool)
            /// `.name`: an enum case.
            case enumCase(String)
            /// `nil`.
            case null
            /// `now`: the moment of insertion, for `Date` attributes.
            case now
            /// A bare word written as the default of an attribute whose type is not built in, such
            /// as `role: Role = admin`: always an error, reported once the type is known, so that
            /// the note says what to write for an enum, a composite, a Codable or a relationship.
            case bareWord(String)
        }

        /// What was written.
        package var kind: Kind
        /// Where it was written.
        package var range: SourceRange
    }

    /// `@name` or `@name(arguments)`.
    package struct Annotation: Sendable {
        /// The annotation's name, without `@`.
        package var name: Name
        /// The arguments between parentheses; `nil` when there were no parentheses.
        package var arguments: [Argument]?
        /// From `@` to the closing parenthesis.
        package var range: SourceRange
    }

    /// One comma-separated annotation argument: `from: lastName`, `rating descending`, `"label"`.
    package struct Argument: Sendable {
        /// The label before a colon, as in `from:`.
        package var label: Name?
        /// The names written, in order (`rating descending` is two words).
        package var words: [Name]
        /// A literal written instead of names.
        package var literal: Literal?
        /// Where the argument was written.
        package var range: SourceRange
    }

    /// `enum Role: String { member, admin = "administrator" }`.
    package struct Enumeration: Sendable {
        /// The enum's name.
        package var name: Name
        /// The raw type after the colon (`String` or `Int`).
        package var rawType: Name?
        /// The cases, in order.
        package var cases: [EnumCase]
        /// The `///` lines above the declaration.
        package var doc: [String]
        /// From the keyword to the closing brace.
        package var range: SourceRange
    }

    /// One case of an enum, with an optional explicit raw value.
    package struct EnumCase: Sendable {
        /// The case's name.
        package var name: Name
        /// The raw value after `=`.
        package var rawValue: Literal?
        /// The `///` lines above the case.
        package var doc: [String]
    }

    /// `composite Address { street: String; city: String }`.
    package struct Composite: Sendable {
        /// The composite's name.
        package var name: Name
        /// Its fields.
        package var fields: [Property]
        /// The `///` lines above the declaration.
        package var doc: [String]
        /// From the keyword to the closing brace.
        package var range: SourceRange
    }

    /// `migration from 2 { custom splitName "Split name" }`: what moving from an earlier version needs.
    package struct Migration: Sendable {
        /// The version the migration starts from.
        package var fromVersion: Int
        /// Where that number was written.
        package var fromRange: SourceRange
        /// The custom stages, in order.
        package var customStages: [CustomStage]
        /// The losses of data the step accepts (`lossy …`).
        package var acceptedLosses: [AcceptedLoss]
        /// From the keyword to the closing brace.
        package var range: SourceRange
    }

    /// `lossy User.name "replaced by givenName and familyName"`: data a version step may drop.
    package struct AcceptedLoss: Sendable {
        /// The entity, by its name in the previous version.
        package var entity: Name
        /// The attribute or relationship, by its name in the previous version; `nil` for the whole entity.
        package var property: Name?
        /// Why the loss is fine, for reviewers.
        package var reason: String?
        /// From the keyword to the last name.
        package var range: SourceRange
    }

    /// `custom splitName "Split name into givenName and familyName"`: a stage the app implements.
    package struct CustomStage: Sendable {
        /// The stage's name, which becomes a requirement in generated code.
        package var name: Name
        /// What the stage does, for people.
        package var label: String
        /// The `///` lines above it.
        package var doc: [String]
        /// `covers Book.rating, Book`: the changes of the step the stage takes on, each an entity
        /// and, unless the change is the entity's own, a property (newer version's names); `nil`
        /// when the stage takes every change no other stage covers.
        package var covers: [CoveredChange]? = nil
    }

    /// `Book.rating` after `covers`: a change of the step a custom stage takes on.
    package struct CoveredChange: Sendable {
        /// The entity, by its name in the newer version.
        package var entity: Name
        /// The attribute or relationship, by its name in the newer version; `nil` for the entity's own change.
        package var property: Name?
    }

    /// `request byOwner: Trip where "owner.username ==[c] $username"`: a named fetch request, Core
    /// Data's fetch request template. The predicate is written in `NSPredicate` format.
    package struct Request: Sendable {
        /// The request's name, which becomes a static function of the entity's record type.
        package var name: Name
        /// The entity it fetches.
        package var entity: Name
        /// The predicate, when one was written.
        package var predicate: Predicate?
        /// The predicate's text, as written (decoded from its string literal).
        package var predicateText: String?
        /// The `///` lines above it.
        package var doc: [String]
        /// From the keyword to the end of the declaration.
        package var range: SourceRange
    }

    /// A predicate in `NSPredicate` format, as written. Ranges are offsets in the schema file.
    package indirect enum Predicate: Sendable {
        /// `TRUEPREDICATE` or `FALSEPREDICATE`.
        case constant(Bool, SourceRange)
        /// `NOT p`, `!p`.
        case not(Predicate)
        /// `p AND q`, `p && q`.
        case and([Predicate])
        /// `p OR q`, `p || q`.
        case or([Predicate])
        /// `[ANY] left <operator> right`.
        case comparison(Comparison)
    }

    /// `ANY trips.title BEGINSWITH[c] $prefix`.
    package struct Comparison: Sendable {
        /// `ANY`/`SOME`, `ALL` or `NONE` before the left side.
        package var quantifier: (kind: PredicateQuantifier, range: SourceRange)?
        /// The left side.
        package var left: Operand
        /// The operator.
        package var operation: PredicateOperator
        /// `[c]`, `[d]` or `[cd]` after the operator: fold case, diacritics.
        package var caseInsensitive: Bool
        /// Whether diacritics are folded.
        package var diacriticInsensitive: Bool
        /// Where the operator was written.
        package var operatorRange: SourceRange
        /// The right side.
        package var right: Operand
    }

    /// `ANY`, `ALL` or `NONE`.
    package enum PredicateQuantifier: String, Sendable {
        case any = "ANY"
        case all = "ALL"
        case none = "NONE"
    }

    /// A predicate operator.
    package enum PredicateOperator: String, Sendable {
        case equal = "=="
        case notEqual = "!="
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case beginsWith = "BEGINSWITH"
        case endsWith = "ENDSWITH"
        case contains = "CONTAINS"
        case like = "LIKE"
        case `in` = "IN"
        case between = "BETWEEN"
    }

    /// One side of a comparison.
    package enum Operand: Sendable {
        /// `owner.username`, `trips.@count`: names separated by dots.
        case keyPath([Name])
        /// `$username`: a value the request's caller passes; the name is without `$`.
        case variable(Name)
        /// `'Oslo'`, `3`, `2.5`, `TRUE`, `NIL`.
        case literal(Literal)
        /// `{1, 2, 3}`, `{$low, $high}`.
        case list([Operand], SourceRange)

        /// Where the operand was written.
        package var range: SourceRange {
            switch self {
            case .keyPath(let names): SourceRange(start: names[0].range.start, end: names[names.count - 1].range.end)
            case .variable(let name): SourceRange(start: name.range.start - 1, end: name.range.end)
            case .literal(let literal): literal.range
            case .list(_, let range): range
            }
        }
    }
}
