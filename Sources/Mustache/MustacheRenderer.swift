import Dispatch
import Foundation

/// Renders parsed nodes: looks names up on the context stack, expands partials, and bounds how deep
/// sections and partials nest, so that a partial that includes itself forever stops with an error.
///
/// It keeps its own stack of frames rather than recursing: a debug build needs kilobytes of
/// machine stack for each level of recursion, and templates render on secondary threads too.
/// The frame being rendered lives in a local variable and nodes are visited by index, so the
/// inner loop copies no node lists or frames.
///
/// A section over a long list renders its elements in parallel, in consecutive runs that are
/// joined in order, so the text is the same as rendering them one after another: a generated
/// file is mostly one such section (a declaration per entity), and it would otherwise keep one
/// core busy while the others wait.
struct MustacheRenderer {
    // Kept (issue 16): on one thread the debug run at 1,000 entities took 17% longer (0.478 → 0.560 s).
    /// The shortest list whose elements render in parallel, and the fewest elements in each run.
    static let parallelListLength = 64
    private static let minimumRunLength = 16

    private let partials: [String: MustacheTemplate]
    /// The values of the enclosing sections, innermost last; the template's context is at the bottom.
    private var contextStack: [MustacheValue]
    /// The frames that enclose the one being rendered, innermost last.
    private var enclosingFrames: [Frame] = []
    /// What has been rendered so far.
    private(set) var output = ""
    /// Whether long lists render in parallel: true for the renderer a template starts with, false
    /// for those rendering the runs of a list, so the work is split once.
    private let splitsLongLists: Bool

    init(context: MustacheValue, partials: [String: MustacheTemplate]) {
        self.partials = partials
        contextStack = [context]
        splitsLongLists = true
    }

    /// A renderer for a run of a list's elements, under the sections that enclose the list.
    private init(contextStack: [MustacheValue], partials: [String: MustacheTemplate]) {
        self.partials = partials
        self.contextStack = contextStack
        splitsLongLists = false
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
                    if frame.nextElement < frame.elementsEnd {
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
            switch frame.nodes[position] {
            case .text(let index):
                output += frame.program.texts[index]
            case .lineStart:
                output += frame.indentation
            case .variable(let path, let escaped, let location):
                try interpolate(path, of: frame.program, keys: frame.keys, escaped: escaped, at: location)
            case .section(let path, let inverted, let end, let location):
                let found = Self.lookUp(path, keys: frame.keys, in: contextStack)
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
                if !inverted, splitsLongLists, case .list(let elements) = found,
                    elements.count >= Self.parallelListLength
                {
                    try renderInParallel(elements, section: section)
                    frame.position = end
                    continue
                }
                // A list (never empty here: that is falsey) renders the content once per element,
                // pushed onto the context stack; any other truthy value renders it once; an
                // inverted section pushes nothing.
                if !inverted, let found {
                    section.pushesContext = true
                    if case .list(let elements) = found {
                        contextStack.append(elements[0])
                        section.elements = elements
                        section.nextElement = 1
                        section.elementsEnd = elements.count
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

    /// Renders a section's content once per element of a long list: consecutive runs of elements
    /// render concurrently, each by a renderer of its own, and their texts are appended in order.
    /// The first error in list order is the one thrown, as rendering one by one would throw it.
    private mutating func renderInParallel(_ elements: [MustacheValue], section: Frame) throws(MustacheError) {
        let runCount = min(
            elements.count / Self.minimumRunLength, ProcessInfo.processInfo.activeProcessorCount * 4)
        let runLength = (elements.count + runCount - 1) / runCount
        let runStarts = Array(stride(from: 0, to: elements.count, by: runLength))
        let (program, indentation, depth) = (section.program, section.indentation, section.depth)
        let (start, end) = (section.start, section.end)
        let (contextStack, partials) = (contextStack, partials)
        let outputs = runStarts.parallelMap { runStart -> Result<String, MustacheError> in
            var renderer = MustacheRenderer(contextStack: contextStack + [elements[runStart]], partials: partials)
            var frame = Frame(program: program, indentation: indentation, depth: depth, start: start, end: end)
            frame.pushesContext = true
            frame.elements = elements
            frame.nextElement = runStart + 1
            frame.elementsEnd = min(runStart + runLength, elements.count)
            do throws(MustacheError) {
                try renderer.run(frame)
                return .success(renderer.output)
            } catch {
                return .failure(error)
            }
        }
        for run in outputs {
            output += try run.get()
        }
    }

    /// Appends a variable's text.
    private mutating func interpolate(
        _ path: Int,
        of program: MustacheProgram,
        keys: PathKeys,
        escaped: Bool,
        at location: MustacheLocation
    ) throws(MustacheError) {
        guard let value = Self.lookUp(path, keys: keys, in: contextStack) else { return }
        switch value {
        case .string(let text):
            output += escaped ? Self.escapingHTML(text) : text
        case .list, .object:
            throw MustacheError(
                .notInterpolatable(name: program.paths[path].name, kind: value.kindName),
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
    ///
    /// Static, and handed the stack and the keys rather than the renderer and the frame, because
    /// a debug build copies (and clears) a whole struct argument to call a function with it.
    private static func lookUp(_ path: Int, keys: PathKeys, in contextStack: [MustacheValue]) -> MustacheValue? {
        var key = keys.offsets[path]
        let end = keys.offsets[path + 1]
        guard key < end else {
            return contextStack.last
        }
        var value: MustacheValue?
        for context in contextStack.reversed() {
            if case .object(let fields) = context, let found = fields[keys.keys[key]] {
                value = found
                break
            }
        }
        key += 1
        while key < end {
            guard case .object(let fields) = value else { return nil }
            value = fields[keys.keys[key]]
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

/// A program's path keys (see ``MustacheProgram/pathKeys``), which lookups read.
private struct PathKeys {
    let keys: UnsafeMutableBufferPointer<String>
    /// Where each path's keys start, plus where the last path's end.
    let offsets: UnsafeMutableBufferPointer<Int>
}

/// A run of nodes being rendered: a template, a partial, or a section's content, which renders
/// once per list element.
private struct Frame {
    /// The template the frame is in; it renders its nodes from `start` up to `end`.
    let program: MustacheProgram
    /// The program's nodes, texts and path keys (see ``MustacheProgram/nodeBuffer``), which it
    /// keeps alive.
    let nodes: UnsafeMutableBufferPointer<MustacheNode>
    let keys: PathKeys
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
    /// The elements of the list a section repeats its content for, the next one to push, and
    /// where this frame's run of them ends.
    var elements: [MustacheValue] = []
    var nextElement = 0
    var elementsEnd = 0

    init(program: MustacheProgram, indentation: String, depth: Int, start: Int, end: Int) {
        self.program = program
        nodes = program.nodeBuffer
        keys = PathKeys(keys: program.pathKeys, offsets: program.pathKeyOffsets)
        self.indentation = indentation
        self.depth = depth
        self.start = start
        self.end = end
        position = start
    }
}

extension Array where Element: Sendable {
    /// `map`, with the elements transformed concurrently and the results in the original order.
    fileprivate func parallelMap<Result: Sendable>(_ transform: @Sendable (Element) -> Result) -> [Result] {
        let results = ResultSlots<Result>(count: count)
        DispatchQueue.concurrentPerform(iterations: count) { index in
            results.set(transform(self[index]), at: index)
        }
        return results.values
    }
}

/// Slots written from several threads, each once, under a lock.
private final class ResultSlots<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var slots: [Value?]

    init(count: Int) {
        slots = Array(repeating: nil, count: count)
    }

    func set(_ value: Value, at index: Int) {
        lock.withLock { slots[index] = value }
    }

    var values: [Value] { lock.withLock { slots.compactMap { $0 } } }
}
