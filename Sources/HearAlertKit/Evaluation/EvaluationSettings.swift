/// How `CorpusEvaluator` runs and scores; the defaults are the conventions the literature reports with.
public struct EvaluationSettings: Sendable {
    /// Files processed at once, one detector (one loaded model) per job.
    public var jobs: Int
    /// Keep each file's events and counts in the report (`--per-file`).
    public var keepPerFile: Bool
    /// Score the enhancer too, when the corpus has `clean/`.
    public var scoreEnhancement: Bool
    /// Event-matching collars (200 ms onset; offset within max(200 ms, 50 % of the length)).
    public var rules: EventMatchingRules
    /// Segment length of the segment-based scores, in seconds.
    public var segmentLength: Double
    /// Width of the SNR buckets, in dB.
    public var snrBucketWidth: Double
    /// How far a file's decoded length may differ from its `files.tsv` duration, in seconds (the rounding of
    /// durations written with three decimals, as tools/corpus_format.py allows).
    public var durationTolerance: Double
    /// The enhancer scored (its noise estimate above all: `--noise-estimator`).
    public var enhancer: EnhancerConfiguration

    public init(jobs: Int = 1, keepPerFile: Bool = false, scoreEnhancement: Bool = true,
                rules: EventMatchingRules = .onsetAndOffset, segmentLength: Double = 1.0,
                snrBucketWidth: Double = 5, durationTolerance: Double = Corpus.durationTolerance,
                enhancer: EnhancerConfiguration = EnhancerConfiguration()) {
        self.jobs = jobs
        self.keepPerFile = keepPerFile
        self.scoreEnhancement = scoreEnhancement
        self.rules = rules
        self.segmentLength = segmentLength
        self.snrBucketWidth = snrBucketWidth
        self.durationTolerance = durationTolerance
        self.enhancer = enhancer
    }
}
