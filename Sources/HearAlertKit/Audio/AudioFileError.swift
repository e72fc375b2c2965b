import Foundation

/// Why an audio file could not be read or written; every message is one line that starts with the path.
public enum AudioFileError: Error, Equatable, CustomStringConvertible, LocalizedError {
    case notFound(path: String)
    case isDirectory(path: String)
    /// The file exists but cannot be opened (permissions, I/O error).
    case unreadable(path: String, reason: String)
    /// libsndfile does not recognise the contents as audio it can decode.
    case unsupported(path: String, reason: String)
    /// A valid header but no audio frames.
    case empty(path: String)
    /// Decoding stopped early: the file ends before its header says, or its data is corrupt.
    case truncated(path: String, reason: String)
    /// A float file holds NaN or infinity; such samples would poison every feature after them.
    case nonFiniteSample(path: String, seconds: Double)
    /// A finite sample beyond the magnitude the reader was asked to accept (`AudioFileReader`'s `largestMagnitude`).
    case sampleOutOfRange(path: String, seconds: Double, value: Float, limit: Float)
    /// A request that cannot be met, such as a sample rate of zero.
    case invalidRequest(path: String, reason: String)
    case resampling(path: String, ResamplerError)
    case cannotWrite(path: String, reason: String)

    public var description: String {
        switch self {
        case .notFound(let path): return "\(path): no such file"
        case .isDirectory(let path): return "\(path): is a directory, not an audio file"
        case .unreadable(let path, let reason): return "\(path): cannot read: \(reason)"
        case .unsupported(let path, let reason): return "\(path): not a supported audio file: \(reason)"
        case .empty(let path): return "\(path): contains no audio"
        case .truncated(let path, let reason): return "\(path): truncated or corrupt: \(reason)"
        case .nonFiniteSample(let path, let seconds):
            return "\(path): contains a NaN or infinite sample at \(String(format: "%.3f", seconds)) s"
        case .sampleOutOfRange(let path, let seconds, let value, let limit):
            return "\(path): sample \(value) at \(String(format: "%.3f", seconds)) s is beyond ±\(limit), the most "
                + "this command can compute with (full scale is ±1)"
        case .invalidRequest(let path, let reason): return "\(path): \(reason)"
        case .resampling(let path, let error): return "\(path): \(error.description)"
        case .cannotWrite(let path, let reason): return "\(path): cannot write: \(reason)"
        }
    }

    public var errorDescription: String? { description }

    /// libsndfile messages sometimes span lines; errors here are one line.
    static func oneLine(_ text: String) -> String {
        text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
    }
}
