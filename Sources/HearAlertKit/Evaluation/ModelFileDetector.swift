/// The evaluator's detector: a weight file loaded once per worker and run over each file exactly as
/// `hearalert detect` runs it (the model's own features, and its thresholds and tracker settings unless
/// overridden), noting as it goes when the live pipeline would keep alert bands in the enhancer.
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

    /// `FileDetector`'s loop, fed one feature hop at a time so that `isAlertPossible`, which the live listener
    /// hands the enhancer, is sampled as often as it can change.
    public func detect(path: String) throws -> FileDetection {
        let detector = try AlertDetector(model: model, settings: settings)
        let hop = model.featureSpec.hopLength
        let reader = try AudioFileReader(path: path, sampleRate: detector.expectedSampleRate, blockFrames: 16 * hop)
        let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: hop)
        defer { block.deallocate() }
        var events: [DetectedEvent] = []
        let collect: (AlertMessage) -> Void = { message in
            if case .ended(let event) = message {
                events.append(DetectedEvent(label: event.label, onset: event.onset, offset: event.offset,
                                            detectedAt: event.detectedAt))
            }
        }
        var activity: [Range<Double>] = []
        var activeSince: Double?
        while true {
            let count = try reader.read(into: block)
            if count == 0 { break }
            try detector.process(UnsafeBufferPointer(rebasing: block[0..<count]), emit: collect)
            // The state after these samples governs the enhancer from here on.
            let now = detector.streamTime
            if detector.isAlertPossible, activeSince == nil {
                activeSince = now
            } else if !detector.isAlertPossible, let start = activeSince {
                if start < now { activity.append(start..<now) }
                activeSince = nil
            }
        }
        let end = detector.streamTime
        detector.finish(emit: collect)
        if let start = activeSince, start < end { activity.append(start..<end) }
        return FileDetection(events: events.sorted { ($0.onset, $0.label) < ($1.onset, $1.label) },
                             alertActivity: activity)
    }
}
