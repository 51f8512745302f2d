// Hand-written code lives beside the model files: the generated records are ordinary structs.

extension User {
    /// The name as shown in lists: "Dr Ada Lovelace".
    public var displayName: String {
        [namePrefix, givenName, familyName].compactMap { $0 }.joined(separator: " ")
    }
}
