/// The escaper for text echoed into diagnostics: what a schema or bundle says is shown, never
/// obeyed by the terminal or editor that displays it.
///
/// Defined on Unicode scalars, never on `Character`, so a combining mark or prepended character
/// cannot hide a control character inside a grapheme cluster. Shown escaped, as `\u{…}` (and
/// `\0`, `\t`, `\n`, `\r`): C0 controls, DEL, C1 controls, the bidirectional formatting
/// characters (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), U+2028, U+2029 and
/// U+FEFF. Bytes that are not UTF-8 (``escaped(bytes:)``) are shown as `\x{…}`.
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

    /// Whether a scalar is shown escaped.
    package static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        case 0x2028, 0x2029, 0xFEFF: true
        default: false
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
