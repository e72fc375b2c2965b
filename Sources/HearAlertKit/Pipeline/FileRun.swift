/// One audio file through the live pipeline's processing, period by period, as fast as the CPU allows: the one
/// offline driver behind `hearalert detect`, `enhance` and `evaluate`.
///
/// The file is read mixed to mono (and resampled, where a rate is asked for) in the periods `listen` uses with
/// headphones, and each period goes through the listener's own per-period code (`PeriodProcessor`): the
/// detector, then the enhancer, told after each period whether an alert may be sounding. So a file enhanced here
/// keeps alerts audible exactly when `listen` would have. Without a detector the enhancer follows listed alert
/// intervals instead, hop by hop. The enhanced output is aligned with the input (the enhancer's delay removed,
/// its tail flushed) and exactly as long. Detection and Enhancement never open files; this does.
public final class FileRun {
    /// What one run did.
    public struct Summary: Sendable, Equatable {
        /// Samples read from the file, at `sampleRate` (and, when enhancing, samples written).
        public let samples: Int
        /// The rate the file was run at.
        public let sampleRate: Int
        /// When the enhancer was (or, detecting only, would have been) told an alert may be sounding, in seconds of
        /// file time: from the end of the period after which it was told to the end of the period after which it no
        /// longer was, as the live listener's enhancer hears it.
        public let alertActivity: [Range<Double>]
    }

    /// The file run, as given.
    public let path: String
    /// The rate samples are run at: the one asked for, else the file's own.
    public let sampleRate: Int
    /// Seconds of audio the file's header promises (0 if its format does not say).
    public let duration: Double
    private let reader: AudioFileReader

    /// Opens `path`, to be run at `sampleRate` (a detector's rate), or at its own rate when nil; throws
    /// `AudioFileError`, also for a sample beyond `largestMagnitude` (the enhancer's range, when enhancing).
    public init(path: String, sampleRate: Int? = nil, largestMagnitude: Float = .greatestFiniteMagnitude) throws {
        let rate = try sampleRate ?? AudioFileReader(path: path, sampleRate: 16_000).sourceSampleRate
        reader = try AudioFileReader(path: path, sampleRate: rate, largestMagnitude: largestMagnitude)
        self.path = path
        self.sampleRate = rate
        duration = reader.duration
    }

    /// Runs the whole file once through `detector` and/or `enhancer` (at least one; both at `sampleRate`).
    ///
    /// - Parameters:
    ///   - knownAlerts: stretches to keep audible besides what the detector finds (seconds of file time).
    ///   - progress: called with the fraction done (0…1) every few hundred milliseconds of audio, for long files.
    ///   - enhanced: receives the enhanced signal in order, aligned with the input; never called without an
    ///     enhancer.
    ///   - emit: receives every alert message in the order a live listener would emit it, the ends of alerts still
    ///     sounding at the end of the file last.
    public func run(
        detector: AlertDetector?, enhancer: SpeechEnhancer? = nil, knownAlerts: AlertIntervals = AlertIntervals(),
        progress: ((Double) -> Void)? = nil, enhanced: (UnsafeBufferPointer<Float>) throws -> Void = { _ in },
        emit: (AlertMessage) -> Void = { _ in }
    ) throws -> Summary {
        precondition(detector != nil || enhancer != nil, "a file run needs a detector or an enhancer")
        precondition(detector.map { $0.expectedSampleRate == sampleRate } ?? true, "the detector runs at another rate")
        precondition(enhancer.map { $0.sampleRate == sampleRate } ?? true, "the enhancer runs at another rate")
        // Live periods with a detector; without one the flag follows the intervals hop by hop, as finely as it can.
        let periodFrames = detector == nil ? enhancer!.hopLength
            : ListenConfiguration.periodFrames(seconds: ListenConfiguration.headphonePeriodSeconds,
                                               sampleRate: sampleRate)
        let ring = SPSCRingBuffer(minimumCapacity: periodFrames + (enhancer?.hopLength ?? 0))
        let feed = enhancer.map { HeadphoneFeed(ring: ring, wake: nil, enhancer: $0) }
        var processor = detector.map { PeriodProcessor(detector: $0, feed: feed) }
        let output = AlignedOutput(ring: ring, latency: enhancer?.latencySamples ?? 0)
        var activity = ActivityRecord()
        let period = UnsafeMutableBufferPointer<Float>.allocate(capacity: periodFrames)
        defer { period.deallocate() }
        let rate = Double(sampleRate)
        let periodSeconds = Double(periodFrames) / rate
        let progressStep = max(1, Int(0.25 * rate) / periodFrames)
        var samplesRead = 0
        var periods = 0
        while true {
            let count = try readFully(into: period)
            if count == 0 { break }
            let start = Double(samplesRead) / rate
            let alertKnown = knownAlerts.overlaps(start: start, end: start + periodSeconds)
            samplesRead += count
            let alertSounding: Bool
            if processor != nil {
                alertSounding = try processor!.process(UnsafeBufferPointer(rebasing: period[0..<count]),
                                                       alertKnown: alertKnown, emit: emit)
            } else {
                // The last hop is completed with silence, as the flush below would.
                period[count...].update(repeating: 0)
                feed?.play(UnsafeBufferPointer(period), alertSounding: alertKnown)
                alertSounding = alertKnown
            }
            activity.note(alertSounding, at: Double(samplesRead) / rate)
            try output.drain(upTo: samplesRead, into: enhanced)
            periods += 1
            if let progress, periods % progressStep == 0 {
                progress(min(1, Double(samplesRead) / max(1, duration * rate)))
            }
        }
        progress?(min(1, Double(samplesRead) / max(1, duration * rate)))
        let end = Double(samplesRead) / rate
        activity.note(false, at: end)
        detector?.finish(emit: emit)
        if let feed {
            // Silence after the end pushes the last samples through the enhancer's delay.
            period.update(repeating: 0)
            let flag = knownAlerts.overlaps(start: end, end: end + periodSeconds) || (detector?.isAlertPossible ?? false)
            while output.written < samplesRead {
                feed.play(UnsafeBufferPointer(period), alertSounding: flag)
                try output.drain(upTo: samplesRead, into: enhanced)
            }
        }
        return Summary(samples: samplesRead, sampleRate: sampleRate, alertActivity: activity.ranges)
    }

    /// Reads until `buffer` is full or the file ends.
    private func readFully(into buffer: UnsafeMutableBufferPointer<Float>) throws -> Int {
        var filled = 0
        while filled < buffer.count {
            let got = try reader.read(into: UnsafeMutableBufferPointer(rebasing: buffer[filled...]))
            if got == 0 { break }
            filled += got
        }
        return filled
    }
}

/// The enhancer's output as the headphone ring holds it, handed on with the enhancer's delay removed.
private final class AlignedOutput {
    private let ring: SPSCRingBuffer
    private let block: UnsafeMutableBufferPointer<Float>
    /// Samples still to drop: what is left of the enhancer's delay.
    private var latency: Int
    /// Samples handed on so far.
    private(set) var written = 0

    init(ring: SPSCRingBuffer, latency: Int) {
        self.ring = ring
        self.latency = latency
        block = .allocate(capacity: ring.capacity)
        block.initialize(repeating: 0)
    }

    deinit { block.deallocate() }

    /// Takes everything queued and hands what follows the delay to `write`, up to input sample `limit`.
    func drain(upTo limit: Int, into write: (UnsafeBufferPointer<Float>) throws -> Void) throws {
        let count = ring.read(into: block)
        let skipped = min(latency, count)
        latency -= skipped
        let wanted = min(count - skipped, limit - written)
        guard wanted > 0 else { return }
        try write(UnsafeBufferPointer(rebasing: block[skipped..<(skipped + wanted)]))
        written += wanted
    }
}

/// The stretches during which a flag was set, from its changes.
private struct ActivityRecord {
    private(set) var ranges: [Range<Double>] = []
    private var since: Double?

    /// The flag is `on` from `time` (seconds) on.
    mutating func note(_ on: Bool, at time: Double) {
        if on, since == nil {
            since = time
        } else if !on, let start = since {
            if start < time { ranges.append(start..<time) }
            since = nil
        }
    }
}
