/// Finds the alerts in audio files, as fast as the CPU allows: `hearalert detect` uses it.
///
/// Runs each file through a fresh `AlertDetector` exactly as live listening runs the microphone (`FileRun`: the
/// file resampled to the model's rate and mixed to mono, in the listener's periods), and closes any event still
/// open at the end of the file. Not thread-safe (it uses one `AlertModel`); use one per thread to spread files
/// across cores.
public final class FileDetector {
    /// The model every file is run through (one per thread: `AlertModel` is not thread-safe).
    public let model: AlertModel
    /// Event tracking rules, the same for every file.
    public let settings: TrackerSettings

    /// Each file gets a fresh `AlertDetector` over this model, so no state carries from one file to the next.
    public init(model: AlertModel, settings: TrackerSettings) {
        self.model = model
        self.settings = settings
    }

    /// The finished events of one file, in onset order.
    ///
    /// - Parameter progress: called with the fraction done (0…1) as the file goes, for long files.
    public func detect(path: String, progress: ((Double) -> Void)? = nil) throws -> [AlertEvent] {
        var events: [AlertEvent] = []
        try run(path: path, progress: progress) { message in
            if case .ended(let event) = message { events.append(event) }
        }
        return events.sorted { ($0.onset, $0.label) < ($1.onset, $1.label) }
    }

    /// Streams every message (starts and ends, in the order a live listener would emit them) for one file.
    public func run(path: String, progress: ((Double) -> Void)? = nil, emit: (AlertMessage) -> Void) throws {
        let detector = try AlertDetector(model: model, settings: settings)
        _ = try FileRun(path: path, sampleRate: detector.expectedSampleRate)
            .run(detector: detector, progress: progress, emit: emit)
    }
}
