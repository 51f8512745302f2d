import Mustache
import Testing

/// The template engine passes every case of the Mustache specification's required modules.
struct MustacheSpecTests {
    @Test(arguments: MustacheSpecCase.all)
    func rendersLikeTheSpecification(_ specCase: MustacheSpecCase) throws {
        var partials: [String: MustacheTemplate] = [:]
        for (name, source) in specCase.partials {
            partials[name] = try MustacheTemplate(source, name: name)
        }
        let template = try MustacheTemplate(specCase.template, name: specCase.name)
        #expect(try template.render(specCase.data, partials: partials) == specCase.expected)
    }

    /// Guards the transcription: a case dropped from the tables would otherwise go unnoticed.
    @Test func coversEveryCaseOfTheSixModules() {
        let counts = Dictionary(grouping: MustacheSpecCase.all, by: \.module).mapValues(\.count)
        #expect(
            counts == [
                "comments": 12, "delimiters": 14, "interpolation": 42, "inverted": 22, "partials": 12, "sections": 34,
            ]
        )
        let names = MustacheSpecCase.all.map(\.testDescription)
        #expect(Set(names).count == names.count)
    }
}
