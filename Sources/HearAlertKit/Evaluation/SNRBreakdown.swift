import Foundation

/// Scores split by the SNR the corpus generator recorded for each file, in fixed-width dB buckets, so a result
/// can say where a detector starts to fail ("fine above 0 dB, half the alerts missed below −5 dB").
///
/// Files without a recorded SNR of this kind (an alert-free file has no alert SNR) belong to no bucket; the
/// overall scores still include them.
public struct SNRBreakdown: Sendable {
    /// Which recorded SNR splits the files.
    public enum Measure: String, Sendable, Encodable {
        /// Alert over background: governs detection.
        case alert
        /// Speech over noise: governs false alarms on speech and enhancement.
        case speech

        func value(of snr: RecordedSNR) -> Double? {
            switch self {
            case .alert: snr.alertDB
            case .speech: snr.speechDB
            }
        }
    }

    public let measure: Measure
    /// Bucket width in dB; buckets start at multiples of it (…, [−5, 0), [0, 5), …).
    public let width: Double
    private let makeScorer: @Sendable () -> DetectionScorer
    private var buckets: [Int: DetectionScorer] = [:]

    public init(measure: Measure, width: Double = 5, makeScorer: @escaping @Sendable () -> DetectionScorer) {
        precondition(width > 0, "bucket width must be positive")
        self.measure = measure
        self.width = width
        self.makeScorer = makeScorer
    }

    /// Adds a file to its bucket, if it has this SNR recorded.
    public mutating func add(file: CorpusFile, detections: [DetectedEvent]) {
        guard let snr = measure.value(of: file.snr) else { return }
        let bucket = Int((snr / width).rounded(.down))
        buckets[bucket, default: makeScorer()].add(reference: file.events, detections: detections,
                                                   duration: file.duration)
    }

    /// Buckets that received files, from the lowest SNR up.
    public func results() -> [SNRBucketReport] {
        buckets.keys.sorted().map { bucket in
            SNRBucketReport(lowerDB: Double(bucket) * width, upperDB: Double(bucket + 1) * width,
                            detection: buckets[bucket]!.results())
        }
    }
}

/// Detection scores of the files whose SNR lies in `[lowerDB, upperDB)`.
public struct SNRBucketReport: Sendable, Encodable {
    public var lowerDB: Double
    public var upperDB: Double
    public var detection: DetectionReport

    /// "−5…0 dB", as tables show it.
    public var name: String { "\(Self.format(lowerDB))…\(Self.format(upperDB)) dB" }

    static func format(_ value: Double) -> String {
        value == value.rounded() ? String(Int(value)) : String(format: "%.1f", value)
    }
}
