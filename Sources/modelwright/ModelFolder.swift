import Foundation
import ModelwrightGenerator
import ModelwrightSchema

/// The model argument of the commands that read a model: each runs the ``Pipeline`` through it.
enum ModelFolder {
    /// Whether `path` is a file given where a command needs the model folder, which holds every
    /// version: then prints a usage error naming the folder to give instead. One version file alone
    /// would plan, generate or lock a model without its other versions.
    static func refusesFile(_ path: String, command: String, console: inout some Console) -> Bool {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
            return false
        }
        let parent = (path as NSString).deletingLastPathComponent
        let folder = parent.isEmpty ? "." : parent
        console.printError(
            "error: '\(command)' works on a model folder, which holds every version; '\(path)' is a file. "
                + "Give its folder: modelwright \(command) \(folder)")
        return true
    }

    /// Runs the pipeline through planning on the model at `path`, printing its diagnostics;
    /// `nil` when it has errors.
    static func plan(_ path: String, releasing: Int? = nil, console: inout some Console) -> PlannedModel? {
        var request = Pipeline.Request(modelPath: path)
        request.releasing = releasing
        let result = run(request, console: &console)
        return result?.model
    }

    /// Runs the pipeline, printing every diagnostic; a bad config file or template, or a file it
    /// cannot write, is printed as an error and gives `nil`.
    static func run(_ request: Pipeline.Request, console: inout some Console) -> PipelineResult? {
        let result: PipelineResult
        do {
            result = try Pipeline.run(request)
        } catch let error as GeneratorError {
            console.printError(error.description)
            return nil
        } catch let error as ConfinedFolder.Failure {
            console.printError(error.description)
            return nil
        } catch {
            console.printError("error: \(error.localizedDescription)")
            return nil
        }
        for diagnostic in result.diagnostics {
            console.printError(diagnostic.description)
        }
        return result
    }
}
