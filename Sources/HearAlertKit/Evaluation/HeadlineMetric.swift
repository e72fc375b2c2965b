/// The figures a reader looks at first, defined once for the report table and for `--compare`.
struct HeadlineMetric: Sendable {
    enum Kind: Sendable {
        case fraction, rate, seconds, perHour, decibels
    }

    let name: String
    let kind: Kind
    /// Whether a larger value is the better one (F1) or the worse one (error rate, latency, false alarms).
    let higherIsBetter: Bool
    let value: @Sendable (EvaluationReport) -> Double?

    func formatted(_ report: EvaluationReport) -> String {
        let number = value(report)
        switch kind {
        case .fraction: return ReportFormat.percent(number)
        case .rate: return ReportFormat.rate(number)
        case .seconds: return ReportFormat.seconds(number)
        case .perHour: return ReportFormat.perHour(number)
        case .decibels: return ReportFormat.decibels(number)
        }
    }

    /// B − A in the metric's unit (percentage points for fractions).
    func difference(from a: EvaluationReport, to b: EvaluationReport) -> String {
        guard let first = value(a), let second = value(b), first.isFinite, second.isFinite else { return "—" }
        let change = second - first
        switch kind {
        case .fraction: return ReportFormat.difference(change, scale: 100, decimals: 1, unit: " pt")
        case .rate: return ReportFormat.difference(change)
        case .seconds: return ReportFormat.difference(change, unit: " s")
        case .perHour: return ReportFormat.difference(change, unit: "/h")
        case .decibels: return ReportFormat.difference(change, decimals: 1, unit: " dB")
        }
    }

    /// Which of A and B is better on this metric, or nil when equal or undefined.
    func better(_ a: EvaluationReport, _ b: EvaluationReport) -> String? {
        guard let first = value(a), let second = value(b), first.isFinite, second.isFinite, first != second else {
            return nil
        }
        return (second > first) == higherIsBetter ? "B" : "A"
    }

    static let all: [HeadlineMetric] = [
        HeadlineMetric(name: "event F1 (micro)", kind: .fraction, higherIsBetter: true) {
            $0.detection.eventBased.overall.fMeasure
        },
        HeadlineMetric(name: "event F1 (macro)", kind: .fraction, higherIsBetter: true) {
            $0.detection.eventBased.macro.fMeasure
        },
        HeadlineMetric(name: "event error rate", kind: .rate, higherIsBetter: false) {
            $0.detection.eventBased.overall.errorRate
        },
        HeadlineMetric(name: "onset-only F1 (micro)", kind: .fraction, higherIsBetter: true) {
            $0.detection.eventBasedOnsetOnly.overall.fMeasure
        },
        HeadlineMetric(name: "segment F1 (1 s)", kind: .fraction, higherIsBetter: true) {
            $0.detection.segmentBased.overall.fMeasure
        },
        HeadlineMetric(name: "segment error rate", kind: .rate, higherIsBetter: false) {
            $0.detection.segmentBased.overall.errorRate
        },
        HeadlineMetric(name: "onset latency, median", kind: .seconds, higherIsBetter: false) {
            $0.detection.latency.overall.median
        },
        HeadlineMetric(name: "onset latency, 90th pct", kind: .seconds, higherIsBetter: false) {
            $0.detection.latency.overall.p90
        },
        HeadlineMetric(name: "announcement delay, median", kind: .seconds, higherIsBetter: false) {
            $0.detection.announcementDelay.overall.median
        },
        HeadlineMetric(name: "announcement delay, 90th pct", kind: .seconds, higherIsBetter: false) {
            $0.detection.announcementDelay.overall.p90
        },
        HeadlineMetric(name: "false alarms, alert-free files", kind: .perHour, higherIsBetter: false) {
            $0.detection.falseAlarms.alertFreeFiles.perHour
        },
        HeadlineMetric(name: "false alarms, alert-free time", kind: .perHour, higherIsBetter: false) {
            $0.detection.falseAlarms.alertFreeTime.perHour
        },
        HeadlineMetric(name: "SNR improvement", kind: .decibels, higherIsBetter: true) {
            $0.enhancement?.snrImprovementDB
        },
        HeadlineMetric(name: "segmental SNR improvement", kind: .decibels, higherIsBetter: true) {
            $0.enhancement?.segmentalSNRImprovementDB
        },
        HeadlineMetric(name: "alert energy retained", kind: .decibels, higherIsBetter: true) {
            $0.enhancement?.alertRetainedDB
        },
    ]
}
