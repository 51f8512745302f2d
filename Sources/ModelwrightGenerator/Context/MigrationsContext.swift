import Modelwright
import ModelwrightSchema
import Mustache

/// The context of the migrations file: one stage per version step, and for every custom stage
/// the protocol requirements the app implements.
enum MigrationsContext {
    static func make(_ model: PlannedModel) -> MustacheObject {
        var allStages: [MustacheValue] = []
        let steps = model.steps.map { step -> MustacheValue in
            let stages = step.customStages.map { stage -> MustacheValue in
                [
                    // swift-format wants a trailing comma only when the list holds more than one element.
                    "separator": .string(step.customStages.count > 1 ? "," : ""),
                    "from": .int(step.from.number),
                    "to": .int(step.to.number),
                    "label": .string(SwiftSpelling.commentText(stage.label)),
                    "nameLiteral": .string(SwiftSpelling.string(stage.name)),
                    "labelLiteral": .string(SwiftSpelling.string(stage.label)),
                    "doc": docLines(stage.doc),
                    "willMigrate": .string(SwiftSpelling.identifier(stage.name + "WillMigrate")),
                    "didMigrate": .string(SwiftSpelling.identifier(stage.name + "DidMigrate")),
                ]
            }
            allStages += stages
            let rewritten = step.rewrittenTables
            let cost = rewritten.isEmpty ? "in place" : "rewrites " + rewritten.joined(separator: ", ")
            return [
                "from": .int(step.from.number),
                "to": .int(step.to.number),
                "fromName": .string("version\(step.from.number)"),
                "toName": .string("version\(step.to.number)"),
                "summary": .string(SwiftSpelling.commentText("\(step.classification), \(cost)")),
                // A lossy step runs as a lightweight stage: the runtime clears what it gives up.
                "isLightweight": .bool(step.customStages.isEmpty),
                "customStages": .list(stages),
            ]
        }
        return [
            "protocolName": .string(SwiftSpelling.identifier(model.name + "Migrations")),
            "hasCustomStages": .bool(!allStages.isEmpty),
            "hasSteps": .bool(!steps.isEmpty),
            "steps": .list(steps),
            "customStages": .list(allStages),
        ]
    }
}
