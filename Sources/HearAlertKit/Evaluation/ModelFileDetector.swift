/// The evaluator's detector: a weight file loaded once per worker and run over each file exactly as
/// `hearalert detect` runs it (`FileRun`: the model's own features, and its thresholds and tracker settings
/// unless overridden), noting as it goes when the live pipeline would keep alert bands in the enhancer.
public final class ModelFileDetector: CorpusFileDetector {
    private let model: AlertModel
    private let settings: TrackerSettings

    /// The labels the model can report.
    public var labels: [String] { model.labels }

    /// Loads `modelPath`; `settings` defaults to the model's own tracker settings (pass the result of
    /// `TrackerSettings(model:overrides:)` for the same file to evaluate other thresholds).
    public init(modelPath: String, settings: TrackerSettings? = nil) throws {
        model = try AlertModel(path: modelPath)
        self.settings = try settings ?? TrackerSettings(model: model)
    }

    /// The file's events, and when the listener's enhancer would have kept alerts audible (`FileRun`'s
    /// `alertActivity`, sampled after every listener period).
    public func detect(path: String) throws -> FileDetection {
        let detector = try AlertDetector(model: model, settings: settings)
        var events: [DetectedEvent] = []
        let run = try FileRun(path: path, sampleRate: detector.expectedSampleRate).run(detector: detector, emit: {
            if case .ended(let event) = $0 {
                events.append(DetectedEvent(label: event.label, onset: event.onset, offset: event.offset,
                                            detectedAt: event.detectedAt))
            }
        })
        return FileDetection(events: events.sorted { ($0.onset, $0.label) < ($1.onset, $1.label) },
                             alertActivity: run.alertActivity)
    }
}
