import ModelwrightSchema

/// The generator in one place: a validated ``Model`` → ``RenderContext`` → rendered templates →
/// ``GeneratedFile`` values, which ``OutputWriter`` writes only where they changed.
///
/// ```
/// Model ──RenderContext──▶ MustacheValue ──TemplateSet (Records, Queries, Schema, Migrations)──▶ [GeneratedFile]
/// ```
package enum GeneratorPipeline {
    /// The names of the files generated for a model, known before anything runs (the build
    /// plugin declares them as outputs).
    package static func outputFileNames(forModel name: String) -> [String] {
        TemplateSet.names.map { "\(name)+\($0).swift" }
    }

    /// Renders every file for a model.
    package static func generate(_ model: Model, config: GeneratorConfig, templates: TemplateSet) throws
        -> [GeneratedFile]
    {
        let context = try RenderContext(model: model, config: config).value
        let files = zip(TemplateSet.names, outputFileNames(forModel: model.name)).map { templateName, fileName in
            (templateName: templateName, fileName: fileName, template: templates.templates[templateName])
        }
        // The files render one after another: each renders its long lists (a declaration per
        // entity) on every core, which balances better than a file per core, since one file is
        // most of the output.
        let rendered = try files.map { file in
            guard let template = file.template else {
                throw GeneratorError.invalidTemplate(path: file.templateName, message: "missing template")
            }
            do {
                return GeneratedFile(name: file.fileName, contents: try template.render(context))
            } catch {
                throw GeneratorError.invalidTemplate(path: template.name, message: "\(error)")
            }
        }
        // The context is a tree of a few hundred thousand values for a large model.
        releaseInBackground(context)
        return rendered
    }
}
