import Foundation

/// `hearalert enhance`: runs the live enhancer over a file, hop by hop, exactly as the processing thread would,
/// with the alert flag taken from known alert intervals.
public enum FileEnhancement {
    /// What one run did, for the command to report.
    public struct Summary: Sendable, Equatable {
        /// Samples written, as many as were read.
        public let samples: Int
        /// The input's (and output's) sample rate.
        public let sampleRate: Int
        /// The enhancer's delay, removed from the output.
        public let latencySamples: Int
        /// Seconds during which the alert flag was on.
        public let alertSeconds: Double
        /// Alert intervals that overlap the file (clipped to it); intervals that start after its end are dropped.
        public let alertIntervals: Int
    }

    /// Enhances `inputPath` into `outputPath` at the input's own sample rate. The output is aligned with the
    /// input — the enhancer's delay is removed and its tail flushed — and has the same length, so it can be
    /// compared sample by sample with a clean reference. Alert intervals are clipped to the file's length.
    public static func run(
        inputPath: String, outputPath: String, configuration: EnhancerConfiguration,
        alerts: AlertIntervals = AlertIntervals(), encoding: AudioFileWriter.Encoding = .float32
    ) throws -> Summary {
        try run(inputPath: inputPath, output: AtomicOutputFile(path: outputPath), configuration: configuration,
                alerts: alerts, encoding: encoding)
    }

    /// As `run(inputPath:outputPath:…)`, into an output the caller opened before its own work (and owns no more).
    public static func run(
        inputPath: String, output: AtomicOutputFile, configuration: EnhancerConfiguration,
        alerts: AlertIntervals = AlertIntervals(), encoding: AudioFileWriter.Encoding = .float32
    ) throws -> Summary {
        let reader: AudioFileReader
        let enhancer: SpeechEnhancer
        let writer: AudioFileWriter
        do {
            let probe = try AudioFileReader(path: inputPath, sampleRate: 16000)
            let sampleRate = probe.sourceSampleRate
            reader = try AudioFileReader(path: inputPath, sampleRate: sampleRate,
                                         largestMagnitude: SpeechEnhancer.largestInputMagnitude)
            enhancer = try SpeechEnhancer(configuration: configuration, sampleRate: sampleRate)
            writer = try AudioFileWriter(output: output, sampleRate: sampleRate, encoding: encoding)
        } catch {
            output.discard()
            throw error
        }
        let alerts = alerts.clipped(to: reader.duration)
        do {
            let samples = try stream(reader: reader, enhancer: enhancer, alerts: alerts, writer: writer)
            try writer.close()
            return Summary(samples: samples, sampleRate: writer.sampleRate, latencySamples: enhancer.latencySamples,
                           alertSeconds: alerts.coveredSeconds, alertIntervals: alerts.intervals.count)
        } catch {
            // A half-written file would look like a short recording: the previous file stays instead.
            writer.discard()
            throw error
        }
    }

    private static func stream(
        reader: AudioFileReader, enhancer: SpeechEnhancer, alerts: AlertIntervals, writer: AudioFileWriter
    ) throws -> Int {
        let hop = enhancer.hopLength
        let rate = Double(enhancer.sampleRate)
        var input = [Float](repeating: 0, count: hop)
        var output = [Float](repeating: 0, count: hop)
        var samplesRead = 0
        var samplesToSkip = enhancer.latencySamples
        var samplesWritten = 0
        var inputFinished = false
        // Keep hopping until every input sample has come out the other side of the delay.
        while !inputFinished || samplesWritten < samplesRead {
            let count = try input.withUnsafeMutableBufferPointer { buffer in
                inputFinished ? 0 : try readFully(reader, into: buffer)
            }
            if count < hop {
                inputFinished = true
                for index in count..<hop { input[index] = 0 }
            }
            let start = Double(samplesRead) / rate
            enhancer.setAlertActive(alerts.overlaps(start: start, end: start + Double(hop) / rate))
            samplesRead += count
            input.withUnsafeBufferPointer { source in
                output.withUnsafeMutableBufferPointer { enhancer.process(source, into: $0) }
            }
            let skipped = min(samplesToSkip, hop)
            samplesToSkip -= skipped
            let wanted = min(hop - skipped, samplesRead - samplesWritten)
            if wanted > 0 {
                try output.withUnsafeBufferPointer { buffer in
                    try writer.write(UnsafeBufferPointer(rebasing: buffer[skipped..<(skipped + wanted)]))
                }
                samplesWritten += wanted
            }
        }
        return samplesWritten
    }

    /// Reads until `buffer` is full or the file ends.
    private static func readFully(_ reader: AudioFileReader, into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let got = try reader.read(into: UnsafeMutableBufferPointer(rebasing: buffer[filled...]))
            if got == 0 { break }
            filled += got
        }
        return filled
    }
}
