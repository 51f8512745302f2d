import Testing

@testable import ModelwrightSchema

/// `@coreData(…)` and `@userInfo(…)` carry Core Data details; a malformed or repeated one is an
/// error at its place, never a silent override.
struct CoreDataAnnotationTests {
    @Test func malformedAndRepeatedAnnotationsAreErrors() {
        let found = diagnose(
            """
            model M version 1
            entity Tag {
                @coreData(className: "WCTag")
                @coreData(versionHashModifier: "2")
                name: String @coreData(transformer: 3) @userInfo("only one")
                code: String @coreData(name: "Code") @coreData(name: "CODE")
                slug: String @coreData(colour: "red", name: "s", name: "t")
            }
            """)
        #expect(
            found == [
                "4:5: error: '@coreData' is written twice on this entity; put every label in one",
                "5:28: error: 'transformer' takes a string or nil",
                "5:44: error: expected '@userInfo(\"key\", \"value\")': two strings",
                "6:42: error: '@coreData' is written twice on this property; put every label in one",
                "7:28: error: '@coreData' on a property takes className, name, transformer, versionHashModifier, each as 'label: \"value\"'",
                "7:54: error: 'name' is written twice in '@coreData'",
            ])
    }

    @Test func wellFormedAnnotationsAreKept() throws {
        let graph = try graph(
            """
            model M version 1
            entity Tag {
                @coreData(className: "WCTag", versionHashModifier: "2")
                @userInfo("source", "api")
                name: String @coreData(versionHashModifier: "b") @userInfo("kind", "label")
            }
            """)
        #expect(graph.entities[0].versionHashModifier == "2")
        #expect(graph.entities[0].attributes[0].versionHashModifier == "b")
    }
}
