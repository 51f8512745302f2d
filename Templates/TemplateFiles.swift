import Foundation

/// Finds the default templates, which SwiftPM copies next to the executable (or test bundle)
/// as this target's resource bundle.
///
/// `Bundle.module` would do the lookup, but it stops the process when the bundle is missing;
/// this lookup returns `nil` instead, so the generator can report the problem.
public enum TemplateFiles {
    /// The folder holding the default `.mustache` files, if it can be found.
    public static func folder() -> URL? {
        // SwiftPM names the bundle of a tool built for a plugin with a `-tool` suffix.
        let bundleNames = ["", "-tool"].flatMap { suffix in
            ["resources", "bundle"].map { "Modelwright_ModelwrightTemplates\(suffix).\($0)" }
        }
        var places: [URL] = [
            Bundle.main.bundleURL, URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(),
        ]
        if let resources = Bundle.main.resourceURL { places.append(resources) }
        places += Bundle.allBundles.map { $0.bundleURL.deletingLastPathComponent() }
        for place in places {
            for name in bundleNames {
                let bundle = place.appendingPathComponent(name)
                for candidate in [bundle, bundle.appendingPathComponent("Contents/Resources")] {
                    if FileManager.default.fileExists(atPath: candidate.appendingPathComponent("Records.mustache").path)
                    {
                        return candidate
                    }
                }
            }
        }
        return nil
    }
}
