import Foundation

/// Why libsoxr refused to resample; the text is libsoxr's own, on one line.
public enum ResamplerError: Error, Equatable, CustomStringConvertible, LocalizedError {
    /// Rates that are not finite and positive.
    case invalidRate(input: Double, output: Double)
    /// libsoxr reported an error creating or running the resampler.
    case soxr(String)

    public var description: String {
        switch self {
        case .invalidRate(let input, let output):
            return "resampler: rates must be finite and positive, got \(input) Hz → \(output) Hz"
        case .soxr(let message):
            return "resampler: libsoxr: \(message)"
        }
    }

    public var errorDescription: String? { description }
}
