import ModelwrightSchema

/// The generator in one place: a validated ``Model`` → ``RenderContext`` → rendered templates →
/// ``GeneratedFile`` values, which ``OutputWriter`` writes only where they changed.
///
/// ```
/// Model ──RenderContext──▶ MustacheValue ──TemplateSet (Records, Queries, Schema)──▶ [GeneratedFile]
/// ```
public enum GeneratorPipeline {
    /// The names of the files generated for a model, known before anything runs (the build
    /// plugin declares them as outputs).
    public static func outputFileNames(forModel name: String) -> [String] {
        TemplateSet.names.map { "\(name)+\($0).swift" }
    }

    /// Renders every file for a model.
    public static func generate(_ model: Model, config: GeneratorConfig, templates: TemplateSet) throws
        -> [GeneratedFile]
    {
        let context = try RenderContext(model: model, config: config).value
        let files = zip(TemplateSet.names, outputFileNames(forModel: model.name)).map { templateName, fileName in
            (templateName: templateName, fileName: fileName, template: templates.templates[templateName])
        }
        // The files are independent, so they render concurrently; the first error in file order is
        // the one reported, as when they rendered one after another.
        let rendered = files.parallelMap { file -> Result<GeneratedFile, GeneratorError> in
            guard let template = file.template else {
                return .failure(.invalidTemplate(path: file.templateName, message: "missing template"))
            }
            do {
                return .success(GeneratedFile(name: file.fileName, contents: try template.render(context)))
            } catch {
                return .failure(.invalidTemplate(path: template.name, message: "\(error)"))
            }
        }
        return try rendered.map { try $0.get() }
    }
}
