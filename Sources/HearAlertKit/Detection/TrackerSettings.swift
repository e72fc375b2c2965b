import Foundation

/// How raw per-decision scores become alert events: the knobs that trade missed alerts against false alarms.
///
/// Defaults come from the model file (its thresholds and its optional `tracker` metadata, CSources/alertnet/
/// FORMAT.md), because the right values depend on how the model was trained; command-line flags override them.
/// The model's metadata, the flags and the fallback are each a `Partial`, layered with `merged(over:)`:
/// flags over metadata over `Partial.fallback`. A new knob is a field here and in `Partial` (its JSON key, its
/// fallback, its check), and a flag in the command line's `DetectionOptions`.
public struct TrackerSettings: Sendable, Equatable {
    /// Label names in the model's output order.
    public var labels: [String]
    /// On-threshold per label, aligned with `labels`: an alert starts when its smoothed score reaches this.
    public var thresholds: [Float]
    /// Decisions averaged (moving average) before thresholds apply; 1 means no smoothing.
    public var smoothingFrames: Int
    /// Off-threshold as a fraction of the on-threshold (hysteresis): an alert ends below `threshold * offRatio`.
    public var offRatio: Float
    /// Seconds an alert must last before it is announced; shorter blips are dropped as false alarms.
    public var minDuration: Double
    /// Pauses shorter than this (seconds) stay inside one event: the gaps of a beeping alarm or a ringing phone.
    public var mergeGap: Double
    /// Seconds after an event of a label ends during which that label does not start a new one.
    public var cooldown: Double
    /// Seconds from an alert's true onset to the end of the first model window that fires, for a model trained
    /// to fire early: decisions are then stamped at `window end − onsetLag` instead of the window's centre, so
    /// early firing (low latency) no longer means early onsets. Nil keeps the centre. At most the window's
    /// length (checked by `AlertDetector`, which knows the window).
    public var onsetLag: Double?
    /// Stamp an onset where the score's rise began instead of where it crossed the threshold: at the first of the
    /// unbroken run of decisions at or above `threshold · onsetRiseRatio` (at most `onsetRiseLookback` seconds
    /// before the crossing, never inside the label's cooldown). A network's score climbs over a few decisions
    /// after an alert begins and crosses the threshold at a variable point, so crossing stamps are often late;
    /// the announcement itself is not delayed. Nil stamps at the crossing. A Float like `offRatio`, because the
    /// rise level is computed in the scores' precision (as the research mirror does).
    public var onsetRiseRatio: Float?
    /// How far before its threshold crossing (seconds) a rise may stamp the onset. A score that has hovered just
    /// under the threshold for longer is usually background, not the alert's beginning, so the bound keeps a long
    /// near-miss from dragging the onset back over it; but an alert told apart only by its rhythm (a beep
    /// pattern, a siren's sweep) can sit at a low score for seconds before the model is sure, and a longer bound
    /// then still dates it from its start. Only used with `onsetRiseRatio`; must be positive.
    public var onsetRiseLookback: Double

    /// `tuning` over `Partial.fallback`, checked: throws naming the first value that cannot work.
    public init(labels: [String], thresholds: [Float], tuning: Partial = Partial()) throws(TrackerSettingsError) {
        let knobs = tuning.merged(over: .fallback)
        self.labels = labels
        self.thresholds = thresholds
        // The fallback sets every knob that is not optional.
        smoothingFrames = knobs.smoothingFrames!
        offRatio = knobs.offRatio!
        minDuration = knobs.minDuration!
        mergeGap = knobs.mergeGap!
        cooldown = knobs.cooldown!
        onsetLag = knobs.onsetLag
        onsetRiseRatio = knobs.onsetRiseRatio
        onsetRiseLookback = knobs.onsetRiseLookback!
        try validate()
    }

    /// Settings from a model's labels, thresholds and `tracker` metadata JSON (nil if absent), then `overrides`.
    public init(
        labels: [String], thresholds: [Float], trackerMetadata: String?, overrides: TrackerOverrides = .init()
    ) throws(TrackerSettingsError) {
        let metadata = try trackerMetadata.map(Partial.init(trackerMetadata:)) ?? Partial()
        var thresholds = overrides.everyThreshold.map { [Float](repeating: $0, count: thresholds.count) }
            ?? thresholds
        for (label, threshold) in overrides.thresholds {
            guard let index = labels.firstIndex(of: label) else {
                throw .unknownLabel(label, known: labels)
            }
            thresholds[index] = threshold
        }
        try self.init(labels: labels, thresholds: thresholds,
                      tuning: overrides.tuning.merged(over: metadata))
    }

    /// Settings from a model file's labels, default thresholds and `tracker` metadata, then `overrides`.
    public init(model: AlertModel, overrides: TrackerOverrides = .init()) throws(TrackerSettingsError) {
        try self.init(labels: model.labels, thresholds: model.thresholds, trackerMetadata: model.metadata("tracker"),
                      overrides: overrides)
    }

    private func validate() throws(TrackerSettingsError) {
        guard labels.count == thresholds.count, !labels.isEmpty else {
            throw .invalid("\(labels.count) labels but \(thresholds.count) thresholds")
        }
        for (label, threshold) in zip(labels, thresholds) where !(threshold > 0 && threshold < 1) {
            throw .invalid("threshold \(threshold) for \(label) is not between 0 and 1")
        }
        guard smoothingFrames >= 1 else { throw .invalid("smoothing must average at least 1 decision") }
        guard offRatio > 0 && offRatio <= 1 else { throw .invalid("off ratio \(offRatio) is not in (0, 1]") }
        for (name, value) in [("minimum duration", minDuration), ("merge gap", mergeGap), ("cooldown", cooldown)]
        where !(value >= 0 && value.isFinite) {
            throw .invalid("\(name) \(value) is not a non-negative number of seconds")
        }
        if let onsetLag, !(onsetLag >= 0 && onsetLag.isFinite) {
            throw .invalid("onset lag \(onsetLag) is not a non-negative number of seconds")
        }
        if let onsetRiseRatio, !(onsetRiseRatio > 0 && onsetRiseRatio <= 1) {
            throw .invalid("onset rise ratio \(onsetRiseRatio) is not in (0, 1]")
        }
        guard onsetRiseLookback > 0 && onsetRiseLookback.isFinite else {
            throw .invalid("onset rise lookback \(onsetRiseLookback) is not a positive number of seconds")
        }
    }

    /// Any of the knobs, the others unset: what a model's `tracker` metadata, the command line or the fallback says.
    /// Decoded from the metadata's JSON, whose keys are the research side's names (tools/hearalert_train/tracker.py).
    public struct Partial: Sendable, Equatable, Decodable {
        /// `TrackerSettings.smoothingFrames`, or unset.
        public var smoothingFrames: Int?
        /// `TrackerSettings.offRatio`, or unset.
        public var offRatio: Float?
        /// `TrackerSettings.minDuration`, or unset.
        public var minDuration: Double?
        /// `TrackerSettings.mergeGap`, or unset.
        public var mergeGap: Double?
        /// `TrackerSettings.cooldown`, or unset.
        public var cooldown: Double?
        /// `TrackerSettings.onsetLag`, or unset.
        public var onsetLag: Double?
        /// `TrackerSettings.onsetRiseRatio`, or unset.
        public var onsetRiseRatio: Float?
        /// `TrackerSettings.onsetRiseLookback`, or unset.
        public var onsetRiseLookback: Double?

        /// What a model without `tracker` metadata gets, and any knob neither it nor the command line sets. The 1 s
        /// merge gap is the corpus convention (CORPUS.md); the 1 s rise lookback is what every model before the key
        /// existed used. Onset lag and onset rise stay off.
        public static let fallback = Partial(smoothingFrames: 3, offRatio: 0.5, minDuration: 0.1, mergeGap: 1.0,
                                             cooldown: 0.0, onsetRiseLookback: 1.0)

        /// The knobs given set, the others not (`Partial()` sets none).
        public init(
            smoothingFrames: Int? = nil, offRatio: Float? = nil, minDuration: Double? = nil, mergeGap: Double? = nil,
            cooldown: Double? = nil, onsetLag: Double? = nil, onsetRiseRatio: Float? = nil,
            onsetRiseLookback: Double? = nil
        ) {
            self.smoothingFrames = smoothingFrames
            self.offRatio = offRatio
            self.minDuration = minDuration
            self.mergeGap = mergeGap
            self.cooldown = cooldown
            self.onsetLag = onsetLag
            self.onsetRiseRatio = onsetRiseRatio
            self.onsetRiseLookback = onsetRiseLookback
        }

        /// Every knob set here, the others as `base` sets them.
        public func merged(over base: Partial) -> Partial {
            var merged = self
            merged.smoothingFrames = smoothingFrames ?? base.smoothingFrames
            merged.offRatio = offRatio ?? base.offRatio
            merged.minDuration = minDuration ?? base.minDuration
            merged.mergeGap = mergeGap ?? base.mergeGap
            merged.cooldown = cooldown ?? base.cooldown
            merged.onsetLag = onsetLag ?? base.onsetLag
            merged.onsetRiseRatio = onsetRiseRatio ?? base.onsetRiseRatio
            merged.onsetRiseLookback = onsetRiseLookback ?? base.onsetRiseLookback
            return merged
        }
    }
}

extension TrackerSettings.Partial {
    /// The metadata's keys: the research side's names for the knobs.
    enum CodingKeys: String, CodingKey, CaseIterable {
        case smoothingFrames = "smoothing_frames"
        case offRatio = "off_ratio"
        case minDuration = "min_duration"
        case mergeGap = "merge_gap"
        case cooldown
        case onsetLag = "onset_lag"
        case onsetRiseRatio = "onset_rise_ratio"
        case onsetRiseLookback = "onset_rise_lookback"
    }

    /// Keys that must hold JSON integers (`3`, never `3.0` or `true`), as tools/hearalert_train/tracker.py
    /// requires: `JSONDecoder` alone would read `3.0` as 3.
    static let integerKeys: [CodingKeys] = [.smoothingFrames]

    /// The `tracker` metadata object; unknown keys are rejected so a setting is never silently ignored, and a
    /// count written as `3.0` is refused, as the research mirror refuses it.
    public init(trackerMetadata json: String) throws(TrackerSettingsError) {
        let data = Data(json.utf8)
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw .invalid("the model's tracker metadata is not a JSON object: \(json)")
        }
        let known = Set(CodingKeys.allCases.map(\.rawValue))
        if let unknown = object.keys.sorted().first(where: { !known.contains($0) }) {
            throw .invalid("the model's tracker metadata has an unknown key '\(unknown)'")
        }
        if let key = JSONInteger.keys(Self.integerKeys.map(\.rawValue), notWrittenAsIntegersIn: object).first {
            throw .invalid("the model's tracker metadata '\(key)' must be a JSON integer (like 3, not 3.0)")
        }
        do {
            self = try JSONDecoder().decode(Self.self, from: data)
        } catch {
            throw .invalid("the model's tracker metadata has a value of the wrong type: \(json)")
        }
    }
}

/// Values a person set on the command line; nil (or absent) means "keep the model's default".
public struct TrackerOverrides: Sendable, Equatable {
    /// One on-threshold for every label (`--threshold 0.9`): the simplest way to trade earlier warnings for
    /// fewer false alarms. Per-label `thresholds` still win for the labels they name.
    public var everyThreshold: Float?
    /// On-thresholds by label name (`--threshold siren=0.7`); labels not named keep the model's.
    public var thresholds: [String: Float]
    /// The other knobs the flags set (`--smoothing`, `--merge-gap`, ...); see `TrackerSettings` for what each trades.
    public var tuning: TrackerSettings.Partial

    public init(everyThreshold: Float? = nil, thresholds: [String: Float] = [:],
                tuning: TrackerSettings.Partial = .init()) {
        self.everyThreshold = everyThreshold
        self.thresholds = thresholds
        self.tuning = tuning
    }
}

/// Tracker settings that cannot work, named in one line.
public enum TrackerSettingsError: Error, Equatable, CustomStringConvertible, LocalizedError {
    case unknownLabel(String, known: [String])
    case invalid(String)

    public var description: String {
        switch self {
        case .unknownLabel(let label, let known):
            "unknown label '\(label)'; this model knows: \(known.joined(separator: ", "))"
        case .invalid(let reason):
            "invalid event-tracking setting: \(reason)"
        }
    }

    public var errorDescription: String? { description }
}
