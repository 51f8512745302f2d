import Modelwright
import ModelwrightSchema
import Mustache

/// The context of the migrations file: one stage per version step, and for every custom stage
/// the protocol requirements the app implements.
enum MigrationsContext {
    static func make(_ model: PlannedModel, names: TypeNames) -> MustacheObject {
        var allStages: [MustacheValue] = []
        let steps = model.steps.map { step -> MustacheValue in
            let stages = step.customStages.map { stage -> MustacheValue in
                let owed = step.obligations.filter { $0.stage == stage.name }
                // Like the stages: a trailing comma after every element when the list holds more than one.
                let current = step.to.number == model.current?.number
                let obligations = owed.map {
                    requirement($0, separator: owed.count > 1 ? "," : "", endsAtCurrentVersion: current)
                }
                return [
                    // swift-format wants a trailing comma only when the list holds more than one element.
                    "separator": .string(step.customStages.count > 1 ? "," : ""),
                    "from": .int(step.from.number),
                    "to": .int(step.to.number),
                    "label": .string(SwiftSpelling.commentText(stage.label)),
                    "nameLiteral": .string(SwiftSpelling.string(stage.name)),
                    "labelLiteral": .string(SwiftSpelling.string(stage.label)),
                    "doc": docLines(stage.doc),
                    "willMigrate": .string(
                        SwiftSpelling.identifier(GeneratedNamespace.willMigrateHook(ofStage: stage.name))),
                    "didMigrate": .string(
                        SwiftSpelling.identifier(GeneratedNamespace.didMigrateHook(ofStage: stage.name))),
                    "hasObligations": .bool(!owed.isEmpty),
                    "obligations": .list(obligations),
                ]
            }
            allStages += stages
            let rewritten = step.rewrittenTables
            let cost = rewritten.isEmpty ? "in place" : "rewrites " + rewritten.joined(separator: ", ")
            return [
                // swift-format wants a trailing comma only when the list holds more than one element.
                "stepSeparator": .string(model.steps.count > 1 ? "," : ""),
                "from": .int(step.from.number),
                "to": .int(step.to.number),
                "fromName": .string("version\(step.from.number)"),
                "toName": .string("version\(step.to.number)"),
                "summary": .string(SwiftSpelling.commentText("\(step.classification), \(cost)")),
                // A lossy step runs as a lightweight stage: the runtime clears what it gives up.
                "isLightweight": .bool(step.customStages.isEmpty),
                "customStages": .list(stages),
                // The step's `lossy` lines, which the runtime honours as `plan` did.
                "hasLosses": .bool(!step.losses.isEmpty),
                "losses": .list(
                    step.losses.map { loss -> MustacheValue in
                        [
                            "entityLiteral": .string(SwiftSpelling.string(loss.entity)),
                            "propertyLiteral": .string(loss.property.map { ", " + SwiftSpelling.string($0) } ?? ""),
                            // swift-format wants a trailing comma only when the list holds more than one element.
                            "separator": .string(step.losses.count > 1 ? "," : ""),
                        ]
                    }),
            ]
        }
        // The record of every concrete entity decodes every row before the last stage commits.
        let concrete = model.current?.graph.entities.filter { !$0.isAbstract } ?? []
        let records = concrete.map { entity -> MustacheValue in
            [
                "name": .string(names[entity.name]),
                // swift-format wants a trailing comma only when the list holds more than one element.
                "separator": .string(concrete.count > 1 ? "," : ""),
            ]
        }
        return [
            "records": .list(records),
            "hasRecords": .bool(!records.isEmpty),
            "protocolName": .string(
                SwiftSpelling.identifier(GeneratedNamespace.migrationsProtocol(ofModel: model.name))),
            "hasCustomStages": .bool(!allStages.isEmpty),
            "hasSteps": .bool(!steps.isEmpty),
            "steps": .list(steps),
            "customStages": .list(allStages),
        ]
    }

    /// The requirement of the stage protocol for one obligation, and how the plan calls it: a
    /// function from an existing row to the new value (an enum's raw value, since the version may
    /// not be the current one), or a hook that gets the migration context.
    private static func requirement(_ obligation: StageObligation, separator: String, endsAtCurrentVersion: Bool)
        -> MustacheValue
    {
        let member = requirementName(obligation)
        var context: [String: MustacheValue] = [
            "member": .string(member),
            "subject": .string(SwiftSpelling.commentText(obligation.subject)),
            "changes": .list(obligation.changes.map { .string(SwiftSpelling.commentText($0)) }),
            "entityLiteral": .string(SwiftSpelling.string(obligation.entity)),
            "propertyLiteral": .string(obligation.property.map(SwiftSpelling.string) ?? "nil"),
            "separator": .string(separator),
        ]
        switch obligation.work {
        case .value(.codable(let typeName), _, _) where !endsAtCurrentVersion && !isStandardType(typeName):
            // An earlier version's own Codable type may be gone from the app by now: the step owes
            // a hook, which compiles whatever the app still declares.
            break
        case .value(let type, _, let onlyRowsWithoutValue):
            context["valueType"] = .string(valueTypeName(obligation) ?? "")
            context["isEnumeration"] = .bool({ if case .enumeration = type { true } else { false } }())
            context["isCodable"] = .bool({ if case .codable = type { true } else { false } }())
            context["onlyRowsWithoutValue"] = .bool(onlyRowsWithoutValue)
        case .hook:
            break
        }
        return .object(MustacheObject(context))
    }

    /// Whether a Swift type's spelling names only types of the standard library and Foundation
    /// (`[String: [Int]]`, `Set<UUID>?`), which every later version of the app still has.
    static func isStandardType(_ spelling: String) -> Bool {
        let standard: Set<Substring> = [
            "String", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8", "UInt16", "UInt32", "UInt64", "Bool",
            "Double", "Float", "Decimal", "Date", "Data", "URL", "UUID", "Array", "Dictionary", "Set", "Optional",
        ]
        let names = spelling.split { !($0.isLetter || $0.isNumber || $0 == "_") }
        return !names.isEmpty && names.allSatisfy(standard.contains)
    }

    /// The protocol requirement's name: the stage, the entity and the property, `parseRatingsBookRating`.
    static func requirementName(_ obligation: StageObligation) -> String {
        SwiftSpelling.identifier(obligation.memberName)
    }

    /// The Swift type a value requirement returns (an enum's raw type), `nil` for a hook.
    static func valueTypeName(_ obligation: StageObligation) -> String? {
        guard case .value(let type, let isOptional, _) = obligation.work else { return nil }
        let name: String =
            switch type {
            case .enumeration(let description): description.rawType == .int ? "Int" : "String"
            default: SwiftSpelling.type(of: type)
            }
        return name + (isOptional ? "?" : "")
    }
}
