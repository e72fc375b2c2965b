/// The one detection core, shared by file detection and live listening: audio in, alert messages out.
///
/// Per block of samples: the model's features, frame by frame (`FeatureExtractor`) → a sliding window of the
/// model's `contextFrames` → `AlertModel.predict` every `decisionStep` hops → `EventTracker`. Everything is
/// allocated in `init`; `process` allocates nothing, so it can run on the real-time processing thread.
///
/// Timing: frame `f` covers samples `[f·hop, f·hop + nFFT)`. A decision on frames `f-T+1 … f` describes the
/// centre of that span (its `decisionTime`) and was possible once sample `f·hop + nFFT` had arrived (its
/// `streamTime`, which becomes `detectedAt`). With an onset lag in the settings the tracker stamps decisions at
/// `streamTime − onsetLag` instead (see `EventTracker`).
///
/// Start padding (`AlertModel.startPadding` = P): the window ring starts with P copies of the stream's first
/// frame, as the model was trained, so the first decision comes after T − P real frames, then one every S. Why:
/// a detector started (or restarted) while an alarm already sounds then judges it after T − P frames instead of a
/// whole window, and announces it that much sooner (smoothing and minimum duration still apply). Such a window
/// begins before the stream (`first` < 0), so its centre may be negative; the tracker stamps nothing before 0 s.
/// The schedule and times are the research side's (tools/hearalert_train `decisions`, `pad_start`).
///
/// Restarts (`restartStream`): where the audio stops being continuous (the capture device was lost and reopened),
/// the detector closes what is sounding and starts over as at the start of a stream, on the same clock.
public final class AlertDetector {
    /// Receives each decision (see `DetectorDecision`) on the thread that calls `process`; it must not block.
    package typealias DecisionObserver = (DetectorDecision) -> Void

    /// The model whose features, context and labels this detector follows.
    public let model: AlertModel
    /// The event state so far (which alerts are announced); read-only from outside.
    public private(set) var tracker: EventTracker
    private let features: FeatureExtractor
    private let binCount: Int
    private let contextFrames: Int
    private let decisionStep: Int
    private let startPadding: Int
    private let hopLength: Int
    private let frameLength: Int
    private let sampleRate: Double
    /// The last `contextFrames` frames, each written twice (at slot and slot + T), so that the window ending at
    /// any slot is one contiguous, oldest-first run of memory: the model reads it in place. Slots are indexed by
    /// a frame's place in the padded stream (real frame f at f + startPadding).
    private let window: UnsafeMutableBufferPointer<Float>
    private let scores: UnsafeMutableBufferPointer<Float>
    private let observer: DecisionObserver?
    /// Frames since the stream (re)started; frame 0 is the one padded with copies of itself.
    private var framesSeen = 0
    private var samplesSeen = 0
    /// The sample (counted from the very start) where the current stream began: 0, or the last restart.
    private var streamStartSample = 0

    /// Throws when `settings` were made for other labels than the model's, or its feature spec cannot be computed.
    public convenience init(model: AlertModel, settings: TrackerSettings) throws {
        try self.init(model: model, settings: settings, observer: nil)
    }

    /// As `init(model:settings:)`, with an `observer` that sees every decision as it is made (the tests' score
    /// traces, the real-time probe); without one the real-time path does no extra work. Package-only: a hook for
    /// checking the detector, not a way to use it.
    package init(model: AlertModel, settings: TrackerSettings, observer: DecisionObserver?) throws {
        try model.require(.alertDetection)
        guard settings.labels == model.labels else {
            throw TrackerSettingsError.invalid("the settings' labels \(settings.labels) are not the model's \(model.labels)")
        }
        let spec = model.featureSpec
        let windowSeconds = Double((model.contextFrames - 1) * spec.hopLength + spec.nFFT) / Double(spec.sampleRate)
        if let lag = settings.onsetLag, lag > windowSeconds {
            throw TrackerSettingsError.invalid(
                "onset lag \(lag) s is longer than the model's window (\(windowSeconds) s): an onset must lie inside "
                    + "the window that fires")
        }
        self.model = model
        self.observer = observer
        tracker = EventTracker(settings: settings)
        features = try FeatureExtractor(spec: spec)
        binCount = spec.binCount
        contextFrames = model.contextFrames
        decisionStep = model.decisionStep
        startPadding = model.startPadding
        hopLength = spec.hopLength
        frameLength = spec.nFFT
        sampleRate = Double(spec.sampleRate)
        window = .allocate(capacity: 2 * model.contextFrames * spec.binCount)
        window.initialize(repeating: 0)
        scores = .allocate(capacity: model.labels.count)
        scores.initialize(repeating: 0)
    }

    deinit {
        window.deallocate()
        scores.deallocate()
    }

    /// Seconds of audio consumed so far.
    public var streamTime: Double { Double(samplesSeen) / sampleRate }

    /// Samples per second the detector expects (the model's feature sample rate).
    public var expectedSampleRate: Int { Int(sampleRate) }

    /// True from the first decision above a threshold until the alert ends: when the enhancer keeps alert bands.
    public var isAlertPossible: Bool { tracker.isAnyAlertPossible }

    /// Consumes samples (mono, at `expectedSampleRate`) and emits any messages the decisions produce, in order.
    public func process(_ samples: UnsafeBufferPointer<Float>, emit: (AlertMessage) -> Void) throws {
        var failure: (any Error)?
        features.process(samples) { frame in
            guard failure == nil else { return }
            do {
                try accept(frame, emit: emit)
            } catch {
                failure = error
            }
        }
        samplesSeen += samples.count
        if let failure { throw failure }
    }

    /// Ends the stream: closes open events at the current stream time (end of file, or listening stopped).
    public func finish(emit: (AlertMessage) -> Void) {
        tracker.finish(streamTime: streamTime, emit: emit)
    }

    /// Starts a new stream at the current stream time, because the audio that follows does not continue the audio
    /// before (the capture device was lost and reopened): a window spanning the gap would judge a sound that never
    /// existed, and an alert sounding at the loss would never end.
    ///
    /// So: open events end now, as `finish` ends them; the features, the window and the tracker's smoothing,
    /// cooldowns and rises are forgotten; the next frame is padded again (`startPadding`), so an alarm still
    /// sounding after the gap is judged as soon as after any start, and nothing is stamped before this moment.
    /// The clock keeps running (stream time counts the audio consumed), so all messages share one timeline.
    /// Allocates nothing: it runs on the real-time processing thread.
    public func restartStream(emit: (AlertMessage) -> Void) {
        tracker.finish(streamTime: streamTime, emit: emit)
        tracker.restart(at: streamTime)
        features.reset()
        framesSeen = 0
        streamStartSample = samplesSeen
    }

    private func accept(_ frame: UnsafeBufferPointer<Float>, emit: (AlertMessage) -> Void) throws {
        let frameIndex = framesSeen
        framesSeen += 1
        if frameIndex == 0 {
            for copy in 0..<startPadding { store(frame, inSlot: copy) }
        }
        let paddedIndex = frameIndex + startPadding
        store(frame, inSlot: paddedIndex % contextFrames)
        let windowsEnded = paddedIndex + 1 - contextFrames
        guard windowsEnded >= 0, windowsEnded % decisionStep == 0 else { return }

        let oldest = (paddedIndex + 1) % contextFrames
        let input = UnsafeBufferPointer(start: window.baseAddress! + oldest * binCount, count: contextFrames * binCount)
        try model.predict(input, into: scores)
        let first = frameIndex - contextFrames + 1  // negative while the window still holds padding copies
        let origin = streamStartSample
        let decisionTime = (Double(2 * origin + (first + frameIndex) * hopLength + frameLength) / 2) / sampleRate
        let readyTime = Double(origin + frameIndex * hopLength + frameLength) / sampleRate
        observer?(DetectorDecision(decisionTime: decisionTime, streamTime: readyTime,
                                   scores: UnsafeBufferPointer(scores)))
        tracker.update(scores: UnsafeBufferPointer(scores), decisionTime: decisionTime, streamTime: readyTime,
                       emit: emit)
    }

    /// Writes `frame` to ring slot `slot` and its mirror at `slot + contextFrames`.
    private func store(_ frame: UnsafeBufferPointer<Float>, inSlot slot: Int) {
        let base = window.baseAddress!
        (base + slot * binCount).update(from: frame.baseAddress!, count: binCount)
        (base + (slot + contextFrames) * binCount).update(from: frame.baseAddress!, count: binCount)
    }
}
