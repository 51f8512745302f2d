import Foundation

/// The path of an executable target of this package that tests run as a child process (a probe
/// that crashes on purpose, a second process on a shared store, the fuzz runner). SwiftPM builds
/// it into the same folder as the tests: the main bundle's folder on Linux, the folder around the
/// `.xctest` bundle on Apple platforms. Falls back to the bare name, for `PATH`.
public func builtExecutable(named name: String) -> String {
    [Bundle.main.bundleURL, Bundle.main.bundleURL.deletingLastPathComponent()]
        .map { $0.appendingPathComponent(name).path }
        .first { FileManager.default.isExecutableFile(atPath: $0) } ?? name
}
