import Foundation

/// The process's resident memory, from Linux's `/proc/self/status`.
public enum ResidentMemory {
    /// Resets the kernel's peak-RSS counter (`VmHWM`) to the current RSS and returns that, in
    /// bytes; `nil` where `/proc/self/clear_refs` is not available (then peaks cannot be isolated).
    public static func resetPeak() -> Int? {
        // Writing 5 to clear_refs resets VmHWM (Linux 4.0 and later).
        guard let file = FileHandle(forWritingAtPath: "/proc/self/clear_refs") else { return nil }
        defer { try? file.close() }
        guard (try? file.write(contentsOf: Data("5".utf8))) != nil else { return nil }
        return status("VmRSS")
    }

    /// The peak RSS since the last reset, in bytes.
    public static func peak() -> Int? {
        status("VmHWM")
    }

    private static func status(_ key: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key + ":") {
            let kilobytes = line.dropFirst(key.count + 1).split(whereSeparator: \.isWhitespace).first.flatMap {
                Int($0)
            }
            return kilobytes.map { $0 * 1024 }
        }
        return nil
    }
}
