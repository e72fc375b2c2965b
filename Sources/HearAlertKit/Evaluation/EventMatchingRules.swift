/// When an estimated event counts as finding a reference event: sed_eval's `EventBasedMetrics` conditions.
///
/// The defaults are the DCASE convention the literature reports with: the onset within 200 ms, and the offset
/// within 200 ms or half the reference event's length, whichever is larger.
public struct EventMatchingRules: Sendable, Equatable, Codable {
    /// Onset (and minimum offset) tolerance, in seconds: sed_eval's `t_collar`.
    public var collar: Double
    /// Offset tolerance as a fraction of the reference event's length: sed_eval's `percentage_of_length`.
    public var offsetFractionOfLength: Double
    /// Whether the onset condition applies.
    public var evaluateOnset: Bool
    /// Whether the offset condition applies; without it the metric is "onset-only".
    public var evaluateOffset: Bool

    public init(collar: Double = 0.2, offsetFractionOfLength: Double = 0.5,
                evaluateOnset: Bool = true, evaluateOffset: Bool = true) {
        precondition(evaluateOnset || evaluateOffset, "at least one of onset and offset must be evaluated")
        self.collar = collar
        self.offsetFractionOfLength = offsetFractionOfLength
        self.evaluateOnset = evaluateOnset
        self.evaluateOffset = evaluateOffset
    }

    /// Onset and offset, as DCASE reports event-based scores.
    public static let onsetAndOffset = EventMatchingRules()
    /// Onset only: for an alert, being told in time matters more than being told when it stopped.
    public static let onsetOnly = EventMatchingRules(evaluateOffset: false)

    /// sed_eval's `validate_onset` and `validate_offset`, combined as its hit matrices are; labels not compared.
    func timesAgree(reference: SoundEvent, estimate: SoundEvent) -> Bool {
        if evaluateOnset && !(abs(reference.onset - estimate.onset) <= collar) { return false }
        if evaluateOffset {
            let annotatedLength = reference.offset - reference.onset
            let tolerance = max(collar, offsetFractionOfLength * annotatedLength)
            if !(abs(reference.offset - estimate.offset) <= tolerance) { return false }
        }
        return true
    }
}
