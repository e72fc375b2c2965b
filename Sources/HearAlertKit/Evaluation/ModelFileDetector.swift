/// The evaluator's detector: a weight file loaded once per worker and run over each file exactly as
/// `hearalert detect` runs it (the model's own features, and its thresholds and tracker settings unless
/// overridden).
public final class ModelFileDetector: CorpusFileDetector {
    private let detector: FileDetector

    /// The labels the model can report.
    public var labels: [String] { detector.model.labels }

    /// Loads `modelPath`; `settings` defaults to the model's own tracker settings (pass the result of
    /// `TrackerSettings(model:overrides:)` for the same file to evaluate other thresholds).
    public init(modelPath: String, settings: TrackerSettings? = nil) throws {
        let model = try AlertModel(path: modelPath)
        detector = FileDetector(model: model, settings: try settings ?? TrackerSettings(model: model))
    }

    public func detect(path: String) throws -> [DetectedEvent] {
        try detector.detect(path: path).map {
            DetectedEvent(label: $0.label, onset: $0.onset, offset: $0.offset, detectedAt: $0.detectedAt)
        }
    }
}
