/// One metric's full result: overall (micro-average), class-wise, and class-wise average (macro), with the counts
/// behind them, in sed_eval's layout.
public struct ScoreTable: Sendable, Encodable {
    /// The vocabulary, in the corpus's order; class-wise entries follow it.
    public let labels: [String]
    public let overallCounts: DetectionCounts
    public let classCounts: [String: DetectionCounts]

    init(labels: [String], overall: DetectionCounts, classWise: [String: DetectionCounts]) {
        self.labels = labels
        self.overallCounts = overall
        self.classCounts = classWise
    }

    /// Micro-average: scores of the pooled counts, with substitutions.
    public var overall: DetectionScores { overallCounts.scores(includingSubstitutions: true) }

    /// Per class, without substitutions (sed_eval's class-wise definitions).
    public func classScores(_ label: String) -> DetectionScores {
        (classCounts[label] ?? DetectionCounts()).scores(includingSubstitutions: false)
    }

    /// Macro-average over the vocabulary: sed_eval's "class-wise average".
    public var macro: DetectionScores { DetectionScores.macroAverage(labels.map(classScores)) }

    private enum CodingKeys: String, CodingKey {
        case overall, macro, classWise = "class_wise"
    }

    private struct ClassEntry: Encodable {
        let label: String
        let counts: DetectionCounts
        let scores: DetectionScores
    }

    private struct OverallEntry: Encodable {
        let counts: DetectionCounts
        let scores: DetectionScores
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(OverallEntry(counts: overallCounts, scores: overall), forKey: .overall)
        try container.encode(macro, forKey: .macro)
        try container.encode(labels.map {
            ClassEntry(label: $0, counts: classCounts[$0] ?? DetectionCounts(), scores: classScores($0))
        }, forKey: .classWise)
    }
}
