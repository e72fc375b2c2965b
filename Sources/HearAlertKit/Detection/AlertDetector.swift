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
public final class AlertDetector {
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
    private var framesSeen = 0
    private var samplesSeen = 0
    /// Decisions made so far and the times of the latest (its scores are `latestScores`): lets tests hold the
    /// decision schedule to the research mirror without a hook on the real-time path.
    private(set) var decisionCount = 0
    private(set) var latestDecisionTime = 0.0
    private(set) var latestStreamTime = 0.0
    var latestScores: UnsafeBufferPointer<Float> { UnsafeBufferPointer(scores) }

    /// Throws when `settings` were made for other labels than the model's, or its feature spec cannot be computed.
    public init(model: AlertModel, settings: TrackerSettings) throws {
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
        let decisionTime = (Double((first + frameIndex) * hopLength + frameLength) / 2) / sampleRate
        let readyTime = Double(frameIndex * hopLength + frameLength) / sampleRate
        decisionCount += 1
        latestDecisionTime = decisionTime
        latestStreamTime = readyTime
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
