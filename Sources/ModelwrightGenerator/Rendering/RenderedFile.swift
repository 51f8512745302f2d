/// What the render stage produces: one file of generated Swift, its name inside the output
/// folder and its full text.
public struct RenderedFile: Sendable, Equatable {
    /// The file's name, such as `Trips+Records.swift`.
    public let name: String
    /// The file's contents.
    public let contents: String

    /// Creates a generated file.
    package init(name: String, contents: String) {
        self.name = name
        self.contents = contents
    }
}

extension RenderedFile {
    /// Renders every template over the context, one file per template, named
    /// `<Model>+<Template>.swift`.
    static func render(_ context: RenderContext, with templates: TemplateSet, model: String) throws -> [RenderedFile] {
        // The files render one after another: each renders its long lists (a declaration per
        // entity) on every core, which balances better than a file per core, since one file is
        // most of the output.
        try zip(TemplateSet.names, FileNames.outputs(forModel: model)).map { templateName, fileName in
            guard let template = templates.templates[templateName] else {
                throw GeneratorError.invalidTemplate(path: templateName, message: "missing template")
            }
            do {
                return RenderedFile(name: fileName, contents: try template.render(context.value))
            } catch {
                throw GeneratorError.invalidTemplate(path: template.name, message: "\(error)")
            }
        }
    }
}
