/// Renders parsed nodes: looks names up on the context stack, expands partials, and bounds how deep
/// sections and partials nest, so that a partial that includes itself forever stops with an error.
///
/// It keeps its own stack of frames rather than recursing: a debug build needs kilobytes of
/// machine stack for each level of recursion, and templates render on secondary threads too.
struct MustacheRenderer {
    private let partials: [String: MustacheTemplate]
    /// The values of the enclosing sections, innermost last; the template's context is at the bottom.
    private var contextStack: [MustacheValue]
    /// The node lists still being rendered, innermost last.
    private var frames: [Frame] = []
    /// What has been rendered so far.
    private(set) var output = ""

    init(context: MustacheValue, partials: [String: MustacheTemplate]) {
        self.partials = partials
        contextStack = [context]
    }

    /// Renders the nodes of the template named `templateName`.
    mutating func render(_ nodes: [MustacheNode], in templateName: String) throws(MustacheError) {
        frames = [Frame(nodes: nodes, templateName: templateName, indentation: "", depth: 0, context: nil)]
        while let frame = frames.last {
            let top = frames.count - 1
            if !frame.hasStarted {
                frames[top].hasStarted = true
                if let context = frame.context {
                    contextStack.append(context)
                }
            }
            guard frame.position < frame.nodes.count else {
                frames.removeLast()
                if frame.context != nil {
                    contextStack.removeLast()
                }
                continue
            }
            frames[top].position += 1
            try render(frame.nodes[frame.position], in: frame)
        }
    }

    /// Renders one node, or pushes the frames that render a section's or a partial's content.
    private mutating func render(_ node: MustacheNode, in frame: Frame) throws(MustacheError) {
        switch node {
        case .text(let text):
            output += text
        case .lineStart:
            output += frame.indentation
        case .variable(let path, let escaped, let location):
            guard let value = lookUp(path) else { return }
            guard let text = value.interpolationText else {
                throw MustacheError(
                    .notInterpolatable(name: path.name, kind: value.kindName),
                    in: frame.templateName,
                    at: location
                )
            }
            output += escaped ? Self.escapingHTML(text) : text
        case .section(let path, let inverted, let children, let location):
            let value = lookUp(path) ?? .null
            guard value.isTruthy != inverted else { return }
            let depth = try deeper(than: frame, at: location)
            // A list renders the content once per element, pushed onto the context stack; any
            // other truthy value renders it once; an inverted section pushes nothing.
            var contexts: [MustacheValue?] = [inverted ? nil : value]
            if !inverted, case .list(let elements) = value {
                contexts = elements
            }
            for context in contexts.reversed() {
                frames.append(
                    Frame(
                        nodes: children,
                        templateName: frame.templateName,
                        indentation: frame.indentation,
                        depth: depth,
                        context: context
                    )
                )
            }
        case .partial(let name, let ownIndentation, let location):
            // A missing partial renders as nothing, as the specification asks.
            guard let partial = partials[name] else { return }
            let depth = try deeper(than: frame, at: location)
            // A standalone partial indents its lines by its own indentation on top of the
            // indentation of the partial it sits in; an inline one indents nothing.
            let indentation = ownIndentation.map { frame.indentation + $0 } ?? ""
            frames.append(
                Frame(
                    nodes: partial.nodes,
                    templateName: partial.name,
                    indentation: indentation,
                    depth: depth,
                    context: nil
                )
            )
        }
    }

    /// The depth of content nested in `frame`, or an error past the limit.
    private func deeper(than frame: Frame, at location: MustacheLocation) throws(MustacheError) -> Int {
        let depth = frame.depth + 1
        guard depth <= MustacheTemplate.maximumDepth else {
            throw MustacheError(
                .nestingTooDeep(limit: MustacheTemplate.maximumDepth),
                in: frame.templateName,
                at: location
            )
        }
        return depth
    }

    /// Finds the first key on the context stack, innermost first, then each further key in the
    /// value found before it only; `nil` when any part is missing.
    private func lookUp(_ path: MustachePath) -> MustacheValue? {
        guard let firstKey = path.keys.first else {
            return contextStack.last
        }
        var value: MustacheValue?
        for context in contextStack.reversed() {
            if case .object(let fields) = context, let found = fields[firstKey] {
                value = found
                break
            }
        }
        for key in path.keys.dropFirst() {
            guard case .object(let fields)? = value else { return nil }
            value = fields[key]
        }
        return value
    }

    /// Escapes the characters the specification names: `&`, `"`, `<` and `>`.
    private static func escapingHTML(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x22 || $0 == 0x3C || $0 == 0x3E }) else {
            return text
        }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": escaped += "&amp;"
            case "\"": escaped += "&quot;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

/// A list of nodes being rendered: the content of a template, a partial, or one pass of a section.
private struct Frame {
    let nodes: [MustacheNode]
    /// The next node to render.
    var position = 0
    let templateName: String
    /// What every template line in this frame starts with (see ``MustacheNode/lineStart``).
    let indentation: String
    /// How many sections and partials enclose this frame.
    let depth: Int
    /// The value this frame pushes onto the context stack while it renders, if any.
    let context: MustacheValue?
    /// Whether the frame has pushed its context; frames for a list's elements wait their turn.
    var hasStarted = false
}
