/// Every detection score of an evaluation, accumulated one file at a time so memory stays flat in corpus size:
/// only counts and per-event delays are kept, never audio or posteriors.
public struct DetectionScorer: Sendable {
    public let labels: [String]
    private var eventBased: EventBasedMetrics
    private var onsetOnly: EventBasedMetrics
    private var segmentBased: SegmentBasedMetrics
    private var latency: DelaysByLabel
    private var announcementDelay: DelaysByLabel
    private var falseAlarms: FalseAlarmRate
    private var files = 0
    private var seconds = 0.0

    /// - Parameters:
    ///   - labels: the corpus vocabulary; class-wise scores and macro averages cover exactly these.
    ///   - rules: onset/offset matching; its onset-only form is derived from it.
    ///   - segmentLength: seconds per segment of the segment-based scores.
    public init(labels: [String], rules: EventMatchingRules = .onsetAndOffset, segmentLength: Double = 1.0) {
        self.labels = labels
        eventBased = EventBasedMetrics(labels: labels, rules: rules)
        var onsetRules = rules
        onsetRules.evaluateOnset = true
        onsetRules.evaluateOffset = false
        onsetOnly = EventBasedMetrics(labels: labels, rules: onsetRules)
        segmentBased = SegmentBasedMetrics(labels: labels, segmentLength: segmentLength)
        latency = DelaysByLabel(labels: labels)
        announcementDelay = DelaysByLabel(labels: labels)
        falseAlarms = FalseAlarmRate(collar: rules.collar)
    }

    /// Scores one file: its reference events, what the detector reported, and its length in seconds.
    @discardableResult
    public mutating func add(reference: [SoundEvent], detections: [DetectedEvent], duration: Double) -> FileScore {
        let estimate = detections.map(\.event)
        let events = eventBased.add(reference: reference, estimate: estimate)
        let onsets = onsetOnly.add(reference: reference, estimate: estimate)
        var delays: [Double] = []
        for pair in onsets.pairs {
            let delay = detections[pair.estimate].detectedAt - reference[pair.reference].onset
            latency.add(delay: delay, label: reference[pair.reference].label)
            delays.append(delay)
        }
        let announced = AnnouncementDelay.delays(reference: reference, detections: detections)
        for (label, delay) in announced {
            announcementDelay.add(delay: delay, label: label)
        }
        let segments = segmentBased.add(reference: reference, estimate: estimate, duration: duration)
        let falseAlarmCount = falseAlarms.add(reference: reference, estimate: estimate, duration: duration)
        files += 1
        seconds += duration
        return FileScore(events: events.counts, onsetOnlyEvents: onsets.counts, segments: segments,
                         falseAlarms: falseAlarmCount, latencies: delays,
                         announcementDelays: announced.map(\.delay))
    }

    /// The scores over every file added so far.
    public func results() -> DetectionReport {
        DetectionReport(
            files: files, seconds: seconds,
            eventBased: eventBased.results(), eventBasedOnsetOnly: onsetOnly.results(),
            segmentBased: segmentBased.results(), latency: latency.results(),
            announcementDelay: announcementDelay.results(),
            falseAlarms: .init(alertFreeFiles: falseAlarms.alertFreeFiles, alertFreeTime: falseAlarms.alertFreeTime)
        )
    }
}

/// One file's share of the scores, for `--per-file` listings.
public struct FileScore: Sendable, Encodable {
    /// Event-based (onset and offset) counts.
    public var events: DetectionCounts
    public var onsetOnlyEvents: DetectionCounts
    public var segments: DetectionCounts
    /// Detections over the file's alert-free time.
    public var falseAlarms: Int
    /// Onset latencies of the file's matched events, in seconds.
    public var latencies: [Double]
    /// Announcement delays of the file's events that a same-label detection overlaps, in reference order.
    public var announcementDelays: [Double]
}

/// Detection scores over a set of files.
public struct DetectionReport: Sendable, Encodable {
    public var files: Int
    /// Total audio scored.
    public var seconds: Double
    public var eventBased: ScoreTable
    public var eventBasedOnsetOnly: ScoreTable
    public var segmentBased: ScoreTable
    /// Announcement minus onset over the events onset-only matching pairs.
    public var latency: LatencyReport
    /// The user's wait for every alert a detection of its label reported, however its onset was stamped.
    public var announcementDelay: LatencyReport
    public var falseAlarms: FalseAlarms

    /// False alarms over alert-free files and over alert-free time in all files.
    public struct FalseAlarms: Sendable, Encodable {
        public var alertFreeFiles: FalseAlarmExposure
        public var alertFreeTime: FalseAlarmExposure
    }
}
