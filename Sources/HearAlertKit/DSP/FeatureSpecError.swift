import Foundation

/// Why a `FeatureSpec` was refused; every message is one line naming the key at fault.
public indirect enum FeatureSpecError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// Keys the host does not understand (often a typo); honouring the rest would compute different features.
    case unknownKeys([String])
    /// A required key is absent; defaults are never filled in silently.
    case missingKey(String)
    /// A key holds a value of the wrong JSON type.
    case wrongType(key: String, expected: String)
    /// A value is of the right type but outside what the features can be computed with.
    case invalidValue(key: String, reason: String)
    /// The spec file could not be read, or is not JSON.
    case unreadable(path: String, reason: String)
    /// Any of the above, found in the named file.
    case inFile(path: String, FeatureSpecError)

    public var description: String {
        switch self {
        case .unknownKeys(let keys):
            let quoted = keys.map { "\"\($0)\"" }.joined(separator: ", ")
            return "feature spec: unknown key\(keys.count == 1 ? "" : "s") \(quoted)"
        case .missingKey(let key):
            return "feature spec: missing key \"\(key)\""
        case .wrongType(let key, let expected):
            return "feature spec: \"\(key)\" must be \(expected)"
        case .invalidValue(let key, let reason):
            return "feature spec: \"\(key)\" \(reason)"
        case .unreadable(let path, let reason):
            return "\(path): cannot read feature spec: \(reason)"
        case .inFile(let path, let error):
            return "\(path): \(error.description)"
        }
    }

    public var errorDescription: String? { description }
}
