/// Event counts for one class, or all classes, accumulated over files: the inputs of every score.
public struct DetectionCounts: Sendable, Equatable, Codable {
    /// Reference events (or active reference segments).
    public var reference = 0
    /// Estimated events (or active estimated segments).
    public var system = 0
    /// Estimates that found a reference of the same label.
    public var truePositives = 0
    /// Estimates that found a reference in time but with another label (overall scores only).
    public var substitutions = 0
    /// Reference events no estimate accounted for.
    public var deletions = 0
    /// Estimates that account for no reference event.
    public var insertions = 0

    public init() {}

    static func += (total: inout DetectionCounts, more: DetectionCounts) {
        total.reference += more.reference
        total.system += more.system
        total.truePositives += more.truePositives
        total.substitutions += more.substitutions
        total.deletions += more.deletions
        total.insertions += more.insertions
    }

    /// Precision, recall, F1 and error rate as sed_eval computes them from these counts.
    ///
    /// sed_eval's overall error rate adds substitutions; its class-wise one has none (a wrong label is a deletion
    /// in one class and an insertion in another), so the caller says which it wants.
    func scores(includingSubstitutions: Bool) -> DetectionScores {
        let nRef = Double(reference)
        let precision = SedEvalFormulas.precision(truePositives: Double(truePositives), systemCount: Double(system))
        let recall = SedEvalFormulas.recall(truePositives: Double(truePositives), referenceCount: nRef)
        let substitutionRate = includingSubstitutions
            ? SedEvalFormulas.rate(Double(substitutions), referenceCount: nRef) : nil
        let deletionRate = SedEvalFormulas.rate(Double(deletions), referenceCount: nRef)
        let insertionRate = SedEvalFormulas.rate(Double(insertions), referenceCount: nRef)
        return DetectionScores(
            fMeasure: SedEvalFormulas.fMeasure(precision: precision, recall: recall),
            precision: precision,
            recall: recall,
            errorRate: (substitutionRate ?? 0) + deletionRate + insertionRate,
            substitutionRate: substitutionRate,
            deletionRate: deletionRate,
            insertionRate: insertionRate
        )
    }
}
