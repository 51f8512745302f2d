import Mustache
import Testing

/// One case of the Mustache specification (github.com/mustache/spec, `specs/*.json`, v1.4): the
/// template, data, partials and expected output are the specification's; the names are ours.
struct MustacheSpecCase: Sendable, CustomTestStringConvertible {
    /// The specification file the case comes from, such as `sections`.
    let module: String
    /// A short name for the case.
    let name: String
    let template: String
    let data: MustacheValue
    /// Partial templates by name, as source text.
    let partials: [String: String]
    let expected: String

    var testDescription: String { "\(module)/\(name)" }

    init(
        _ module: String,
        _ name: String,
        template: String,
        data: MustacheValue,
        partials: [String: String] = [:],
        expected: String
    ) {
        self.module = module
        self.name = name
        self.template = template
        self.data = data
        self.partials = partials
        self.expected = expected
    }
}

extension MustacheSpecCase {
    /// Every case of the six required modules.
    static let all: [MustacheSpecCase] = comments + delimiters + interpolation + inverted + partials + sections

    static let comments: [MustacheSpecCase] = [
        .init(
            "comments", "inlineCommentIsDropped",
            template: "12345{{! Comment Block! }}67890",
            data: [:],
            expected: "1234567890"
        ),
        .init(
            "comments", "commentMaySpanLines",
            template: "12345{{!\n  This is a\n  multi-line comment...\n}}67890\n",
            data: [:],
            expected: "1234567890\n"
        ),
        .init(
            "comments", "standaloneLineIsDropped",
            template: "Begin.\n{{! Comment Block! }}\nEnd.\n",
            data: [:],
            expected: "Begin.\nEnd.\n"
        ),
        .init(
            "comments", "indentedStandaloneLineIsDropped",
            template: "Begin.\n  {{! Indented Comment Block! }}\nEnd.\n",
            data: [:],
            expected: "Begin.\nEnd.\n"
        ),
        .init(
            "comments", "standaloneWithCRLF",
            template: "|\r\n{{! Standalone Comment }}\r\n|",
            data: [:],
            expected: "|\r\n|"
        ),
        .init(
            "comments", "standaloneOnFirstLine",
            template: "  {{! I'm Still Standalone }}\n!",
            data: [:],
            expected: "!"
        ),
        .init(
            "comments", "standaloneOnLastLine",
            template: "!\n  {{! I'm Still Standalone }}",
            data: [:],
            expected: "!\n"
        ),
        .init(
            "comments", "multilineStandaloneIsDropped",
            template: "Begin.\n{{!\nSomething's going on here...\n}}\nEnd.\n",
            data: [:],
            expected: "Begin.\nEnd.\n"
        ),
        .init(
            "comments", "indentedMultilineStandaloneIsDropped",
            template: "Begin.\n  {{!\n    Something's going on here...\n  }}\nEnd.\n",
            data: [:],
            expected: "Begin.\nEnd.\n"
        ),
        .init(
            "comments", "inlineKeepsIndentation",
            template: "  12 {{! 34 }}\n",
            data: [:],
            expected: "  12 \n"
        ),
        .init(
            "comments", "inlineKeepsSurroundingSpaces",
            template: "12345 {{! Comment Block! }} 67890",
            data: [:],
            expected: "12345  67890"
        ),
        .init(
            "comments", "neverShowsSameNamedData",
            template: "comments never show: >{{! comment }}<",
            data: ["! comment": 1, "! comment ": 2, "!comment": 3, "comment": 4],
            expected: "comments never show: ><"
        ),
    ]

    static let delimiters: [MustacheSpecCase] = [
        .init(
            "delimiters", "pairChangesDelimiters",
            template: "{{=<% %>=}}(<%text%>)",
            data: ["text": "Hey!"],
            expected: "(Hey!)"
        ),
        .init(
            "delimiters", "regexCharactersAsDelimiters",
            template: "({{=[ ]=}}[text])",
            data: ["text": "It worked!"],
            expected: "(It worked!)"
        ),
        .init(
            "delimiters", "persistAcrossSections",
            template: "[\n{{#section}}\n  {{data}}\n  |data|\n{{/section}}\n\n"
                + "{{= | | =}}\n|#section|\n  {{data}}\n  |data|\n|/section|\n]\n",
            data: ["section": true, "data": "I got interpolated."],
            expected: "[\n  I got interpolated.\n  |data|\n\n  {{data}}\n  I got interpolated.\n]\n"
        ),
        .init(
            "delimiters", "persistAcrossInvertedSections",
            template: "[\n{{^section}}\n  {{data}}\n  |data|\n{{/section}}\n\n"
                + "{{= | | =}}\n|^section|\n  {{data}}\n  |data|\n|/section|\n]\n",
            data: ["section": false, "data": "I got interpolated."],
            expected: "[\n  I got interpolated.\n  |data|\n\n  {{data}}\n  I got interpolated.\n]\n"
        ),
        .init(
            "delimiters", "partialUsesDefaultDelimiters",
            template: "[ {{>include}} ]\n{{= | | =}}\n[ |>include| ]\n",
            data: ["value": "yes"],
            partials: ["include": ".{{value}}."],
            expected: "[ .yes. ]\n[ .yes. ]\n"
        ),
        .init(
            "delimiters", "partialChangeStaysInPartial",
            template: "[ {{>include}} ]\n[ .{{value}}.  .|value|. ]\n",
            data: ["value": "yes"],
            partials: ["include": ".{{value}}. {{= | | =}} .|value|."],
            expected: "[ .yes.  .yes. ]\n[ .yes.  .|value|. ]\n"
        ),
        .init(
            "delimiters", "inlineKeepsSurroundingSpaces",
            template: "| {{=@ @=}} |",
            data: [:],
            expected: "|  |"
        ),
        .init(
            "delimiters", "inlineKeepsLeadingText",
            template: " | {{=@ @=}}\n",
            data: [:],
            expected: " | \n"
        ),
        .init(
            "delimiters", "standaloneLineIsDropped",
            template: "Begin.\n{{=@ @=}}\nEnd.\n",
            data: [:],
            expected: "Begin.\nEnd.\n"
        ),
        .init(
            "delimiters", "indentedStandaloneLineIsDropped",
            template: "Begin.\n  {{=@ @=}}\nEnd.\n",
            data: [:],
            expected: "Begin.\nEnd.\n"
        ),
        .init(
            "delimiters", "standaloneWithCRLF",
            template: "|\r\n{{= @ @ =}}\r\n|",
            data: [:],
            expected: "|\r\n|"
        ),
        .init(
            "delimiters", "standaloneOnFirstLine",
            template: "  {{=@ @=}}\n=",
            data: [:],
            expected: "="
        ),
        .init(
            "delimiters", "standaloneOnLastLine",
            template: "=\n  {{=@ @=}}",
            data: [:],
            expected: "=\n"
        ),
        .init(
            "delimiters", "paddingIsIgnored",
            template: "|{{= @   @ =}}|",
            data: [:],
            expected: "||"
        ),
    ]

    static let interpolation: [MustacheSpecCase] = [
        .init(
            "interpolation", "textWithoutTags",
            template: "Hello from {Mustache}!\n",
            data: [:],
            expected: "Hello from {Mustache}!\n"
        ),
        .init(
            "interpolation", "basic",
            template: "Hello, {{subject}}!\n",
            data: ["subject": "world"],
            expected: "Hello, world!\n"
        ),
        .init(
            "interpolation", "outputIsNotParsedAgain",
            template: "{{template}}: {{planet}}",
            data: ["template": "{{planet}}", "planet": "Earth"],
            expected: "{{planet}}: Earth"
        ),
        .init(
            "interpolation", "escapesHTML",
            template: "These characters should be HTML escaped: {{forbidden}}\n",
            data: ["forbidden": "& \" < >"],
            expected: "These characters should be HTML escaped: &amp; &quot; &lt; &gt;\n"
        ),
        .init(
            "interpolation", "tripleDoesNotEscape",
            template: "These characters should not be HTML escaped: {{{forbidden}}}\n",
            data: ["forbidden": "& \" < >"],
            expected: "These characters should not be HTML escaped: & \" < >\n"
        ),
        .init(
            "interpolation", "ampersandDoesNotEscape",
            template: "These characters should not be HTML escaped: {{&forbidden}}\n",
            data: ["forbidden": "& \" < >"],
            expected: "These characters should not be HTML escaped: & \" < >\n"
        ),
        .init(
            "interpolation", "integer",
            template: "\"{{mph}} miles an hour!\"",
            data: ["mph": 85],
            expected: "\"85 miles an hour!\""
        ),
        .init(
            "interpolation", "tripleInteger",
            template: "\"{{{mph}}} miles an hour!\"",
            data: ["mph": 85],
            expected: "\"85 miles an hour!\""
        ),
        .init(
            "interpolation", "ampersandInteger",
            template: "\"{{&mph}} miles an hour!\"",
            data: ["mph": 85],
            expected: "\"85 miles an hour!\""
        ),
        .init(
            "interpolation", "decimal",
            template: "\"{{power}} jiggawatts!\"",
            data: ["power": 1.21],
            expected: "\"1.21 jiggawatts!\""
        ),
        .init(
            "interpolation", "tripleDecimal",
            template: "\"{{{power}}} jiggawatts!\"",
            data: ["power": 1.21],
            expected: "\"1.21 jiggawatts!\""
        ),
        .init(
            "interpolation", "ampersandDecimal",
            template: "\"{{&power}} jiggawatts!\"",
            data: ["power": 1.21],
            expected: "\"1.21 jiggawatts!\""
        ),
        .init(
            "interpolation", "null",
            template: "I ({{cannot}}) be seen!",
            data: ["cannot": .null],
            expected: "I () be seen!"
        ),
        .init(
            "interpolation", "tripleNull",
            template: "I ({{{cannot}}}) be seen!",
            data: ["cannot": .null],
            expected: "I () be seen!"
        ),
        .init(
            "interpolation", "ampersandNull",
            template: "I ({{&cannot}}) be seen!",
            data: ["cannot": .null],
            expected: "I () be seen!"
        ),
        .init(
            "interpolation", "missing",
            template: "I ({{cannot}}) be seen!",
            data: [:],
            expected: "I () be seen!"
        ),
        .init(
            "interpolation", "tripleMissing",
            template: "I ({{{cannot}}}) be seen!",
            data: [:],
            expected: "I () be seen!"
        ),
        .init(
            "interpolation", "ampersandMissing",
            template: "I ({{&cannot}}) be seen!",
            data: [:],
            expected: "I () be seen!"
        ),
        .init(
            "interpolation", "dottedName",
            template: "\"{{person.name}}\" == \"{{#person}}{{name}}{{/person}}\"",
            data: ["person": ["name": "Joe"]],
            expected: "\"Joe\" == \"Joe\""
        ),
        .init(
            "interpolation", "tripleDottedName",
            template: "\"{{{person.name}}}\" == \"{{#person}}{{{name}}}{{/person}}\"",
            data: ["person": ["name": "Joe"]],
            expected: "\"Joe\" == \"Joe\""
        ),
        .init(
            "interpolation", "ampersandDottedName",
            template: "\"{{&person.name}}\" == \"{{#person}}{{&name}}{{/person}}\"",
            data: ["person": ["name": "Joe"]],
            expected: "\"Joe\" == \"Joe\""
        ),
        .init(
            "interpolation", "dottedNameAnyDepth",
            template: "\"{{a.b.c.d.e.name}}\" == \"Phil\"",
            data: ["a": ["b": ["c": ["d": ["e": ["name": "Phil"]]]]]],
            expected: "\"Phil\" == \"Phil\""
        ),
        .init(
            "interpolation", "dottedNameBrokenChainIsEmpty",
            template: "\"{{a.b.c}}\" == \"\"",
            data: ["a": [:]],
            expected: "\"\" == \"\""
        ),
        .init(
            "interpolation", "dottedNameLaterPartsSkipStack",
            template: "\"{{a.b.c.name}}\" == \"\"",
            data: ["a": ["b": [:]], "c": ["name": "Jim"]],
            expected: "\"\" == \"\""
        ),
        .init(
            "interpolation", "dottedNameFirstPartUsesStack",
            template: "\"{{#a}}{{b.c.d.e.name}}{{/a}}\" == \"Phil\"",
            data: [
                "a": ["b": ["c": ["d": ["e": ["name": "Phil"]]]]],
                "b": ["c": ["d": ["e": ["name": "Wrong"]]]],
            ],
            expected: "\"Phil\" == \"Phil\""
        ),
        .init(
            "interpolation", "dottedNameInnermostFirstPartWins",
            template: "{{#a}}{{b.c}}{{/a}}",
            data: ["a": ["b": [:]], "b": ["c": "ERROR"]],
            expected: ""
        ),
        .init(
            "interpolation", "dottedNameIsNotOneKey",
            template: "{{a.b}}",
            data: ["a.b": "c"],
            expected: ""
        ),
        .init(
            "interpolation", "dottedNameIgnoresDottedKey",
            template: "{{a.b}}",
            data: ["a.b": "c", "a": ["b": "d"]],
            expected: "d"
        ),
        .init(
            "interpolation", "implicitIterator",
            template: "Hello, {{.}}!\n",
            data: "world",
            expected: "Hello, world!\n"
        ),
        .init(
            "interpolation", "implicitIteratorEscapesHTML",
            template: "These characters should be HTML escaped: {{.}}\n",
            data: "& \" < >",
            expected: "These characters should be HTML escaped: &amp; &quot; &lt; &gt;\n"
        ),
        .init(
            "interpolation", "implicitIteratorTriple",
            template: "These characters should not be HTML escaped: {{{.}}}\n",
            data: "& \" < >",
            expected: "These characters should not be HTML escaped: & \" < >\n"
        ),
        .init(
            "interpolation", "implicitIteratorAmpersand",
            template: "These characters should not be HTML escaped: {{&.}}\n",
            data: "& \" < >",
            expected: "These characters should not be HTML escaped: & \" < >\n"
        ),
        .init(
            "interpolation", "implicitIteratorInteger",
            template: "\"{{.}} miles an hour!\"",
            data: 85,
            expected: "\"85 miles an hour!\""
        ),
        .init(
            "interpolation", "keepsSurroundingSpaces",
            template: "| {{string}} |",
            data: ["string": "---"],
            expected: "| --- |"
        ),
        .init(
            "interpolation", "tripleKeepsSurroundingSpaces",
            template: "| {{{string}}} |",
            data: ["string": "---"],
            expected: "| --- |"
        ),
        .init(
            "interpolation", "ampersandKeepsSurroundingSpaces",
            template: "| {{&string}} |",
            data: ["string": "---"],
            expected: "| --- |"
        ),
        .init(
            "interpolation", "aloneOnLineIsNotStandalone",
            template: "  {{string}}\n",
            data: ["string": "---"],
            expected: "  ---\n"
        ),
        .init(
            "interpolation", "tripleAloneOnLineIsNotStandalone",
            template: "  {{{string}}}\n",
            data: ["string": "---"],
            expected: "  ---\n"
        ),
        .init(
            "interpolation", "ampersandAloneOnLineIsNotStandalone",
            template: "  {{&string}}\n",
            data: ["string": "---"],
            expected: "  ---\n"
        ),
        .init(
            "interpolation", "paddingIsIgnored",
            template: "|{{ string }}|",
            data: ["string": "---"],
            expected: "|---|"
        ),
        .init(
            "interpolation", "triplePaddingIsIgnored",
            template: "|{{{ string }}}|",
            data: ["string": "---"],
            expected: "|---|"
        ),
        .init(
            "interpolation", "ampersandPaddingIsIgnored",
            template: "|{{& string }}|",
            data: ["string": "---"],
            expected: "|---|"
        ),
    ]

    static let inverted: [MustacheSpecCase] = [
        .init(
            "inverted", "falseShowsContent",
            template: "\"{{^boolean}}This should be rendered.{{/boolean}}\"",
            data: ["boolean": false],
            expected: "\"This should be rendered.\""
        ),
        .init(
            "inverted", "trueHidesContent",
            template: "\"{{^boolean}}This should not be rendered.{{/boolean}}\"",
            data: ["boolean": true],
            expected: "\"\""
        ),
        .init(
            "inverted", "nullShowsContent",
            template: "\"{{^null}}This should be rendered.{{/null}}\"",
            data: ["null": .null],
            expected: "\"This should be rendered.\""
        ),
        .init(
            "inverted", "objectHidesContent",
            template: "\"{{^context}}Hi {{name}}.{{/context}}\"",
            data: ["context": ["name": "Joe"]],
            expected: "\"\""
        ),
        .init(
            "inverted", "listHidesContent",
            template: "\"{{^list}}{{n}}{{/list}}\"",
            data: ["list": [["n": 1], ["n": 2], ["n": 3]]],
            expected: "\"\""
        ),
        .init(
            "inverted", "emptyListShowsContent",
            template: "\"{{^list}}Yay lists!{{/list}}\"",
            data: ["list": []],
            expected: "\"Yay lists!\""
        ),
        .init(
            "inverted", "twoSections",
            template: "{{^bool}}\n* first\n{{/bool}}\n* {{two}}\n{{^bool}}\n* third\n{{/bool}}\n",
            data: ["bool": false, "two": "second"],
            expected: "* first\n* second\n* third\n"
        ),
        .init(
            "inverted", "nestedFalse",
            template: "| A {{^bool}}B {{^bool}}C{{/bool}} D{{/bool}} E |",
            data: ["bool": false],
            expected: "| A B C D E |"
        ),
        .init(
            "inverted", "nestedTrue",
            template: "| A {{^bool}}B {{^bool}}C{{/bool}} D{{/bool}} E |",
            data: ["bool": true],
            expected: "| A  E |"
        ),
        .init(
            "inverted", "missingShowsContent",
            template: "[{{^missing}}Cannot find key 'missing'!{{/missing}}]",
            data: [:],
            expected: "[Cannot find key 'missing'!]"
        ),
        .init(
            "inverted", "dottedNameTrue",
            template: "\"{{^a.b.c}}Not Here{{/a.b.c}}\" == \"\"",
            data: ["a": ["b": ["c": true]]],
            expected: "\"\" == \"\""
        ),
        .init(
            "inverted", "dottedNameFalse",
            template: "\"{{^a.b.c}}Not Here{{/a.b.c}}\" == \"Not Here\"",
            data: ["a": ["b": ["c": false]]],
            expected: "\"Not Here\" == \"Not Here\""
        ),
        .init(
            "inverted", "dottedNameBrokenChain",
            template: "\"{{^a.b.c}}Not Here{{/a.b.c}}\" == \"Not Here\"",
            data: ["a": [:]],
            expected: "\"Not Here\" == \"Not Here\""
        ),
        .init(
            "inverted", "keepsSurroundingWhitespace",
            template: " | {{^boolean}}\t|\t{{/boolean}} | \n",
            data: ["boolean": false],
            expected: " | \t|\t | \n"
        ),
        .init(
            "inverted", "keepsInternalWhitespace",
            template: " | {{^boolean}} {{! Important Whitespace }}\n {{/boolean}} | \n",
            data: ["boolean": false],
            expected: " |  \n  | \n"
        ),
        .init(
            "inverted", "indentedInlineSections",
            template: " {{^boolean}}NO{{/boolean}}\n {{^boolean}}WAY{{/boolean}}\n",
            data: ["boolean": false],
            expected: " NO\n WAY\n"
        ),
        .init(
            "inverted", "standaloneLinesAreDropped",
            template: "| This Is\n{{^boolean}}\n|\n{{/boolean}}\n| A Line\n",
            data: ["boolean": false],
            expected: "| This Is\n|\n| A Line\n"
        ),
        .init(
            "inverted", "indentedStandaloneLinesAreDropped",
            template: "| This Is\n  {{^boolean}}\n|\n  {{/boolean}}\n| A Line\n",
            data: ["boolean": false],
            expected: "| This Is\n|\n| A Line\n"
        ),
        .init(
            "inverted", "standaloneWithCRLF",
            template: "|\r\n{{^boolean}}\r\n{{/boolean}}\r\n|",
            data: ["boolean": false],
            expected: "|\r\n|"
        ),
        .init(
            "inverted", "standaloneOnFirstLine",
            template: "  {{^boolean}}\n^{{/boolean}}\n/",
            data: ["boolean": false],
            expected: "^\n/"
        ),
        .init(
            "inverted", "standaloneOnLastLine",
            template: "^{{^boolean}}\n/\n  {{/boolean}}",
            data: ["boolean": false],
            expected: "^\n/\n"
        ),
        .init(
            "inverted", "paddingIsIgnored",
            template: "|{{^ boolean }}={{/ boolean }}|",
            data: ["boolean": false],
            expected: "|=|"
        ),
    ]

    static let partials: [MustacheSpecCase] = [
        .init(
            "partials", "includesPartial",
            template: "\"{{>text}}\"",
            data: [:],
            partials: ["text": "from partial"],
            expected: "\"from partial\""
        ),
        .init(
            "partials", "missingPartialIsEmpty",
            template: "\"{{>text}}\"",
            data: [:],
            partials: [:],
            expected: "\"\""
        ),
        .init(
            "partials", "usesCurrentContext",
            template: "\"{{>partial}}\"",
            data: ["text": "content"],
            partials: ["partial": "*{{text}}*"],
            expected: "\"*content*\""
        ),
        .init(
            "partials", "recursion",
            template: "{{>node}}",
            data: ["content": "X", "nodes": [["content": "Y", "nodes": []]]],
            partials: ["node": "{{content}}<{{#nodes}}{{>node}}{{/nodes}}>"],
            expected: "X<Y<>>"
        ),
        .init(
            "partials", "partialIncludesPartial",
            template: "{{>outer}}",
            data: ["a": "hello", "b": "world"],
            partials: ["outer": "*{{a}} {{>inner}}*", "inner": "{{b}}!"],
            expected: "*hello world!*"
        ),
        .init(
            "partials", "keepsSurroundingWhitespace",
            template: "| {{>partial}} |",
            data: [:],
            partials: ["partial": "\t|\t"],
            expected: "| \t|\t |"
        ),
        .init(
            "partials", "inlinePartialIsNotIndented",
            template: "  {{data}}  {{> partial}}\n",
            data: ["data": "|"],
            partials: ["partial": ">\n>"],
            expected: "  |  >\n>\n"
        ),
        .init(
            "partials", "standaloneWithCRLF",
            template: "|\r\n{{>partial}}\r\n|",
            data: [:],
            partials: ["partial": ">"],
            expected: "|\r\n>|"
        ),
        .init(
            "partials", "standaloneOnFirstLine",
            template: "  {{>partial}}\n>",
            data: [:],
            partials: ["partial": ">\n>"],
            expected: "  >\n  >>"
        ),
        .init(
            "partials", "standaloneOnLastLine",
            template: ">\n  {{>partial}}",
            data: [:],
            partials: ["partial": ">\n>"],
            expected: ">\n  >\n  >"
        ),
        .init(
            "partials", "standaloneIndentsTemplateLinesNotData",
            template: "\\\n {{>partial}}\n/\n",
            data: ["content": "<\n->"],
            partials: ["partial": "|\n{{{content}}}\n|\n"],
            expected: "\\\n |\n <\n->\n |\n/\n"
        ),
        .init(
            "partials", "paddingIsIgnored",
            template: "|{{> partial }}|",
            data: ["boolean": true],
            partials: ["partial": "[]"],
            expected: "|[]|"
        ),
    ]

    static let sections: [MustacheSpecCase] = [
        .init(
            "sections", "trueShowsContent",
            template: "\"{{#boolean}}This should be rendered.{{/boolean}}\"",
            data: ["boolean": true],
            expected: "\"This should be rendered.\""
        ),
        .init(
            "sections", "falseHidesContent",
            template: "\"{{#boolean}}This should not be rendered.{{/boolean}}\"",
            data: ["boolean": false],
            expected: "\"\""
        ),
        .init(
            "sections", "nullHidesContent",
            template: "\"{{#null}}This should not be rendered.{{/null}}\"",
            data: ["null": .null],
            expected: "\"\""
        ),
        .init(
            "sections", "objectBecomesContext",
            template: "\"{{#context}}Hi {{name}}.{{/context}}\"",
            data: ["context": ["name": "Joe"]],
            expected: "\"Hi Joe.\""
        ),
        .init(
            "sections", "lookupFallsBackToParents",
            template: "\"{{#sec}}{{a}}, {{b}}, {{c.d}}{{/sec}}\"",
            data: ["a": "foo", "b": "wrong", "sec": ["b": "bar"], "c": ["d": "baz"]],
            expected: "\"foo, bar, baz\""
        ),
        .init(
            "sections", "valueIsOnTopOfStack",
            template: "\"{{#foo}}{{.}} is {{foo}}{{/foo}}\"",
            data: ["foo": "bar"],
            expected: "\"bar is bar\""
        ),
        .init(
            "sections", "nestedListsSeeOuterElements",
            template: "{{#tops}}{{#middles}}{{tname.lower}}{{mname}}."
                + "{{#bottoms}}{{tname.upper}}{{mname}}{{bname}}.{{/bottoms}}{{/middles}}{{/tops}}",
            data: [
                "tops": [
                    [
                        "tname": ["upper": "A", "lower": "a"],
                        "middles": [["mname": "1", "bottoms": [["bname": "x"], ["bname": "y"]]]],
                    ]
                ]
            ],
            expected: "a1.A1x.A1y."
        ),
        .init(
            "sections", "deepStackStaysVisible",
            template: "{{#a}}\n{{one}}\n{{#b}}\n{{one}}{{two}}{{one}}\n{{#c}}\n{{one}}{{two}}{{three}}{{two}}{{one}}\n"
                + "{{#d}}\n{{one}}{{two}}{{three}}{{four}}{{three}}{{two}}{{one}}\n"
                + "{{#five}}\n{{one}}{{two}}{{three}}{{four}}{{five}}{{four}}{{three}}{{two}}{{one}}\n"
                + "{{one}}{{two}}{{three}}{{four}}{{.}}6{{.}}{{four}}{{three}}{{two}}{{one}}\n"
                + "{{one}}{{two}}{{three}}{{four}}{{five}}{{four}}{{three}}{{two}}{{one}}\n{{/five}}\n"
                + "{{one}}{{two}}{{three}}{{four}}{{three}}{{two}}{{one}}\n{{/d}}\n"
                + "{{one}}{{two}}{{three}}{{two}}{{one}}\n{{/c}}\n{{one}}{{two}}{{one}}\n{{/b}}\n{{one}}\n{{/a}}\n",
            data: ["a": ["one": 1], "b": ["two": 2], "c": ["three": 3, "d": ["four": 4, "five": 5]]],
            expected: "1\n121\n12321\n1234321\n123454321\n12345654321\n123454321\n1234321\n12321\n121\n1\n"
        ),
        .init(
            "sections", "listRepeatsContent",
            template: "\"{{#list}}{{item}}{{/list}}\"",
            data: ["list": [["item": 1], ["item": 2], ["item": 3]]],
            expected: "\"123\""
        ),
        .init(
            "sections", "emptyListHidesContent",
            template: "\"{{#list}}Yay lists!{{/list}}\"",
            data: ["list": []],
            expected: "\"\""
        ),
        .init(
            "sections", "twoSections",
            template: "{{#bool}}\n* first\n{{/bool}}\n* {{two}}\n{{#bool}}\n* third\n{{/bool}}\n",
            data: ["bool": true, "two": "second"],
            expected: "* first\n* second\n* third\n"
        ),
        .init(
            "sections", "nestedTrue",
            template: "| A {{#bool}}B {{#bool}}C{{/bool}} D{{/bool}} E |",
            data: ["bool": true],
            expected: "| A B C D E |"
        ),
        .init(
            "sections", "nestedFalse",
            template: "| A {{#bool}}B {{#bool}}C{{/bool}} D{{/bool}} E |",
            data: ["bool": false],
            expected: "| A  E |"
        ),
        .init(
            "sections", "missingHidesContent",
            template: "[{{#missing}}Found key 'missing'!{{/missing}}]",
            data: [:],
            expected: "[]"
        ),
        .init(
            "sections", "implicitIteratorStrings",
            template: "\"{{#list}}({{.}}){{/list}}\"",
            data: ["list": ["a", "b", "c", "d", "e"]],
            expected: "\"(a)(b)(c)(d)(e)\""
        ),
        .init(
            "sections", "implicitIteratorIntegers",
            template: "\"{{#list}}({{.}}){{/list}}\"",
            data: ["list": [1, 2, 3, 4, 5]],
            expected: "\"(1)(2)(3)(4)(5)\""
        ),
        .init(
            "sections", "implicitIteratorDecimals",
            template: "\"{{#list}}({{.}}){{/list}}\"",
            data: ["list": [1.1, 2.2, 3.3, 4.4, 5.5]],
            expected: "\"(1.1)(2.2)(3.3)(4.4)(5.5)\""
        ),
        .init(
            "sections", "implicitIteratorNestedLists",
            template: "\"{{#list}}({{#.}}{{.}}{{/.}}){{/list}}\"",
            data: ["list": [[1, 2, 3], ["a", "b", "c"]]],
            expected: "\"(123)(abc)\""
        ),
        .init(
            "sections", "implicitIteratorEscapesHTML",
            template: "\"{{#list}}({{.}}){{/list}}\"",
            data: ["list": ["&", "\"", "<", ">"]],
            expected: "\"(&amp;)(&quot;)(&lt;)(&gt;)\""
        ),
        .init(
            "sections", "implicitIteratorTriple",
            template: "\"{{#list}}({{{.}}}){{/list}}\"",
            data: ["list": ["&", "\"", "<", ">"]],
            expected: "\"(&)(\")(<)(>)\""
        ),
        .init(
            "sections", "implicitIteratorAmpersand",
            template: "\"{{#list}}({{&.}}){{/list}}\"",
            data: ["list": ["&", "\"", "<", ">"]],
            expected: "\"(&)(\")(<)(>)\""
        ),
        .init(
            "sections", "implicitIteratorOverRootList",
            template: "\"{{#.}}({{value}}){{/.}}\"",
            data: [["value": "a"], ["value": "b"]],
            expected: "\"(a)(b)\""
        ),
        .init(
            "sections", "dottedNameTrue",
            template: "\"{{#a.b.c}}Here{{/a.b.c}}\" == \"Here\"",
            data: ["a": ["b": ["c": true]]],
            expected: "\"Here\" == \"Here\""
        ),
        .init(
            "sections", "dottedNameFalse",
            template: "\"{{#a.b.c}}Here{{/a.b.c}}\" == \"\"",
            data: ["a": ["b": ["c": false]]],
            expected: "\"\" == \"\""
        ),
        .init(
            "sections", "dottedNameBrokenChain",
            template: "\"{{#a.b.c}}Here{{/a.b.c}}\" == \"\"",
            data: ["a": [:]],
            expected: "\"\" == \"\""
        ),
        .init(
            "sections", "keepsSurroundingWhitespace",
            template: " | {{#boolean}}\t|\t{{/boolean}} | \n",
            data: ["boolean": true],
            expected: " | \t|\t | \n"
        ),
        .init(
            "sections", "keepsInternalWhitespace",
            template: " | {{#boolean}} {{! Important Whitespace }}\n {{/boolean}} | \n",
            data: ["boolean": true],
            expected: " |  \n  | \n"
        ),
        .init(
            "sections", "indentedInlineSections",
            template: " {{#boolean}}YES{{/boolean}}\n {{#boolean}}GOOD{{/boolean}}\n",
            data: ["boolean": true],
            expected: " YES\n GOOD\n"
        ),
        .init(
            "sections", "standaloneLinesAreDropped",
            template: "| This Is\n{{#boolean}}\n|\n{{/boolean}}\n| A Line\n",
            data: ["boolean": true],
            expected: "| This Is\n|\n| A Line\n"
        ),
        .init(
            "sections", "indentedStandaloneLinesAreDropped",
            template: "| This Is\n  {{#boolean}}\n|\n  {{/boolean}}\n| A Line\n",
            data: ["boolean": true],
            expected: "| This Is\n|\n| A Line\n"
        ),
        .init(
            "sections", "standaloneWithCRLF",
            template: "|\r\n{{#boolean}}\r\n{{/boolean}}\r\n|",
            data: ["boolean": true],
            expected: "|\r\n|"
        ),
        .init(
            "sections", "standaloneOnFirstLine",
            template: "  {{#boolean}}\n#{{/boolean}}\n/",
            data: ["boolean": true],
            expected: "#\n/"
        ),
        .init(
            "sections", "standaloneOnLastLine",
            template: "#{{#boolean}}\n/\n  {{/boolean}}",
            data: ["boolean": true],
            expected: "#\n/\n"
        ),
        .init(
            "sections", "paddingIsIgnored",
            template: "|{{# boolean }}={{/ boolean }}|",
            data: ["boolean": true],
            expected: "|=|"
        ),
    ]
}
