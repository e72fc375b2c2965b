/// F-score and error-rate family for one class, the overall micro-average, or the class-wise macro-average.
///
/// Values follow sed_eval: NaN where it is undefined (precision with no estimates, recall with no references),
/// written as JSON `null`.
public struct DetectionScores: Sendable, Equatable, Encodable {
    public var fMeasure: Double
    public var precision: Double
    public var recall: Double
    /// (S + D + I) / N_ref.
    public var errorRate: Double
    /// Present for overall scores only; class-wise scores have no substitutions in sed_eval.
    public var substitutionRate: Double?
    public var deletionRate: Double
    public var insertionRate: Double

    /// The class-wise average sed_eval reports as "macro": `numpy.nanmean` of each score over the classes.
    static func macroAverage(_ classes: [DetectionScores]) -> DetectionScores {
        func mean(_ score: (DetectionScores) -> Double) -> Double { SedEvalFormulas.nanMean(classes.map(score)) }
        return DetectionScores(
            fMeasure: mean(\.fMeasure), precision: mean(\.precision), recall: mean(\.recall),
            errorRate: mean(\.errorRate), substitutionRate: nil,
            deletionRate: mean(\.deletionRate), insertionRate: mean(\.insertionRate)
        )
    }

    private enum CodingKeys: String, CodingKey {
        case fMeasure = "f_measure", precision, recall, errorRate = "error_rate"
        case substitutionRate = "substitution_rate", deletionRate = "deletion_rate"
        case insertionRate = "insertion_rate"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeScore(fMeasure, forKey: .fMeasure)
        try container.encodeScore(precision, forKey: .precision)
        try container.encodeScore(recall, forKey: .recall)
        try container.encodeScore(errorRate, forKey: .errorRate)
        if let substitutionRate { try container.encodeScore(substitutionRate, forKey: .substitutionRate) }
        try container.encodeScore(deletionRate, forKey: .deletionRate)
        try container.encodeScore(insertionRate, forKey: .insertionRate)
    }
}

extension KeyedEncodingContainer {
    /// JSON has no NaN or infinity: an undefined score is written as `null`.
    mutating func encodeScore(_ value: Double, forKey key: Key) throws {
        if value.isFinite { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
}
