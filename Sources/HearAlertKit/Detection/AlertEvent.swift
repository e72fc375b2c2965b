/// One alert heard from start to end: what the person was told about, and what evaluation scores.
///
/// Times are stream times in seconds from the start of the audio (a file, or the moment listening began).
/// `onset` and `offset` estimate when the sound itself began and stopped; `detectedAt` is when enough audio had
/// arrived for the detector to announce it, so `detectedAt - onset` of a true alert is the onset latency.
public struct AlertEvent: Sendable, Equatable, Codable {
    /// The model's label, e.g. `smoke_alarm` (CORPUS.md vocabulary).
    public var label: String
    /// Estimated start of the sound, stream seconds.
    public var onset: Double
    /// Estimated end of the sound (the last pause longer than the merge gap began here), stream seconds.
    public var offset: Double
    /// Stream time at which `alert_start` was emitted (the audio needed had all arrived).
    public var detectedAt: Double
    /// Highest smoothed score seen during the event.
    public var peakScore: Float

    /// For trackers and tests; values are taken as given.
    public init(label: String, onset: Double, offset: Double, detectedAt: Double, peakScore: Float) {
        self.label = label
        self.onset = onset
        self.offset = offset
        self.detectedAt = detectedAt
        self.peakScore = peakScore
    }

    /// Length of the sound in seconds.
    public var duration: Double { offset - onset }
}

/// What the event tracker tells the outside world, in order: an alert began, or an alert (now complete) ended.
///
/// `alert_start` goes out as soon as an alert is confirmed, so a person is told at once; `alert_end` waits until
/// the merge gap has passed without the sound returning, so a beeping alarm is one event rather than many.
public enum AlertMessage: Sendable, Equatable {
    case started(label: String, score: Float, onset: Double, detectedAt: Double)
    case ended(AlertEvent)

    /// The label the message is about.
    public var label: String {
        switch self {
        case .started(let label, _, _, _): label
        case .ended(let event): event.label
        }
    }

    /// The score a person sees: the smoothed score at confirmation for a start, the peak for an end.
    public var score: Float {
        switch self {
        case .started(_, let score, _, _): score
        case .ended(let event): event.peakScore
        }
    }

    /// Where in the stream the message points: the sound's onset for a start, its offset for an end.
    public var streamTime: Double {
        switch self {
        case .started(_, _, let onset, _): onset
        case .ended(let event): event.offset
        }
    }

    /// The wire name of the message type (`alert_start`, `alert_end`).
    public var typeName: String {
        switch self {
        case .started: "alert_start"
        case .ended: "alert_end"
        }
    }

    /// True for `alert_start`: hooks and notifiers mostly act on starts.
    public var isStart: Bool {
        if case .started = self { true } else { false }
    }
}
