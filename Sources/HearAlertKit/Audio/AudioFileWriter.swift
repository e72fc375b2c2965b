import CSndfile
import Foundation

/// Writes mono WAV files: 16-bit PCM (clipped at ±1, the common exchange format) or 32-bit float (lossless
/// for intermediate results such as enhanced speech under test).
///
/// The file is an `AtomicOutputFile`: only `close()` puts it in place, whole, replacing any previous file of that
/// name; a writer that fails, or is released without `close()`, leaves the previous file as it was and nothing
/// half-written beside it. Not for concurrent use; it may be handed between threads.
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
    private let output: AtomicOutputFile
    private let file: SoundFile

    /// Starts the file at `path`; throws `OutputFileError` when it cannot be written, `AudioFileError` for a
    /// sample rate that is not positive.
    public convenience init(path: String, sampleRate: Int, encoding: Encoding = .pcm16) throws {
        try Self.checkRate(sampleRate, path: path)
        try self.init(output: AtomicOutputFile(path: path), sampleRate: sampleRate, encoding: encoding)
    }

    /// Writes into `output`, which an earlier step opened (so that a command knows its output can be written
    /// before its work starts); the writer then owns it.
    public init(output: AtomicOutputFile, sampleRate: Int, encoding: Encoding = .pcm16) throws {
        do {
            try Self.checkRate(sampleRate, path: output.path)
            let subtype = encoding == .pcm16 ? Int32(SF_FORMAT_PCM_16) : Int32(SF_FORMAT_FLOAT)
            file = try SoundFile(writingTo: output.descriptor, path: output.path, sampleRate: sampleRate,
                                 format: Int32(SF_FORMAT_WAV) | subtype)
        } catch {
            output.discard()
            throw error
        }
        self.output = output
        self.path = output.path
        self.sampleRate = sampleRate
    }

    /// Appends samples (mono, nominally within ±1).
    public func write(_ samples: UnsafeBufferPointer<Float>) throws {
        guard let base = samples.baseAddress, !samples.isEmpty else { return }
        try file.writeFrames(base, frames: samples.count)
    }

    /// Finishes the file and puts it in place; later writes fail, later closes do nothing. On failure nothing
    /// is put in place.
    public func close() throws {
        do {
            try file.close()
            try output.commit()
        } catch {
            output.discard()
            throw error
        }
    }

    /// Abandons the file: the previous file at `path`, if any, stays as it was.
    public func discard() {
        try? file.close()
        output.discard()
    }

    private static func checkRate(_ sampleRate: Int, path: String) throws {
        guard sampleRate >= 1 else {
            throw AudioFileError.invalidRequest(path: path, reason: "sample rate must be positive, got \(sampleRate)")
        }
    }
}
