/// What the evaluator needs from a detector: every event it reports in one audio file.
///
/// The evaluator creates one per worker thread and uses it from that thread only, so implementations may hold
/// non-`Sendable` state such as a loaded model.
public protocol CorpusFileDetector {
    /// Runs detection over the whole file, as `hearalert detect` would.
    func detect(path: String) throws -> FileDetection
}

/// One file's detection result.
public struct FileDetection: Sendable {
    /// The events reported, in onset order.
    public var events: [DetectedEvent]
    /// When a live listener would have told the enhancer that an alert may be sounding (from the first decision
    /// above a threshold to the end of the alert), in seconds of file time; the enhancer keeps alert bands then.
    public var alertActivity: [Range<Double>]

    /// Without a recorded activity, an alert counts as active from its announcement to its offset.
    public init(events: [DetectedEvent], alertActivity: [Range<Double>]? = nil) {
        self.events = events
        self.alertActivity = alertActivity
            ?? events.filter { $0.detectedAt < $0.offset }.map { $0.detectedAt..<$0.offset }
    }
}
