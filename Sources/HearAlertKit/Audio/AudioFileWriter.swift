import CSndfile
import Foundation

/// Writes mono WAV files: 16-bit PCM (clipped at ±1, the common exchange format) or 32-bit float (lossless
/// for intermediate results such as enhanced speech under test). Closing flushes the header; `deinit` closes
/// too, but only an explicit `close()` reports a failure. Not for concurrent use; it may be handed between threads.
public final class AudioFileWriter: @unchecked Sendable {
    /// How samples are stored.
    public enum Encoding: Sendable {
        case pcm16
        case float32
    }

    /// The file written, as given.
    public let path: String
    /// Samples per second stored in the header.
    public let sampleRate: Int
    private let file: SoundFile

    /// Creates (or replaces) the file; throws `AudioFileError` when it cannot be written.
    public init(path: String, sampleRate: Int, encoding: Encoding = .pcm16) throws {
        guard sampleRate >= 1 else {
            throw AudioFileError.invalidRequest(path: path, reason: "sample rate must be positive, got \(sampleRate)")
        }
        let subtype = encoding == .pcm16 ? Int32(SF_FORMAT_PCM_16) : Int32(SF_FORMAT_FLOAT)
        file = try SoundFile(writingTo: path, sampleRate: sampleRate, format: Int32(SF_FORMAT_WAV) | subtype)
        self.path = path
        self.sampleRate = sampleRate
    }

    /// Appends samples (mono, nominally within ±1).
    public func write(_ samples: UnsafeBufferPointer<Float>) throws {
        guard let base = samples.baseAddress, !samples.isEmpty else { return }
        try file.writeFrames(base, frames: samples.count)
    }

    /// Finishes the file; later writes fail, later closes do nothing.
    public func close() throws {
        try file.close()
    }
}
