import Foundation

/// Reads a file of a Core Data bundle whole, refusing what is not a regular file or is larger than
/// a limit before reading it: a `contents` that is a folder, a FIFO (which would block the read
/// forever), a device such as `/dev/zero`, or a file of gigabytes.
///
/// The file is opened once without blocking and checked through that descriptor, so it cannot be
/// swapped for something else between the check and the read.
package enum BoundedFile {
    /// The largest `contents` file read: 32 MiB. The largest model in the corpus (WooCommerce's
    /// `Model 117`, 88 entities) is 98 KB, so this is hundreds of times what a real model needs.
    package static let maximumSize = 32 * 1024 * 1024

    /// Why a file could not be read.
    package enum Failure: Error, Equatable {
        /// No such file, or no permission.
        case cannotOpen
        /// A folder, a FIFO, a device or a socket.
        case notARegularFile
        /// Larger than the limit, with its size.
        case tooLarge(Int)
        /// A read failed.
        case cannotRead
        /// A symbolic link where a file inside a folder was expected (never followed).
        case symbolicLink
        /// A regular file with more than one name (a hard link), inside a folder read confined.
        case hardLink

        /// Why, in a few words for a message; never the file's content.
        package var reason: String {
            switch self {
            case .cannotOpen: "cannot open the file"
            case .notARegularFile: "not a regular file"
            case .tooLarge(let size): "the file is \(size) bytes, too large"
            case .cannotRead: "cannot read the file"
            case .symbolicLink: "a symbolic link"
            case .hardLink: "a file with more than one name (a hard link)"
            }
        }
    }

    /// The bytes of the file at `path`, at most `limit` of them.
    package static func read(_ path: String, limit: Int = maximumSize) throws(Failure) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { throw .cannotOpen }
        defer { close(descriptor) }
        return try read(descriptor: descriptor, limit: limit)
    }

    /// The bytes of the open file `descriptor`, at most `limit` of them; the caller closes it.
    package static func read(descriptor: Int32, limit: Int) throws(Failure) -> [UInt8] {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw .cannotOpen }
        guard status.st_mode & S_IFMT == S_IFREG else { throw .notARegularFile }
        guard Int(status.st_size) <= limit else { throw .tooLarge(Int(status.st_size)) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(status.st_size))
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { raw in
                Foundation.read(descriptor, raw.baseAddress, raw.count)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .cannotRead
            }
            if count == 0 { break }
            bytes.append(contentsOf: buffer[0..<count])
            // The file may have grown since `fstat`: stop at the limit rather than read on.
            guard bytes.count <= limit else { throw .tooLarge(bytes.count) }
        }
        return bytes
    }
}
