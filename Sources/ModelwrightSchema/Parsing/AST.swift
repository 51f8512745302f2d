/// The syntax tree of one schema file, exactly as written: names are not resolved yet and every
/// node keeps its source range, so later stages can point at it.
public enum AST {
    /// A whole schema file: one complete version of a model.
    public struct File: Sendable {
        /// The file the tree was parsed from.
        public var path: String
        /// The `model Name version N` header, absent only when the file is broken.
        public var header: Header?
        /// The declarations after the header, in order.
        public var declarations: [Declaration]
    }

    /// A name as written, with where it was written.
    public struct Name: Sendable, Hashable {
        /// The name without backticks.
        public var text: String
        /// Where it was written.
        public var range: SourceRange
    }

    /// `model Trips version 3`.
    public struct Header: Sendable {
        /// The model's name.
        public var name: Name
        /// The version number.
        public var version: Int
        /// Where the version number was written.
        public var versionRange: SourceRange
        /// The `///` lines above the header.
        public var doc: [String]
    }

    /// A top-level declaration.
    public enum Declaration: Sendable {
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
    public struct Entity: Sendable {
        /// The entity's name.
        public var name: Name
        /// Whether the entity was declared `abstract`.
        public var isAbstract: Bool
        /// The parent written after `:`.
        public var parent: Name?
        /// The properties, in order.
        public var properties: [Property]
        /// The annotations written on their own line in the body (`@sort(…)`, `@unique(…)`, …).
        public var annotations: [Annotation]
        /// The `///` lines above the declaration.
        public var doc: [String]
        /// From the first keyword to the closing brace.
        public var range: SourceRange
    }

    /// `name: Type = default @annotation…`: an attribute or relationship, or a composite's field.
    public struct Property: Sendable {
        /// The property's name.
        public var name: Name
        /// Its type as written.
        public var type: TypeReference
        /// Its default value, if one was written.
        public var defaultValue: Literal?
        /// The annotations after it on the same line.
        public var annotations: [Annotation]
        /// The `///` lines above it.
        public var doc: [String]
    }

    /// A type as written after a property's colon.
    public struct TypeReference: Sendable {
        /// The shapes a type can take.
        public enum Kind: Sendable {
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
        public var kind: Kind
        /// Whether a `?` followed.
        public var isOptional: Bool
        /// Where the type was written.
        public var range: SourceRange
    }

    /// A literal value: a default, an enum raw value, an annotation argument.
    public struct Literal: Sendable {
        /// The kinds of literal.
        public enum Kind: Sendable, Equatable {
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
        }

        /// What was written.
        public var kind: Kind
        /// Where it was written.
        public var range: SourceRange
    }

    /// `@name` or `@name(arguments)`.
    public struct Annotation: Sendable {
        /// The annotation's name, without `@`.
        public var name: Name
        /// The arguments between parentheses; `nil` when there were no parentheses.
        public var arguments: [Argument]?
        /// From `@` to the closing parenthesis.
        public var range: SourceRange
    }

    /// One comma-separated annotation argument: `from: lastName`, `rating descending`, `"label"`.
    public struct Argument: Sendable {
        /// The label before a colon, as in `from:`.
        public var label: Name?
        /// The names written, in order (`rating descending` is two words).
        public var words: [Name]
        /// A literal written instead of names.
        public var literal: Literal?
        /// Where the argument was written.
        public var range: SourceRange
    }

    /// `enum Role: String { member, admin = "administrator" }`.
    public struct Enumeration: Sendable {
        /// The enum's name.
        public var name: Name
        /// The raw type after the colon (`String` or `Int`).
        public var rawType: Name?
        /// The cases, in order.
        public var cases: [EnumCase]
        /// The `///` lines above the declaration.
        public var doc: [String]
        /// From the keyword to the closing brace.
        public var range: SourceRange
    }

    /// One case of an enum, with an optional explicit raw value.
    public struct EnumCase: Sendable {
        /// The case's name.
        public var name: Name
        /// The raw value after `=`.
        public var rawValue: Literal?
        /// The `///` lines above the case.
        public var doc: [String]
    }

    /// `composite Address { street: String; city: String }`.
    public struct Composite: Sendable {
        /// The composite's name.
        public var name: Name
        /// Its fields.
        public var fields: [Property]
        /// The `///` lines above the declaration.
        public var doc: [String]
        /// From the keyword to the closing brace.
        public var range: SourceRange
    }

    /// `migration from 2 { custom splitName "Split name" }`: what moving from an earlier version needs.
    public struct Migration: Sendable {
        /// The version the migration starts from.
        public var fromVersion: Int
        /// Where that number was written.
        public var fromRange: SourceRange
        /// The custom stages, in order.
        public var customStages: [CustomStage]
        /// The losses of data the step accepts (`lossy …`).
        public var acceptedLosses: [AcceptedLoss]
        /// From the keyword to the closing brace.
        public var range: SourceRange
    }

    /// `lossy User.name "replaced by givenName and familyName"`: data a version step may drop.
    public struct AcceptedLoss: Sendable {
        /// The entity, by its name in the previous version.
        public var entity: Name
        /// The attribute or relationship, by its name in the previous version; `nil` for the whole entity.
        public var property: Name?
        /// Why the loss is fine, for reviewers.
        public var reason: String?
        /// From the keyword to the last name.
        public var range: SourceRange
    }

    /// `custom splitName "Split name into givenName and familyName"`: a stage the app implements.
    public struct CustomStage: Sendable {
        /// The stage's name, which becomes a requirement in generated code.
        public var name: Name
        /// What the stage does, for people.
        public var label: String
        /// The `///` lines above it.
        public var doc: [String]
    }

    /// `request byOwner: Trip where "owner.username ==[c] $username"`: a named fetch request, Core
    /// Data's fetch request template. The predicate is written in `NSPredicate` format.
    public struct Request: Sendable {
        /// The request's name, which becomes a static function of the entity's record type.
        public var name: Name
        /// The entity it fetches.
        public var entity: Name
        /// The predicate, when one was written.
        public var predicate: Predicate?
        /// The predicate's text, as written (decoded from its string literal).
        public var predicateText: String?
        /// The `///` lines above it.
        public var doc: [String]
        /// From the keyword to the end of the declaration.
        public var range: SourceRange
    }

    /// A predicate in `NSPredicate` format, as written. Ranges are offsets in the schema file.
    public indirect enum Predicate: Sendable {
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
    public struct Comparison: Sendable {
        /// `ANY`/`SOME`, `ALL` or `NONE` before the left side.
        public var quantifier: (kind: PredicateQuantifier, range: SourceRange)?
        /// The left side.
        public var left: Operand
        /// The operator.
        public var operation: PredicateOperator
        /// `[c]`, `[d]` or `[cd]` after the operator: fold case, diacritics.
        public var caseInsensitive: Bool
        /// Whether diacritics are folded.
        public var diacriticInsensitive: Bool
        /// Where the operator was written.
        public var operatorRange: SourceRange
        /// The right side.
        public var right: Operand
    }

    /// `ANY`, `ALL` or `NONE`.
    public enum PredicateQuantifier: String, Sendable {
        case any = "ANY"
        case all = "ALL"
        case none = "NONE"
    }

    /// A predicate operator.
    public enum PredicateOperator: String, Sendable {
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
    public enum Operand: Sendable {
        /// `owner.username`, `trips.@count`: names separated by dots.
        case keyPath([Name])
        /// `$username`: a value the request's caller passes; the name is without `$`.
        case variable(Name)
        /// `'Oslo'`, `3`, `2.5`, `TRUE`, `NIL`.
        case literal(Literal)
        /// `{1, 2, 3}`, `{$low, $high}`.
        case list([Operand], SourceRange)

        /// Where the operand was written.
        public var range: SourceRange {
            switch self {
            case .keyPath(let names): SourceRange(start: names[0].range.start, end: names[names.count - 1].range.end)
            case .variable(let name): SourceRange(start: name.range.start - 1, end: name.range.end)
            case .literal(let literal): literal.range
            case .list(_, let range): range
            }
        }
    }
}
