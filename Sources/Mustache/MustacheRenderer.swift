/// Renders parsed nodes: looks names up on the context stack, expands partials, and bounds how deep
/// sections and partials nest, so that a partial that includes itself forever stops with an error.
///
/// It keeps its own stack of frames rather than recursing: a debug build needs kilobytes of
/// machine stack for each level of recursion, and templates render on secondary threads too.
struct MustacheRenderer {
    private let partials: [String: MustacheTemplate]
    /// The values of the enclosing sections, innermost last; the template's context is at the bottom.
    private var contextStack: [MustacheValue]
    /// The frames that enclose the one being rendered, innermost last.
    private var enclosingFrames: [Frame] = []
    /// What has been rendered so far.
    private(set) var output = ""

    init(context: MustacheValue, partials: [String: MustacheTemplate]) {
        self.partials = partials
        contextStack = [context]
    }

    /// Renders a template.
    mutating func render(_ program: MustacheProgram) throws(MustacheError) {
        try run(Frame(program: program, indentation: "", depth: 0, start: 0, end: program.nodes.count))
    }

    /// Renders a frame and everything it includes.
    private mutating func run(_ outermost: Frame) throws(MustacheError) {
        var frame = outermost
        while true {
            let position = frame.position
            guard position < frame.end else {
                // The frame's content is done: render it again for the section's next list
                // element, or return to the enclosing frame.
                if frame.pushesContext {
                    contextStack.removeLast()
                    if frame.nextElement < frame.elements.count {
                        contextStack.append(frame.elements[frame.nextElement])
                        frame.nextElement += 1
                        frame.position = frame.start
                        continue
                    }
                }
                guard let enclosing = enclosingFrames.popLast() else { return }
                frame = enclosing
                continue
            }
            frame.position = position + 1
            switch frame.program.nodes[position] {
            case .text(let index):
                output += frame.program.texts[index]
            case .lineStart:
                output += frame.indentation
            case .variable(let path, let escaped, let location):
                try interpolate(frame.program.paths[path], of: frame.program, escaped: escaped, at: location)
            case .section(let path, let inverted, let end, let location):
                let found = lookUp(frame.program.paths[path].keys)
                guard (found?.isTruthy ?? false) != inverted else {
                    frame.position = end
                    continue
                }
                var section = Frame(
                    program: frame.program,
                    indentation: frame.indentation,
                    depth: try Self.deeper(than: frame, at: location),
                    start: position + 1,
                    end: end
                )
                // A list (never empty here: that is falsey) renders the content once per element,
                // pushed onto the context stack; any other truthy value renders it once; an
                // inverted section pushes nothing.
                if !inverted, let found {
                    section.pushesContext = true
                    if case .list(let elements) = found {
                        contextStack.append(elements[0])
                        section.elements = elements
                        section.nextElement = 1
                    } else {
                        contextStack.append(found)
                    }
                }
                frame.position = end
                enclosingFrames.append(frame)
                frame = section
            case .partial(let index):
                let tag = frame.program.partials[index]
                // A missing partial renders as nothing, as the specification asks.
                guard let partial = partials[tag.name]?.program else { continue }
                // A standalone partial indents its lines by its own indentation on top of the
                // indentation of the partial it sits in; an inline one indents nothing.
                let included = Frame(
                    program: partial,
                    indentation: tag.indentation.map { frame.indentation + $0 } ?? "",
                    depth: try Self.deeper(than: frame, at: tag.location),
                    start: 0,
                    end: partial.nodes.count
                )
                enclosingFrames.append(frame)
                frame = included
            }
        }
    }

    /// Appends a variable's text.
    private mutating func interpolate(
        _ path: MustachePath,
        of program: MustacheProgram,
        escaped: Bool,
        at location: MustacheLocation
    ) throws(MustacheError) {
        guard let value = lookUp(path.keys) else { return }
        switch value {
        case .string(let text):
            output += escaped ? Self.escapingHTML(text) : text
        case .list, .object:
            throw MustacheError(
                .notInterpolatable(name: path.name, kind: value.kindName),
                in: program.name,
                at: location
            )
        default:
            let text = value.interpolationText ?? ""
            output += escaped ? Self.escapingHTML(text) : text
        }
    }

    /// The depth of content nested in `frame`, or an error past the limit.
    private static func deeper(than frame: Frame, at location: MustacheLocation) throws(MustacheError) -> Int {
        let depth = frame.depth + 1
        guard depth <= MustacheTemplate.maximumDepth else {
            throw MustacheError(
                .nestingTooDeep(limit: MustacheTemplate.maximumDepth),
                in: frame.program.name,
                at: location
            )
        }
        return depth
    }

    /// Finds the first key on the context stack, innermost first, then each further key in the
    /// value found before it only; `nil` when any part is missing.
    private func lookUp(_ keys: [String]) -> MustacheValue? {
        guard let first = keys.first else {
            return contextStack.last
        }
        var value: MustacheValue?
        for context in contextStack.reversed() {
            if case .object(let fields) = context, let found = fields[first] {
                value = found
                break
            }
        }
        // Counted, not `for key in keys.dropFirst()`: a debug build iterates the slice through
        // unspecialised generic code, and the whole run took 16% more CPU time at 1,000 entities.
        var key = 1
        while key < keys.count {
            guard case .object(let fields) = value else { return nil }
            value = fields[keys[key]]
            key += 1
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

/// A run of nodes being rendered: a template, a partial, or a section's content, which renders
/// once per list element.
private struct Frame {
    /// The template the frame is in; it renders its nodes from `start` up to `end`.
    let program: MustacheProgram
    /// What every template line in this frame starts with (see ``MustacheNode/lineStart``).
    let indentation: String
    /// How many sections and partials enclose this frame.
    let depth: Int
    let start: Int
    let end: Int
    /// The next node to render.
    var position: Int
    /// Whether the frame has a value on the context stack, which it pops when its content is done.
    var pushesContext = false
    /// The elements of the list a section repeats its content for, and the next one to push.
    var elements: [MustacheValue] = []
    var nextElement = 0

    init(program: MustacheProgram, indentation: String, depth: Int, start: Int, end: Int) {
        self.program = program
        self.indentation = indentation
        self.depth = depth
        self.start = start
        self.end = end
        position = start
    }
}
