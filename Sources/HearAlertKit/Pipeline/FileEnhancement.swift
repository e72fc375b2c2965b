import Foundation

/// `hearalert enhance`: the live enhancer over a file (`FileRun`), keeping alerts audible where listed intervals
/// say one sounds and, given a detector, wherever the detector would have told the live enhancer one may be.
public enum FileEnhancement {
    /// What one run did, for the command to report.
    public struct Summary: Sendable, Equatable {
        /// Samples written, as many as were read.
        public let samples: Int
        /// The output's sample rate: the input's own, or the detector's when there is one.
        public let sampleRate: Int
        /// The enhancer's delay, removed from the output.
        public let latencySamples: Int
        /// Seconds during which alerts were kept audible (listed intervals and detected stretches, overlaps once).
        public let alertSeconds: Double
        /// Stretches kept audible: the listed intervals that overlap the file (clipped to it), and the detector's.
        public let alertIntervals: Int
        /// Listed intervals dropped because they start after the file's end.
        public let intervalsPastEnd: Int
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
    ///
    /// With a `detector`, the file is run as `listen` runs the microphone: at the detector's rate, with the
    /// enhancer keeping alerts audible from the first decision above a threshold until the alert ends
    /// (`AlertDetector.isAlertPossible`, period by period), so the output is what a listener would have heard.
    public static func run(
        inputPath: String, output: AtomicOutputFile, configuration: EnhancerConfiguration,
        alerts: AlertIntervals = AlertIntervals(), detector: AlertDetector? = nil,
        encoding: AudioFileWriter.Encoding = .float32
    ) throws -> Summary {
        let file: FileRun
        let enhancer: SpeechEnhancer
        let writer: AudioFileWriter
        do {
            file = try FileRun(path: inputPath, sampleRate: detector?.expectedSampleRate,
                               largestMagnitude: SpeechEnhancer.largestInputMagnitude)
            enhancer = try SpeechEnhancer(configuration: configuration, sampleRate: file.sampleRate)
            writer = try AudioFileWriter(output: output, sampleRate: file.sampleRate, encoding: encoding)
        } catch {
            output.discard()
            throw error
        }
        let listed = alerts.clipped(to: file.duration)
        do {
            let run = try file.run(detector: detector, enhancer: enhancer, knownAlerts: listed,
                                   enhanced: { try writer.write($0) })
            try writer.close()
            let detected = detector == nil ? [] : run.alertActivity.map { $0.lowerBound...$0.upperBound }
            return Summary(samples: run.samples, sampleRate: file.sampleRate, latencySamples: enhancer.latencySamples,
                           alertSeconds: AlertIntervals(listed.intervals + detected).coveredSeconds,
                           alertIntervals: listed.intervals.count + detected.count,
                           intervalsPastEnd: alerts.intervals.count - listed.intervals.count)
        } catch {
            // A half-written file would look like a short recording: the previous file stays instead.
            writer.discard()
            throw error
        }
    }
}
