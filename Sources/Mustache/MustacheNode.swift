/// A template ready to render: a flat list of nodes, and the texts, names and partial tags they
/// refer to by index.
///
/// A section's content is the nodes that follow it, up to its `end`, so the renderer walks indices
/// instead of copying nested node lists; and since nodes hold only numbers, reading one retains
/// nothing.
///
/// The nodes and the paths' keys are also kept in memory the program
/// allocates itself (``nodeBuffer``, ``pathKeys``): the renderer
/// reads them through plain pointers, without retaining and releasing an array for every node,
/// which every thread rendering the template would otherwise do to the same counts. They are
/// written once, in `init`, and freed in `deinit`, hence `@unchecked Sendable`.
// Kept (issue 16): reading `nodes` and `paths` instead took the debug run 12% longer (0.562 → 0.630 s).
final class MustacheProgram: @unchecked Sendable {
    /// The name of the template, for errors.
    let name: String
    let nodes: [MustacheNode]
    /// The text of the ``MustacheNode/text(_:)`` nodes.
    let texts: [String]
    /// The names that variables and sections look up.
    let paths: [MustachePath]
    /// The partials that ``MustacheNode/partial(_:)`` nodes include.
    let partials: [MustachePartialTag]
    /// A copy of ``nodes``.
    let nodeBuffer: UnsafeMutableBufferPointer<MustacheNode>
    /// The keys of every path, back to back.
    let pathKeys: UnsafeMutableBufferPointer<String>
    /// Where each path's keys start in ``pathKeys``, plus where the last one's end.
    let pathKeyOffsets: UnsafeMutableBufferPointer<Int>

    init(
        name: String,
        nodes: [MustacheNode],
        texts: [String],
        paths: [MustachePath],
        partials: [MustachePartialTag]
    ) {
        self.name = name
        self.nodes = nodes
        self.texts = texts
        self.paths = paths
        self.partials = partials
        nodeBuffer = .allocate(capacity: nodes.count)
        _ = nodeBuffer.initialize(from: nodes)
        pathKeys = .allocate(capacity: paths.reduce(0) { $0 + $1.keys.count })
        pathKeyOffsets = .allocate(capacity: paths.count + 1)
        var keyOffset = 0
        for (index, path) in paths.enumerated() {
            pathKeyOffsets[index] = keyOffset
            for key in path.keys {
                (pathKeys.baseAddress! + keyOffset).initialize(to: key)
                keyOffset += 1
            }
        }
        pathKeyOffsets[paths.count] = keyOffset
    }

    deinit {
        nodeBuffer.deallocate()
        pathKeys.baseAddress?.deinitialize(count: pathKeys.count)
        pathKeys.deallocate()
        pathKeyOffsets.deallocate()
    }
}

/// One step of a parsed template; the numbers that name texts, paths and partials are indices into
/// the ``MustacheProgram``'s tables.
enum MustacheNode: Sendable {
    /// Text copied to the output as it is.
    case text(Int)
    /// The start of a template line, where a partial included on a standalone line adds that
    /// line's indentation; the engine renders it as nothing everywhere else.
    case lineStart
    /// `{{name}}` (escaped) or `{{{name}}}` and `{{& name}}` (not escaped).
    case variable(path: Int, escaped: Bool, location: MustacheLocation)
    /// `{{#name}}…{{/name}}` or, inverted, `{{^name}}…{{/name}}`; its content is the nodes after it,
    /// up to the index `end`, where the node after the section starts.
    case section(path: Int, inverted: Bool, end: Int, location: MustacheLocation)
    /// `{{>name}}`.
    case partial(Int)
}

/// A name as a tag writes it (`user.name`) and the keys it looks up one after another;
/// the implicit iterator `.` has no keys and means the value on top of the context stack.
struct MustachePath: Sendable {
    /// The name as written, without surrounding whitespace.
    let name: String
    /// The dot-separated parts of the name.
    let keys: [String]
}

/// `{{>name}}`: the partial's name and, when the tag stands alone on its line, that line's
/// indentation (`nil` otherwise).
struct MustachePartialTag: Sendable {
    let name: String
    let indentation: String?
    let location: MustacheLocation
}

/// A position in a template, counted from 1 as editors show it.
struct MustacheLocation: Sendable, Equatable {
    /// The line, from 1.
    let line: Int
    /// The column in characters, from 1.
    let column: Int
}
