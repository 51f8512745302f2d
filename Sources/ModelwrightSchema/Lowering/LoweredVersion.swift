import Dispatch
import Foundation
import Modelwright

/// One version of a model, taken through the whole schema pipeline.
public struct LoweredVersion: Sendable {
    /// The schema file it came from.
    public let path: String
    /// The resolved entity graph.
    package let graph: EntityGraph
    /// The runtime description, whose checksum identifies the version.
    public let schema: SchemaDescription
    private let pendingChecksum: PendingChecksum

    /// Creates a version, and starts computing its checksum in the background.
    package init(path: String, graph: EntityGraph, schema: SchemaDescription) {
        self.path = path
        self.graph = graph
        self.schema = schema
        pendingChecksum = PendingChecksum(of: schema)
    }

    /// The schema's checksum, computed once (a long history asks for it many times); asking
    /// before the background computation is done waits for it, or computes it if it has not begun.
    public var checksum: SchemaChecksum { pendingChecksum.value }

    /// The version number.
    public var number: Int { graph.version }
}

/// A checksum computed once, on a background thread from the moment its version is made.
///
/// Hashing a large schema is a long serial step (a megabyte of canonical text for a thousand
/// entities), and loading a single version does not need the result: the generator uses it last,
/// for the schema file, and builds everything else meanwhile.
private final class PendingChecksum: @unchecked Sendable {
    /// Held while computing, so that whoever asks meanwhile waits for the one computation.
    private let lock = NSLock()
    private let schema: SchemaDescription
    private var result: SchemaChecksum?

    init(of schema: SchemaDescription) {
        self.schema = schema
        DispatchQueue.global(qos: .userInitiated).async { [self] in _ = value }
    }

    var value: SchemaChecksum {
        lock.withLock {
            if let result { return result }
            let computed = schema.checksum
            result = computed
            return computed
        }
    }
}

extension LoweredVersion {
    /// Lowers a checked version into the runtime's description.
    package static func lower(_ version: CheckedVersions.Version) -> LoweredVersion {
        LoweredVersion(path: version.path, graph: version.graph, schema: SchemaLowering.lower(version.graph))
    }
}
