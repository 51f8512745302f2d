/// The one escaper for human-readable output: what a schema, bundle, path or error says is shown,
/// never obeyed by the terminal or editor that displays it. Every diagnostic, note and fix-it,
/// and every line the command-line tool prints to standard output or standard error, goes
/// through it.
///
/// Defined on Unicode scalars, never on `Character`, so a combining mark or prepended character
/// cannot hide a control character inside a grapheme cluster. Shown escaped, as `\u{…}` (and
/// `\0`, `\t`, `\n`, `\r`), is every scalar ``needsEscaping(_:)`` names: controls (C0, DEL,
/// C1), every format character (Cf: the bidirectional controls, zero-width joiners and spaces,
/// U+FEFF, tag characters …), the other invisible default-ignorable scalars (variation
/// selectors, Hangul fillers), line and paragraph separators, private-use and unassigned scalars.
/// So `'A\u{200D}B'` is never shown as `'AB'`. Bytes that are not UTF-8 (``escaped(bytes:)``)
/// are shown as `\x{…}`.
///
/// Long text is capped so a 100 KB name cannot make a 100 KB message: a run of more than
/// ``maximumRun`` scalars between spaces, quotes, backticks and slashes keeps its first
/// ``maximumRun`` and ends in `…`, and a message keeps at most ``maximumLength`` scalars. The
/// message's own punctuation (quotes, backticks) is never escaped, so messages stay readable.
///
/// ``Diagnostic`` applies it to every message and note when it is created and to paths when it
/// is printed, so no call site can forget.
package enum DiagnosticText {
    /// The most scalars of one name or word a message shows before `…`.
    package static let maximumRun = 80
    /// The most scalars a message shows before `…`.
    package static let maximumLength = 2_000

    /// `text`, safe to print: controls and bidi characters escaped, long runs and text capped.
    package static func escaped(_ text: String) -> String {
        var writer = Writer()
        for scalar in text.unicodeScalars {
            guard writer.append(scalar) else { break }
        }
        return writer.output
    }

    /// `bytes` as UTF-8 text, safe to print as ``escaped(_:)`` makes it; each byte that is not
    /// part of valid UTF-8 is shown as `\x{…}`.
    package static func escaped(bytes: some Collection<UInt8>) -> String {
        let bytes = Array(bytes)
        var writer = Writer()
        var index = 0
        while index < bytes.count {
            let lead = bytes[index]
            let (length, minimum, bits): (Int, UInt32, UInt8) =
                switch lead {
                case 0x00...0x7F: (1, 0, 0x7F)
                case 0xC0...0xDF: (2, 0x80, 0x1F)
                case 0xE0...0xEF: (3, 0x800, 0x0F)
                case 0xF0...0xF7: (4, 0x10000, 0x07)
                default: (0, 0, 0)
                }
            var value = UInt32(lead & bits)
            var isValid = length > 0 && index + length <= bytes.count
            var next = index + 1
            while isValid, next < index + length {
                let byte = bytes[next]
                isValid = byte & 0xC0 == 0x80
                value = value << 6 | UInt32(byte & 0x3F)
                next += 1
            }
            // Overlong forms, surrogates and values past U+10FFFF are not UTF-8 either.
            if isValid, value >= minimum, let scalar = Unicode.Scalar(value) {
                guard writer.append(scalar) else { break }
                index += length
            } else {
                guard writer.appendInvalid(lead) else { break }
                index += 1
            }
        }
        return writer.output
    }

    /// A path, safe to print: control and bidi characters escaped, never shortened (a path is
    /// the one thing a reader must be able to copy).
    package static func escapedPath(_ path: String) -> String {
        guard path.unicodeScalars.contains(where: needsEscaping) else { return path }
        var output = ""
        for scalar in path.unicodeScalars {
            output += needsEscaping(scalar) ? Writer.escape(scalar) : String(scalar)
        }
        return output
    }

    /// Lines for standard output, safe to print as ``escapedPath(_:)`` makes them: every newline
    /// is kept (it is the output's own structure), every other scalar ``needsEscaping(_:)``
    /// names is escaped, and nothing is shortened (a plan or a checksum is read in full).
    package static func escapedLines(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: { $0 != "\n" && needsEscaping($0) }) else { return text }
        var output = ""
        for scalar in text.unicodeScalars {
            output += scalar != "\n" && needsEscaping(scalar) ? Writer.escape(scalar) : String(scalar)
        }
        return output
    }

    /// JSON text (as `JSONEncoder` writes it), safe to print: each scalar ``needsEscaping(_:)``
    /// names, which JSON can only hold inside a string, becomes that string's own `\uXXXX`
    /// escape (a surrogate pair above U+FFFF), so the JSON means the same and shows nothing raw.
    /// A newline is kept: `JSONEncoder` escapes those inside strings, so any left is layout.
    package static func escapedJSON(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: { $0 != "\n" && needsEscaping($0) }) else { return json }
        var output = ""
        for scalar in json.unicodeScalars {
            guard scalar != "\n", needsEscaping(scalar) else {
                output.unicodeScalars.append(scalar)
                continue
            }
            for unit in String(scalar).utf16 {
                let digits = String(unit, radix: 16, uppercase: true)
                output += "\\u" + String(repeating: "0", count: 4 - digits.count) + digits
            }
        }
        return output
    }

    /// Whether a scalar is shown escaped: it controls the terminal, reorders the line, is
    /// invisible, or has no agreed meaning (private use, unassigned).
    package static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x20...0x7E: return false  // printable ASCII, most of any output: no table lookup
        case 0x00...0x1F, 0x7F...0x9F: return true
        default: break
        }
        let properties = scalar.properties
        switch properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .unassigned, .surrogate:
            return true
        default:
            // Invisible but not Cf: variation selectors, U+034F, Hangul fillers, U+180B–U+180F.
            return properties.isDefaultIgnorableCodePoint
        }
    }

    /// Builds the escaped text, counting runs and the total.
    private struct Writer {
        var output = ""
        private var run = 0
        private var length = 0

        /// Appends one scalar; `false` once the message is full.
        mutating func append(_ scalar: Unicode.Scalar) -> Bool {
            if needsEscaping(scalar) {
                return write(Self.escape(scalar), separates: false)
            }
            let separates = scalar == " " || scalar == "'" || scalar == "\"" || scalar == "`" || scalar == "/"
            return write(String(scalar), separates: separates)
        }

        /// Appends a byte that is not UTF-8.
        mutating func appendInvalid(_ byte: UInt8) -> Bool {
            write("\\x{\(String(byte, radix: 16, uppercase: true))}", separates: false)
        }

        private mutating func write(_ text: String, separates: Bool) -> Bool {
            guard length < maximumLength else {
                output += "…"
                return false
            }
            if separates {
                run = 0
            } else {
                run += 1
                if run > maximumRun {
                    // Only what is shown counts towards the length.
                    if run == maximumRun + 1 { output += "…" }
                    return true
                }
            }
            length += 1
            output += text
            return true
        }

        static func escape(_ scalar: Unicode.Scalar) -> String {
            switch scalar {
            case "\0": "\\0"
            case "\t": "\\t"
            case "\n": "\\n"
            case "\r": "\\r"
            default: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            }
        }
    }
}
