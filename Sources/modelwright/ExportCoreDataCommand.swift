import Foundation
import ModelwrightSchema

/// `modelwright export-coredata`: writes a model folder as a Core Data model bundle.
enum ExportCoreDataCommand {
    static func run(_ arguments: [String], console: inout some Console) -> ExitCode {
        console.printError("error: export-coredata is not built yet")
        return .usage
    }
}
