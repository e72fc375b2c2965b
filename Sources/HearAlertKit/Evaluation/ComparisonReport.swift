/// Two evaluations of the same corpus side by side (`--compare A B`), with B − A for every headline figure.
public struct ComparisonReport: Sendable, Encodable {
    public var a: EvaluationReport
    public var b: EvaluationReport
    /// Headline figure → B − A (percentage points are written as fractions here, as in the reports).
    public var differences: [Difference]

    public struct Difference: Sendable, Encodable {
        public var metric: String
        @NullWhenUndefined public var a: Double?
        @NullWhenUndefined public var b: Double?
        /// Null where either side is undefined.
        @NullWhenUndefined public var bMinusA: Double?
        /// "A" or "B"; null when equal or undefined.
        @NullWhenUndefined public var better: String?
    }

    public init(a: EvaluationReport, b: EvaluationReport) {
        self.a = a
        self.b = b
        differences = HeadlineMetric.all.map { metric in
            let first = metric.value(a).flatMap { $0.isFinite ? $0 : nil }
            let second = metric.value(b).flatMap { $0.isFinite ? $0 : nil }
            return Difference(metric: metric.name, a: first, b: second,
                              bMinusA: first.flatMap { x in second.map { $0 - x } }, better: metric.better(a, b))
        }
    }

    /// Both models' headline figures in columns, with the difference and which is better.
    public func table() -> String {
        var table = TextTable(header: ["", "A", "B", "B − A", "better"])
        for metric in HeadlineMetric.all where metric.value(a) != nil || metric.value(b) != nil {
            table.add([metric.name, metric.formatted(a), metric.formatted(b), metric.difference(from: a, to: b),
                       metric.better(a, b) ?? ""])
        }
        var classes = TextTable(header: ["Class event F1", "A", "B", "B − A"])
        for label in a.corpus.labels {
            let first = a.detection.eventBased.classScores(label).fMeasure
            let second = b.detection.eventBased.classScores(label).fMeasure
            classes.add([label, ReportFormat.percent(first), ReportFormat.percent(second),
                         ReportFormat.difference(second - first, scale: 100, decimals: 1, unit: " pt")])
        }
        return """
            Comparison on \(a.corpus.directory) (\(a.corpus.files) files)
              A: \(a.model)
              B: \(b.model)

            \(table.rendered())

            \(classes.rendered())

            """
    }
}
