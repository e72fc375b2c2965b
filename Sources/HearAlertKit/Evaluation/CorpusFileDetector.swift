/// What the evaluator needs from a detector: every event it reports in one audio file.
///
/// The evaluator creates one per worker thread and uses it from that thread only, so implementations may hold
/// non-`Sendable` state such as a loaded model.
public protocol CorpusFileDetector {
    /// Runs detection over the whole file, as `hearalert detect` would, and returns the events it reported.
    func detect(path: String) throws -> [DetectedEvent]
}
