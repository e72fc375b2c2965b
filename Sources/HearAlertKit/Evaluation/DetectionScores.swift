/// F-score and error-rate family for one class, the overall micro-average, or the class-wise macro-average.
///
/// Values follow sed_eval: NaN where it is undefined (precision with no estimates, recall with no references),
/// written as JSON `null`.
public struct DetectionScores: Sendable, Equatable, Encodable {
    @NullWhenUndefined public var fMeasure: Double
    @NullWhenUndefined public var precision: Double
    @NullWhenUndefined public var recall: Double
    /// (S + D + I) / N_ref.
    @NullWhenUndefined public var errorRate: Double
    /// Present for overall scores only; class-wise scores have no substitutions in sed_eval.
    public var substitutionRate: Double?
    @NullWhenUndefined public var deletionRate: Double
    @NullWhenUndefined public var insertionRate: Double

    /// The class-wise average sed_eval reports as "macro": `numpy.nanmean` of each score over the classes.
    static func macroAverage(_ classes: [DetectionScores]) -> DetectionScores {
        func mean(_ score: (DetectionScores) -> Double) -> Double { SedEvalFormulas.nanMean(classes.map(score)) }
        return DetectionScores(
            fMeasure: mean(\.fMeasure), precision: mean(\.precision), recall: mean(\.recall),
            errorRate: mean(\.errorRate), substitutionRate: nil,
            deletionRate: mean(\.deletionRate), insertionRate: mean(\.insertionRate)
        )
    }
}
