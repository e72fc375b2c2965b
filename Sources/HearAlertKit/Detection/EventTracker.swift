/// Turns a stream of per-decision scores into alert events a person can trust: one event per alarm, not thirty.
///
/// Per label, in order:
/// 1. **Smoothing**: a moving average over the last `smoothingFrames` decisions (and of their times, so the
///    smoothed value is stamped with the time it describes).
/// 2. **Hysteresis**: an alert turns on at the label's threshold and off only below `threshold * offRatio`, so a
///    score hovering at the threshold does not flicker.
/// 3. **Minimum duration**: a rise is announced only once it has lasted `minDuration`; shorter blips are dropped.
///    This is the one deliberate delay before `alert_start`.
/// 4. **Gap merging**: after the score falls, `alert_end` waits `mergeGap` seconds; if the sound returns in that
///    time the event simply continues. `alert_start` is never delayed by merging.
/// 5. **Cooldown**: after an event ends, its label may not start a new event until `cooldown` seconds after the
///    offset; a sound still present when the cooldown expires starts an event then, so nothing is lost for good.
/// 6. **Rise onsets** (with `onsetRiseRatio`): the onset is stamped where the score's unbroken run at or above
///    `threshold · onsetRiseRatio` began, at most `onsetRiseLookback` before the crossing and never inside the cooldown,
///    instead of at the crossing. A network's score climbs over a few decisions after an alert begins and crosses
///    the threshold at a variable point, so crossing stamps are often late (the research tuning measured +0.03 to
///    +0.05 macro event F1 on validation with it). No announcement is delayed: the minimum duration still counts
///    from the crossing.
///
/// Time stamps: each decision describes the centre of the model's window, or `window end − onsetLag` when the
/// settings give an onset lag (a model trained to fire early, see `TrackerSettings.onsetLag`). That one time is
/// used for everything — onsets, offsets, minimum duration, merge gap, cooldown — rather than shifting onsets
/// alone: event lengths and the gaps compared with `mergeGap` stay measured between like points, and a model
/// that fires early after an onset also stops firing early after an offset (the same few frames of sound
/// decide both edges), so the same correction fits both. Times are clamped at the stream's start (0, or the time
/// of the last `restart`): a start-padded model's first windows (`AlertModel.startPadding`) reach before the
/// stream, and a lag may exceed the audio so far, but no onset or offset is reported before the stream began.
///
/// Allocation-free after `init`: it runs on the real-time processing thread.
public struct EventTracker {
    private enum Phase {
        case idle
        /// Above threshold since `crossing` but not yet for `minDuration`: not announced. `onset` is the stamp the
        /// event will carry, which a rise onset places before the crossing.
        case pending(onset: Double, crossing: Double, peak: Float)
        case active(onset: Double, detectedAt: Double, peak: Float)
        /// Fell below the off-threshold at `offset`; ends for good once `mergeGap` passes without a return.
        case ending(onset: Double, detectedAt: Double, peak: Float, offset: Double)
    }

    /// The rules in force, fixed for the tracker's life.
    public let settings: TrackerSettings
    private var phases: [Phase]
    private var cooldownUntil: [Double]
    /// Per label, the time of the first decision of the current run at or above `threshold · onsetRiseRatio`;
    /// nil below it, and always nil without a rise ratio.
    private var riseStart: [Double?]
    /// The last `smoothingFrames` decisions, `[slot][label]`, used as a ring.
    private var history: [Float]
    private var historyTimes: [Double]
    private var nextSlot = 0
    private var filledSlots = 0
    /// No decision is stamped before this stream time: 0, or the last `restart`.
    private var streamStart = 0.0

    /// A tracker with every label idle and no history; settings are already validated.
    public init(settings: TrackerSettings) {
        self.settings = settings
        phases = Array(repeating: .idle, count: settings.labels.count)
        cooldownUntil = Array(repeating: -.infinity, count: settings.labels.count)
        riseStart = Array(repeating: nil, count: settings.labels.count)
        history = Array(repeating: 0, count: settings.labels.count * settings.smoothingFrames)
        historyTimes = Array(repeating: 0, count: settings.smoothingFrames)
    }

    /// How many alerts have been announced and not yet ended (the enhancer follows `isAnyAlertPossible`, which
    /// also covers alerts still rising).
    public var announcedAlertCount: Int {
        phases.reduce(0) { count, phase in
            switch phase {
            case .active, .ending: count + 1
            case .idle, .pending: count
            }
        }
    }

    /// True while any label is above its threshold or announced: rising (not yet lasted `minDuration`), sounding,
    /// or within its merge gap. The enhancer keeps alert bands audible meanwhile, so it need not wait for the
    /// confirmation delay and does not swallow the start of an alarm.
    public var isAnyAlertPossible: Bool {
        phases.contains { phase in
            if case .idle = phase { false } else { true }
        }
    }

    /// Feeds one decision.
    ///
    /// - Parameters:
    ///   - scores: one score per label, in the model's label order.
    ///   - decisionTime: the stream time the scores describe (the centre of the model's input window); replaced
    ///     by `streamTime − onsetLag` when the settings have an onset lag; either is taken as 0 when negative.
    ///   - streamTime: how much audio had arrived when the decision was possible (the end of the model's input
    ///     window); becomes `detectedAt`.
    ///   - emit: receives any messages, in order.
    public mutating func update(
        scores: UnsafeBufferPointer<Float>, decisionTime: Double, streamTime: Double,
        emit: (AlertMessage) -> Void
    ) {
        let labelCount = settings.labels.count
        precondition(scores.count == labelCount, "expected \(labelCount) scores, got \(scores.count)")
        let slot = nextSlot
        for label in 0..<labelCount { history[slot * labelCount + label] = scores[label] }
        historyTimes[slot] = max(streamStart, settings.onsetLag.map { streamTime - $0 } ?? decisionTime)
        nextSlot = (slot + 1) % settings.smoothingFrames
        filledSlots = min(filledSlots + 1, settings.smoothingFrames)

        var timeSum = 0.0
        for used in 0..<filledSlots { timeSum += historyTimes[used] }
        let time = timeSum / Double(filledSlots)
        for label in 0..<labelCount {
            var sum: Float = 0
            for used in 0..<filledSlots { sum += history[used * labelCount + label] }
            step(label: label, score: sum / Float(filledSlots), time: time, streamTime: streamTime, emit: emit)
        }
    }

    /// Forgets every event, rise, cooldown and smoothed decision, as a new tracker would, for a stream that starts
    /// again at `time` (see `AlertDetector.restartStream`; `finish` first, or open events vanish unannounced).
    /// Nothing is stamped before `time` afterwards. Allocation-free: it overwrites the arrays in place.
    public mutating func restart(at time: Double) {
        for label in phases.indices {
            phases[label] = .idle
            cooldownUntil[label] = -.infinity
            riseStart[label] = nil
        }
        nextSlot = 0
        filledSlots = 0
        streamStart = time
    }

    /// Closes every event still open (end of file, or the listener was stopped): announced events end at
    /// `streamTime` if still sounding, or at their recorded offset if already fading; unconfirmed rises are dropped.
    public mutating func finish(streamTime: Double, emit: (AlertMessage) -> Void) {
        for label in phases.indices {
            switch phases[label] {
            case .idle, .pending:
                break
            case .active(let onset, let detectedAt, let peak):
                end(label, onset: onset, offset: max(onset, streamTime), detectedAt: detectedAt, peak: peak, emit)
            case .ending(let onset, let detectedAt, let peak, let offset):
                end(label, onset: onset, offset: offset, detectedAt: detectedAt, peak: peak, emit)
            }
            phases[label] = .idle
        }
    }

    private mutating func step(
        label: Int, score: Float, time: Double, streamTime: Double, emit: (AlertMessage) -> Void
    ) {
        let on = settings.thresholds[label]
        let off = on * settings.offRatio
        if let ratio = settings.onsetRiseRatio {
            riseStart[label] = score >= on * ratio ? riseStart[label] ?? time : nil
        }
        switch phases[label] {
        case .idle:
            guard score >= on, time >= cooldownUntil[label] else { return }
            let onset = riseStart[label].map { max($0, time - settings.onsetRiseLookback, cooldownUntil[label]) } ?? time
            confirmIfLongEnough(label, onset: onset, crossing: time, peak: score, score: score, time: time,
                                streamTime, emit)
        case .pending(let onset, let crossing, let peak):
            if score < off {
                phases[label] = .idle
            } else {
                confirmIfLongEnough(label, onset: onset, crossing: crossing, peak: max(peak, score), score: score,
                                    time: time, streamTime, emit)
            }
        case .active(let onset, let detectedAt, let peak):
            if score < off {
                phases[label] = .ending(onset: onset, detectedAt: detectedAt, peak: peak, offset: time)
            } else {
                phases[label] = .active(onset: onset, detectedAt: detectedAt, peak: max(peak, score))
            }
        case .ending(let onset, let detectedAt, let peak, let offset):
            if score >= on {
                phases[label] = .active(onset: onset, detectedAt: detectedAt, peak: max(peak, score))
            } else if time - offset >= settings.mergeGap {
                end(label, onset: onset, offset: offset, detectedAt: detectedAt, peak: peak, emit)
                phases[label] = .idle
                cooldownUntil[label] = offset + settings.cooldown
            }
        }
    }

    private mutating func confirmIfLongEnough(
        _ label: Int, onset: Double, crossing: Double, peak: Float, score: Float, time: Double,
        _ streamTime: Double, _ emit: (AlertMessage) -> Void
    ) {
        guard time - crossing >= settings.minDuration else {
            phases[label] = .pending(onset: onset, crossing: crossing, peak: peak)
            return
        }
        phases[label] = .active(onset: onset, detectedAt: streamTime, peak: peak)
        emit(.started(label: settings.labels[label], score: score, onset: onset, detectedAt: streamTime))
    }

    private func end(
        _ label: Int, onset: Double, offset: Double, detectedAt: Double, peak: Float, _ emit: (AlertMessage) -> Void
    ) {
        emit(.ended(AlertEvent(label: settings.labels[label], onset: onset, offset: offset,
                               detectedAt: detectedAt, peakScore: peak)))
    }
}
