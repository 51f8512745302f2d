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
        return try zip(TemplateSet.names, outputFileNames(forModel: model.name)).map { templateName, fileName in
            guard let template = templates.templates[templateName] else {
                throw GeneratorError.invalidTemplate(path: templateName, message: "missing template")
            }
            do {
                return GeneratedFile(name: fileName, contents: try template.render(context))
            } catch {
                throw GeneratorError.invalidTemplate(path: template.name, message: "\(error)")
            }
        }
    }
}
