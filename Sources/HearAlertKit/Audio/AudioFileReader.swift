import Foundation

/// Streams any file libsndfile decodes (WAV, FLAC, OGG/Vorbis, AIFF, …) as mono float samples at the rate asked
/// for: channels are averaged, and libsoxr resamples when the file's rate differs (otherwise samples pass
/// through untouched). Memory is fixed at init by `blockFrames`, so a ten-hour recording streams in the same
/// few hundred kilobytes as a ten-second one.
///
/// Every sample returned is finite: a float file holding NaN or infinity is an error, not silently cleaned; so is
/// one beyond `largestMagnitude`, for a consumer whose arithmetic has a range (the speech enhancer's).
/// A file that ends before its header says, or fails to decode, is `AudioFileError.truncated`.
/// Not for concurrent use; it may be handed from one thread to another.
public final class AudioFileReader: @unchecked Sendable {
    /// The file read, as given.
    public let path: String
    /// The rate samples are delivered at.
    public let sampleRate: Int
    /// The file's own sample rate, before resampling.
    public let sourceSampleRate: Int
    /// The file's channel count, before mixing to mono.
    public let sourceChannels: Int
    /// Frames the file's header promises, at the source rate; 0 if the format does not say (a streamed Ogg).
    public let sourceFrames: Int

    /// Seconds of audio, from the file's frame count (0 if the format does not say).
    public var duration: Double { Double(sourceFrames) / Double(sourceSampleRate) }

    private let file: SoundFile
    private let resampler: Resampler?
    private let blockFrames: Int
    private let largestMagnitude: Float
    private let interleaved: UnsafeMutableBufferPointer<Float>  // blockFrames × channels, as decoded
    private let mono: UnsafeMutableBufferPointer<Float>         // blockFrames
    private let ready: UnsafeMutableBufferPointer<Float>        // resampled samples not yet handed out
    private var readyStart = 0
    private var readyEnd = 0
    private var framesDecoded = 0
    private var sourceFinished = false
    private var resamplerDrained = false

    /// Opens `path` and prepares to deliver mono samples at `sampleRate`; throws `AudioFileError`, also for a
    /// (mixed) sample whose magnitude exceeds `largestMagnitude`.
    public init(path: String, sampleRate: Int, blockFrames: Int = 4096,
                largestMagnitude: Float = .greatestFiniteMagnitude) throws {
        guard sampleRate >= 1 else {
            throw AudioFileError.invalidRequest(path: path, reason: "sample rate must be positive, got \(sampleRate)")
        }
        guard blockFrames >= 1 else {
            throw AudioFileError.invalidRequest(path: path, reason: "block size must be positive, got \(blockFrames)")
        }
        file = try SoundFile(readingFrom: path)
        self.path = path
        self.sampleRate = sampleRate
        self.blockFrames = blockFrames
        self.largestMagnitude = largestMagnitude
        sourceSampleRate = Int(file.info.samplerate)
        sourceChannels = Int(file.info.channels)
        sourceFrames = file.promisedFrames ?? 0
        if sourceSampleRate == sampleRate {
            resampler = nil
        } else {
            do {
                resampler = try Resampler(inputRate: Double(sourceSampleRate), outputRate: Double(sampleRate))
            } catch let error as ResamplerError {
                throw AudioFileError.resampling(path: path, error)
            }
        }
        interleaved = .allocate(capacity: blockFrames * sourceChannels)
        interleaved.initialize(repeating: 0)
        mono = .allocate(capacity: blockFrames)
        mono.initialize(repeating: 0)
        let readyCapacity = resampler?.maxOutputCount(forInputCount: blockFrames) ?? blockFrames
        ready = .allocate(capacity: readyCapacity)
        ready.initialize(repeating: 0)
    }

    deinit {
        interleaved.deallocate()
        mono.deallocate()
        ready.deallocate()
    }

    /// Fills `buffer` with the next samples and returns how many; fewer than `buffer.count` only at the end,
    /// 0 once everything has been delivered.
    public func read(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        var written = 0
        while written < buffer.count {
            if readyStart == readyEnd {
                guard try refill() else { break }
                continue
            }
            let count = min(buffer.count - written, readyEnd - readyStart)
            (buffer.baseAddress! + written).update(from: ready.baseAddress! + readyStart, count: count)
            readyStart += count
            written += count
        }
        return written
    }

    /// Decodes (and resamples) the next block into `ready`; false when nothing is left.
    private func refill() throws -> Bool {
        readyStart = 0
        readyEnd = 0
        if !sourceFinished {
            let frames = try file.readFrames(into: interleaved.baseAddress!, frames: blockFrames)
            if frames == 0 {
                sourceFinished = true
                if framesDecoded < sourceFrames {
                    throw AudioFileError.truncated(
                        path: path, reason: "header promises \(sourceFrames) frames, only \(framesDecoded) decoded")
                }
            } else {
                try downmix(frames: frames)
                framesDecoded += frames
                if let resampler {
                    let decoded = UnsafeBufferPointer(rebasing: mono[0..<frames])
                    readyEnd = try resampling { try resampler.process(decoded, into: ready) }
                } else {
                    ready.baseAddress!.update(from: mono.baseAddress!, count: frames)
                    readyEnd = frames
                }
                return true
            }
        }
        guard let resampler, !resamplerDrained else { return false }
        readyEnd = try resampling { try resampler.flush(into: ready) }
        if readyEnd == 0 { resamplerDrained = true }
        return readyEnd > 0
    }

    private func downmix(frames: Int) throws {
        let channels = sourceChannels
        let scale = 1 / Float(channels)
        for frame in 0..<frames {
            var sum: Float = 0
            for channel in 0..<channels { sum += interleaved[frame * channels + channel] }
            let sample = channels == 1 ? sum : sum * scale
            // One comparison per sample: NaN and infinity fail it too, and are told apart only then.
            guard abs(sample) <= largestMagnitude else {
                let seconds = Double(framesDecoded + frame) / Double(sourceSampleRate)
                throw sample.isFinite
                    ? AudioFileError.sampleOutOfRange(path: path, seconds: seconds, value: sample, limit: largestMagnitude)
                    : AudioFileError.nonFiniteSample(path: path, seconds: seconds)
            }
            mono[frame] = sample
        }
    }

    private func resampling(_ body: () throws -> Int) throws -> Int {
        do {
            return try body()
        } catch let error as ResamplerError {
            throw AudioFileError.resampling(path: path, error)
        }
    }
}

/// Whole-file convenience over `AudioFileReader`, for short clips and tests.
public enum AudioFile {
    /// Every sample of `path` as mono at `sampleRate`; holds the whole signal, so prefer the reader for long files.
    public static func readAll(
        path: String, sampleRate: Int, largestMagnitude: Float = .greatestFiniteMagnitude
    ) throws -> [Float] {
        let reader = try AudioFileReader(path: path, sampleRate: sampleRate, largestMagnitude: largestMagnitude)
        var samples = [Float]()
        samples.reserveCapacity(Int(reader.duration * Double(sampleRate)) + 64)
        var block = [Float](repeating: 0, count: 16_384)
        while true {
            let count = try block.withUnsafeMutableBufferPointer { try reader.read(into: $0) }
            if count == 0 { break }
            samples.append(contentsOf: block[0..<count])
        }
        return samples
    }
}
