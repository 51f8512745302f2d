/// `@coreData(…)` and `@userInfo(…)`: details only a Core Data model has, kept in the schema so
/// that `export-coredata` can write them back. Only `versionHashModifier` affects the checksum,
/// as it affects Core Data's version hashes: it marks a change the structure does not show.
///
/// ```
/// entity TaxRate {
///     @coreData(versionHashModifier: "2", className: "WCTaxRate")
///     @userInfo("source", "api")
///     cities: Codable<[String]>? @coreData(transformer: "MyTransformer") @userInfo("kind", "list")
///     id_: Int64 = 0 @coreData(name: "id")
/// }
/// ```
package enum CoreDataAnnotations {
    /// The annotation names.
    package static let names: Set<String> = ["coreData", "userInfo"]
    /// What `@coreData` takes on an entity, and whether `nil` is allowed.
    package static let entityLabels: [String: Bool] = [
        "name": false, "className": true, "versionHashModifier": false, "codeGeneration": false,
    ]
    /// What `@coreData` takes on a property, and whether `nil` is allowed.
    /// `className` is a Transformable's class where the schema type does not spell it: an
    /// imported `Data` attribute that Core Data holds as an archived `CLLocation`, say.
    package static let propertyLabels: [String: Bool] = [
        "name": false, "transformer": true, "className": true, "versionHashModifier": false,
    ]

    /// The Core Data details written on one entity or property.
    package struct Details: Equatable {
        /// Each `label: "value"`; a `nil` value is one written as `nil`.
        package var values: [String: String?] = [:]
        /// The `@userInfo` entries, in order.
        package var userInfo: [UserInfoEntry] = []

        /// Details with the given values and entries.
        package init(values: [String: String?] = [:], userInfo: [UserInfoEntry] = []) {
            self.values = values
            self.userInfo = userInfo
        }

        /// The value for `label`: absent (`nil`), written as `nil` (`.some(nil)`), or a string.
        package subscript(label: String) -> String?? { values[label] }
    }

    /// The problems with one annotation, as messages and offsets.
    package static func problems(with annotation: AST.Annotation, onEntity: Bool) -> [(String, Int)] {
        let start = annotation.range.start
        guard let arguments = annotation.arguments, !arguments.isEmpty else {
            return [
                (
                    annotation.name.text == "userInfo"
                        ? "expected '@userInfo(\"key\", \"value\")'" : "expected '@coreData(label: \"value\", …)'",
                    start
                )
            ]
        }
        if annotation.name.text == "userInfo" {
            let isPair =
                arguments.count == 2
                && arguments.allSatisfy { argument in
                    if argument.label == nil, case .string? = argument.literal?.kind { return true }
                    return false
                }
            return isPair ? [] : [("expected '@userInfo(\"key\", \"value\")': two strings", start)]
        }
        let labels = onEntity ? entityLabels : propertyLabels
        var problems: [(String, Int)] = []
        var seen: Set<String> = []
        for argument in arguments {
            guard let label = argument.label, let allowsNil = labels[label.text] else {
                let known = labels.keys.sorted().joined(separator: ", ")
                problems.append(
                    (
                        "'@coreData' on \(onEntity ? "an entity" : "a property") takes \(known), each as 'label: \"value\"'",
                        argument.range.start
                    ))
                continue
            }
            if !seen.insert(label.text).inserted {
                problems.append(("'\(label.text)' is written twice in '@coreData'", label.range.start))
            }
            switch argument.literal?.kind {
            case .string?: break
            case .null? where allowsNil: break
            default:
                problems.append(
                    ("'\(label.text)' takes a string\(allowsNil ? " or nil" : "")", argument.range.start))
            }
        }
        return problems
    }

    /// The details written in `annotations`, ignoring malformed ones (the graph builder reports them).
    package static func details(in annotations: [AST.Annotation]) -> Details {
        var details = Details()
        for annotation in annotations {
            guard let arguments = annotation.arguments else { continue }
            switch annotation.name.text {
            case "coreData":
                for argument in arguments {
                    guard let label = argument.label?.text else { continue }
                    switch argument.literal?.kind {
                    case .string(let text)?: details.values[label] = .some(text)
                    case .null?: details.values[label] = .some(nil)
                    default: break
                    }
                }
            case "userInfo":
                guard arguments.count == 2, case .string(let key)? = arguments[0].literal?.kind,
                    case .string(let value)? = arguments[1].literal?.kind
                else { continue }
                details.userInfo.append(UserInfoEntry(key: key, value: value))
            default:
                continue
            }
        }
        return details
    }
}

/// One `<entry key=… value=…/>` of a `<userInfo>` dictionary.
package struct UserInfoEntry: Sendable, Equatable {
    /// The key.
    package var key: String
    /// The value.
    package var value: String

    /// Creates an entry.
    package init(key: String, value: String) {
        self.key = key
        self.value = value
    }
}
