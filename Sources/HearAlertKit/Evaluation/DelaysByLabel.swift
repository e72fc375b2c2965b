/// Delays from an alert's start to the user being told, collected per class: either onset latency (announcement
/// time minus reference onset over the events onset-only matching pairs: same label, onset within the collar) or
/// the announcement delay (`AnnouncementDelay`: every event a same-label detection overlaps, however stamped).
public struct DelaysByLabel: Sendable {
    public let labels: [String]
    private var overall: [Double] = []
    private var classWise: [String: [Double]] = [:]

    public init(labels: [String]) {
        self.labels = labels
    }

    /// Records one event's delay, in seconds.
    public mutating func add(delay: Double, label: String) {
        overall.append(delay)
        classWise[label, default: []].append(delay)
    }

    /// Median and 90th percentile over all recorded events and per class.
    public func results() -> LatencyReport {
        LatencyReport(
            overall: LatencySummary(overall),
            classWise: labels.map { LatencyReport.ClassEntry(label: $0, latency: LatencySummary(classWise[$0] ?? [])) }
        )
    }
}

/// Delay figures in seconds (onset latency or announcement delay); absent (JSON `null`) when no event was
/// measured.
public struct LatencySummary: Sendable, Equatable, Encodable {
    /// Events measured.
    public var count: Int
    @NullWhenUndefined public var median: Double?
    @NullWhenUndefined public var p90: Double?

    init(_ delays: [Double]) {
        let sorted = delays.sorted()
        count = sorted.count
        median = Self.percentile(sorted, 50)
        p90 = Self.percentile(sorted, 90)
    }

    /// `numpy.percentile`'s default ("linear"): interpolates between the two nearest ranks of the sorted values.
    static func percentile(_ sorted: [Double], _ percent: Double) -> Double? {
        guard let first = sorted.first else { return nil }
        guard sorted.count > 1 else { return first }
        let rank = percent / 100 * Double(sorted.count - 1)
        let lower = Int(rank.rounded(.down))
        let upper = min(lower + 1, sorted.count - 1)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * (rank - Double(lower))
    }

}

/// Delays (onset latency or announcement delay) over all measured events and per class.
public struct LatencyReport: Sendable, Encodable {
    public struct ClassEntry: Sendable, Encodable {
        public var label: String
        public var latency: LatencySummary
    }

    public var overall: LatencySummary
    public var classWise: [ClassEntry]
}
