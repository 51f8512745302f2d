import Foundation
import Testing

@testable import Mustache

/// Behaviour of the template engine beyond the specification: errors that point at the tag at
/// fault, bounded recursion, escaping, and how values print.
struct MustacheTemplateTests {
    private static func parseError(_ source: String) -> MustacheError? {
        do {
            _ = try MustacheTemplate(source, name: "Record.mustache")
            return nil
        } catch {
            return error
        }
    }

    private static func renderError(
        _ source: String,
        _ context: MustacheValue,
        partials: [String: MustacheTemplate] = [:]
    ) throws -> MustacheError? {
        let template = try MustacheTemplate(source, name: "Record.mustache")
        do {
            _ = try template.render(context, partials: partials)
            return nil
        } catch {
            return error
        }
    }

    // MARK: - Parse errors

    @Test(
        arguments: [
            ("line one\n  {{#items}}\n  text\n", MustacheError.Kind.unclosedSection(name: "items"), 2, 3),
            ("{{#a}}\n{{#b}}\n  {{/a}}\n{{/b}}", .mismatchedClosingTag(expected: "b", found: "a"), 3, 3),
            ("ok\n\n    {{/a}}", .unexpectedClosingTag(name: "a"), 3, 5),
            ("Hello, {{name\n", .unclosedTag(closing: "}}"), 1, 8),
            ("é {{{name}}", .unclosedTag(closing: "}}}"), 1, 3),
            ("{{=<% %>=}}\n<%name}}", .unclosedTag(closing: "%>"), 2, 1),
            ("a\n b {{=<% =}}", .invalidDelimiters("<%"), 2, 4),
            ("{{  }}", .emptyTag, 1, 1),
            ("x {{first name}}", .invalidName("first name"), 1, 3),
            ("{{#user.}}{{/user.}}", .invalidName("user."), 1, 1),
            ("{{<parent}}{{/parent}}", .unsupportedTag("<"), 1, 1),
        ]
    )
    func parseErrorPointsAtTheTag(source: String, kind: MustacheError.Kind, line: Int, column: Int) {
        let error = Self.parseError(source)
        #expect(error?.kind == kind)
        #expect(error?.templateName == "Record.mustache")
        #expect(error?.line == line)
        #expect(error?.column == column)
    }

    @Test func errorDescriptionReadsLikeACompilerDiagnostic() {
        let error = Self.parseError("struct X {\n    {{#attributes}}\n}\n")
        #expect(
            error?.description
                == "Record.mustache:2:5: error: section `attributes` is never closed; "
                + "add `{{/attributes}}` where it ends"
        )
    }

    // MARK: - Recursion

    @Test func partialIncludingItselfForeverIsRefused() throws {
        let loop = try MustacheTemplate("again {{>loop}}", name: "loop.mustache")
        let error = try Self.renderError("{{>loop}}", [:], partials: ["loop": loop])
        #expect(error?.kind == .nestingTooDeep(limit: MustacheTemplate.maximumDepth))
        #expect(error?.templateName == "loop.mustache")
        #expect(error?.line == 1)
        #expect(error?.column == 7)
    }

    @Test func recursionThatTheDataEndsRendersWithinTheLimit() throws {
        var tree: MustacheValue = ["name": "leaf", "children": []]
        for level in (1...30).reversed() {
            tree = ["name": .string("n\(level)"), "children": [tree]]
        }
        let node = try MustacheTemplate("{{name}}({{#children}}{{>node}}{{/children}})", name: "node")
        let rendered = try MustacheTemplate("{{>node}}").render(tree, partials: ["node": node])
        let expected = (1...30).map { "n\($0)(" }.joined() + "leaf()" + String(repeating: ")", count: 30)
        #expect(rendered == expected)
    }

    /// Rendering keeps its own stack, so the deepest nesting allowed fits a small thread stack even
    /// in a debug build (where recursing would take kilobytes per level).
    @Test func deepestAllowedNestingRendersOnASmallThreadStack() throws {
        let levels = MustacheTemplate.maximumDepth / 2 - 1
        var data: MustacheValue = ["a": false]
        for _ in 0..<levels {
            data = ["a": data]
        }
        let loop = try MustacheTemplate("{{#a}}({{>loop}}){{/a}}", name: "loop")
        let root = try MustacheTemplate("{{>loop}}")
        let outcome = ThreadOutcome()
        let thread = Thread { [data] in
            outcome.finish(Result { () throws(MustacheError) in try root.render(data, partials: ["loop": loop]) })
        }
        thread.stackSize = 128 * 1024
        thread.start()
        let rendered = try outcome.wait().get()
        #expect(rendered == String(repeating: "(", count: levels) + String(repeating: ")", count: levels))
    }

    @Test func sectionsNestedTooDeepInTheSourceAreRefused() {
        let depth = MustacheTemplate.maximumDepth + 1
        let source = String(repeating: "{{#a}}", count: depth) + String(repeating: "{{/a}}", count: depth)
        let error = Self.parseError(source)
        #expect(error?.kind == .nestingTooDeep(limit: MustacheTemplate.maximumDepth))
        #expect(error?.column == 6 * MustacheTemplate.maximumDepth + 1)
    }

    // MARK: - Escaping

    @Test func doubleMustacheEscapesHTMLAndTripleDoesNot() throws {
        let template = try MustacheTemplate("{{code}}|{{{code}}}|{{& code}}")
        let code = #"<a href="x">Tom & 'Jerry'</a>"#
        let expectedEscaped = "&lt;a href=&quot;x&quot;&gt;Tom &amp; 'Jerry'&lt;/a&gt;"
        #expect(try template.render(["code": .string(code)]) == "\(expectedEscaped)|\(code)|\(code)")
    }

    @Test func escapingLeavesOtherTextAlone() throws {
        let template = try MustacheTemplate("{{text}}")
        #expect(try template.render(["text": "Grüße, 東京 👋 -> ok"]) == "Grüße, 東京 👋 -&gt; ok")
    }

    // MARK: - Values

    @Test(
        arguments: [
            (MustacheValue.double(3.0), "3"),
            (.double(-2.5), "-2.5"),
            (.double(0.1), "0.1"),
            (.int(-42), "-42"),
            (.bool(true), "true"),
            (.bool(false), "false"),
            (.null, ""),
        ]
    )
    func valuePrints(_ value: MustacheValue, as text: String) throws {
        #expect(try MustacheTemplate("{{value}}").render(["value": value]) == text)
    }

    @Test(
        arguments: [
            (MustacheValue.string(""), true),
            (.int(0), true),
            (.object([:]), true),
            (.list([.null]), true),
            (.bool(false), false),
            (.null, false),
            (.list([]), false),
        ]
    )
    func sectionTruthiness(_ value: MustacheValue, isTruthy: Bool) throws {
        let template = try MustacheTemplate("{{#value}}yes{{/value}}{{^value}}no{{/value}}")
        #expect(try template.render(["value": value]) == (isTruthy ? "yes" : "no"))
    }

    @Test func interpolatingAListIsAnErrorThatNamesIt() throws {
        let error = try Self.renderError("names:\n  {{attributes}}", ["attributes": ["a", "b"]])
        #expect(error?.kind == .notInterpolatable(name: "attributes", kind: "list"))
        #expect(error?.line == 2)
        #expect(error?.column == 3)
    }

    // MARK: - Objects

    @Test func objectFindsTheFirstOfRepeatedKeysAndKeepsItsOwnWhenAdding() throws {
        let object = MustacheObject([("type", "Int"), ("name", "first"), ("name", "second")])
        #expect(object["name"] == "first")
        #expect(object["missing"] == nil)
        let added = object.adding(["name": "other", "doc": "kept"])
        #expect(added["name"] == "first")
        #expect(added["doc"] == "kept")
        #expect(try MustacheTemplate("{{name}} {{doc}}").render(.object(added)) == "first kept")
    }

    @Test func objectsAreEqualWhateverTheOrderOfTheirKeys() {
        let object: MustacheObject = ["a": 1, "b": ["x"]]
        #expect(object == ["b": ["x"], "a": 1])
        #expect(object != ["a": 1, "b": ["y"]])
        #expect(object != ["a": 1])
    }

    @Test func keysMatchAsSwiftStringsCompare() throws {
        // "é" as one code point and as "e" plus a combining accent are equal Swift strings, so
        // either spelling finds the key; "cafe" without the accent is another key.
        let composed = "caf\u{E9}"
        let decomposed = "cafe\u{301}"
        let object = MustacheObject([(composed, "one"), ("cafe", "two")])
        #expect(object[composed] == "one")
        #expect(object[decomposed] == "one")
        #expect(object["cafe"] == "two")
        #expect(
            try MustacheTemplate("{{\(composed)}}|{{\(decomposed)}}|{{cafe}}").render(.object(object)) == "one|one|two")
    }

    // MARK: - Lists

    @Test func listsCompareByTheirElementsInOrder() throws {
        let list: MustacheValue = ["a", 1, ["b": true]]
        #expect(list == .list(["a", 1, ["b": true]]))
        #expect(list != ["a", 1])
        #expect(list != [1, "a", ["b": true]])
        #expect(try MustacheTemplate("{{#items}}{{.}}{{/items}}").render(["items": ["x", "y"]]) == "xy")
    }

    // MARK: - Partials

    @Test func standalonePartialsInsidePartialsAddTheirIndentation() throws {
        let outer = try MustacheTemplate("struct A {\n    {{>members}}\n}\n", name: "outer")
        let members = try MustacheTemplate("{{#names}}\nlet {{.}}: Int\n{{/names}}\n", name: "members")
        let rendered = try MustacheTemplate("  {{>outer}}\n").render(
            ["names": ["a", "b"]],
            partials: ["outer": outer, "members": members]
        )
        #expect(rendered == "  struct A {\n      let a: Int\n      let b: Int\n  }\n")
    }

    // MARK: - Long lists, rendered in parallel

    @Test func longListRendersInOrderWithEnclosingValuesAndPartialIndentation() throws {
        let count = MustacheRenderer.parallelListLength * 7 + 3
        let entity = try MustacheTemplate("{{#fields}}\nlet {{name}}: {{type}} // {{model}}\n{{/fields}}\n")
        let template = try MustacheTemplate("{{#entities}}\nstruct E{{index}} {\n    {{>entity}}\n}\n{{/entities}}\n")
        let entities: [MustacheValue] = (0..<count).map { index in
            ["index": .int(index), "fields": [["name": "a", "type": "Int"], ["name": .string("b\(index)")]]]
        }
        let rendered = try template.render(
            ["model": "M", "type": "String", "entities": .list(entities)], partials: ["entity": entity])
        let expected = (0..<count).map { index in
            "struct E\(index) {\n    let a: Int // M\n    let b\(index): String // M\n}\n"
        }
        #expect(rendered == expected.joined())
    }

    @Test func errorInALongListIsTheFirstInListOrder() throws {
        let count = MustacheRenderer.parallelListLength * 4
        let items: [MustacheValue] = (0..<count).map { index in
            switch index {
            case 70: ["name": ["a list"]]
            case count - 1: ["name": ["an": "object"]]
            default: ["name": .string("n\(index)")]
            }
        }
        let error = try Self.renderError("{{#items}}\n{{name}}\n{{/items}}", ["items": .list(items)])
        #expect(error?.kind == .notInterpolatable(name: "name", kind: "list"))
        #expect(error?.line == 2)
    }

    @Test func templateRendersManyTimesWithDifferentData() throws {
        let template = try MustacheTemplate("{{#items}}{{.}},{{/items}}")
        #expect(try template.render(["items": [1, 2]]) == "1,2,")
        #expect(try template.render(["items": ["x"]]) == "x,")
    }
}

/// Hands a result from a thread of its own back to the test that waits for it.
private final class ThreadOutcome: @unchecked Sendable {
    private let lock = NSLock()
    private let finished = DispatchSemaphore(value: 0)
    private var result: Result<String, MustacheError>?

    func finish(_ result: Result<String, MustacheError>) {
        lock.withLock { self.result = result }
        finished.signal()
    }

    func wait() -> Result<String, MustacheError> {
        finished.wait()
        return lock.withLock { result! }
    }
}
