import Modelwright

/// One version of a model, taken through the whole schema pipeline.
public struct ModelVersion: Sendable {
    /// The schema file it came from.
    public let path: String
    /// The resolved entity graph.
    public let graph: EntityGraph
    /// The runtime description, whose checksum identifies the version.
    public let schema: SchemaDescription
    /// The schema's checksum, computed once (a long history asks for it many times).
    public let checksum: SchemaChecksum

    /// Creates a version; the checksum is computed here.
    public init(path: String, graph: EntityGraph, schema: SchemaDescription) {
        self.path = path
        self.graph = graph
        self.schema = schema
        checksum = schema.checksum
    }

    /// The version number.
    public var number: Int { graph.version }
}

/// A model: every version of it, oldest first; the last is the current one.
public struct Model: Sendable {
    /// The model's name.
    public let name: String
    /// The versions, numbered 1, 2, 3, … in order.
    public let versions: [ModelVersion]
    /// The migration from each version to the next, oldest first.
    public let steps: [VersionStep]

    /// The newest version, which the app's code is generated from.
    public var current: ModelVersion? { versions.last }
}
