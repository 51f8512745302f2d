import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Swaps what the names `first` and `second` point at in one step, so that a racing reader always
/// finds one or the other, never neither: `renameat2(RENAME_EXCHANGE)` on Linux (looked up at run
/// time, as the C library's Swift module does not declare it), `renamex_np(RENAME_SWAP)` on Darwin.
/// - Returns: whether the system swapped them.
@discardableResult
package func exchangeNames(_ first: String, _ second: String) -> Bool {
    #if canImport(Glibc)
        typealias RenameAt2 =
            @convention(c) (
                Int32, UnsafePointer<CChar>, Int32, UnsafePointer<CChar>, UInt32
            ) -> Int32
        guard let symbol = dlsym(nil, "renameat2") else { return false }
        let renameExchange: UInt32 = 2
        return unsafeBitCast(symbol, to: RenameAt2.self)(AT_FDCWD, first, AT_FDCWD, second, renameExchange) == 0
    #else
        return renamex_np(first, second, UInt32(RENAME_SWAP)) == 0
    #endif
}

/// A flag one thread sets and another polls, such as a racing thread's stop signal.
package final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false

    /// Creates a flag, not set.
    package init() {}

    /// Whether ``set()`` was called.
    package var isSet: Bool { lock.withLock { value } }

    /// Sets the flag.
    package func set() { lock.withLock { value = true } }
}
