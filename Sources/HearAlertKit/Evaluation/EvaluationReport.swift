/// Everything `hearalert evaluate` measured on one corpus with one model; encodes as the `--json` report.
public struct EvaluationReport: Sendable, Encodable {
    public var corpus: CorpusSummary
    /// The weight file (or other detector) evaluated.
    public var model: String
    public var conventions: Conventions
    public var detection: DetectionReport
    /// Detection split by the alert-to-background SNR recorded per file (empty when none is recorded).
    public var byAlertSNR: [SNRBucketReport]
    /// Detection split by the speech-to-noise SNR recorded per file (empty when none is recorded).
    public var bySpeechSNR: [SNRBucketReport]
    /// Present when the corpus has `clean/` and enhancement was scored.
    @NullWhenUndefined public var enhancement: EnhancementReport?
    /// Present with `--per-file`, in `files.tsv` order.
    @NullWhenUndefined public var files: [FileReport]?
    public var timing: Timing

    /// What was evaluated.
    public struct CorpusSummary: Sendable, Encodable {
        public var directory: String
        public var labels: [String]
        public var files: Int
        public var hours: Double
        public var alertFreeFiles: Int
        public var referenceEvents: Int

        public init(_ corpus: Corpus) {
            directory = corpus.directory
            labels = corpus.labels
            files = corpus.files.count
            hours = corpus.duration / 3600
            alertFreeFiles = corpus.files.filter(\.events.isEmpty).count
            referenceEvents = corpus.files.reduce(0) { $0 + $1.events.count }
        }
    }

    /// The scoring conventions used, so numbers are never quoted without them.
    public struct Conventions: Sendable, Encodable {
        public var collarSeconds: Double
        public var offsetFractionOfLength: Double
        public var segmentSeconds: Double
        public var snrBucketDB: Double
        public var eventMatching = "optimal (sed_eval 0.2.1)"
    }

    /// How long the run took.
    public struct Timing: Sendable, Encodable {
        public var jobs: Int
        public var wallSeconds: Double
        public var audioSeconds: Double
        /// Audio seconds processed per wall-clock second.
        public var speedFactor: Double
    }
}

/// One file's share of an evaluation (`--per-file`).
public struct FileReport: Sendable, Encodable {
    public var filename: String
    public var duration: Double
    @NullWhenUndefined public var alertSNRDB: Double?
    @NullWhenUndefined public var speechSNRDB: Double?
    public var reference: [SoundEvent]
    public var detections: [DetectedEvent]
    public var score: FileScore
    @NullWhenUndefined public var enhancement: FileEnhancementScore?

    private enum CodingKeys: String, CodingKey {
        case filename, duration, alertSNRDB = "alertSnrDb", speechSNRDB = "speechSnrDb", reference, detections
        case score, enhancement
    }
}
