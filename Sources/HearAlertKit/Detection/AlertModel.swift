import CAlertNet
import Foundation

/// A loaded alert-detection network (the C core alertnet, `CSources/alertnet/include/alertnet.h`): everything a
/// host needs comes from the one weight file, so a researcher swaps the file and nothing else changes.
///
/// Not `Sendable` and not thread-safe: `predict` reuses the workspace alertnet sized at load, which is what
/// makes it allocation-free. Load one model per thread (loading twice is cheap). Loading sets OpenBLAS to one
/// thread for the process (see alertnet.h). A stateful model (`isStateful`) also follows one stream: load one per
/// stream.
public final class AlertModel {
    /// The file's `model_name`, for logs and the model card.
    public let name: String
    /// Output names in order, e.g. `["siren", "car_horn", ...]`.
    public let labels: [String]
    /// Default on-threshold per label (aligned with `labels`), as tuned when the model was trained.
    public let thresholds: [Float]
    /// The exact features the network was trained on; the host must compute these and no others.
    public let featureSpec: FeatureSpec
    /// Feature frames in one input window (T).
    public let contextFrames: Int
    /// Hops between two decisions.
    public let decisionStep: Int
    /// Copies of a stream's first feature frame the model was trained to see before it (0 ≤ P < T; 0 when the
    /// file has no `start_padding`). Why: without it nothing can be decided until a whole window has arrived, so a
    /// detector started (or restarted) while an alarm sounds would report it a window late; with it the first
    /// decision comes after `contextFrames − startPadding` frames.
    public let startPadding: Int
    /// What the network is for (`task` in the file; a file without it is a detector). Why: a noise estimator and
    /// a detector load alike, so a host checks the task before using one (`require`).
    public let task: ModelTask

    /// The C model; internal so the query extensions (AlertModel+Layers.swift) can read it.
    let handle: OpaquePointer

    /// Floats in one input window: `contextFrames` frames of `featureSpec.binCount` bins, oldest first.
    public var inputCount: Int { contextFrames * featureSpec.binCount }

    /// Loads a weight file; the error carries alertnet's message (e.g. `tensor "conv1.weight": expected shape
    /// [*, 1, *, *], found [16, 2, 5, 5]`).
    public convenience init(path: String) throws {
        var handle: OpaquePointer?
        var error = alertnet_error()
        let status = alertnet_load_file(path, &handle, &error)
        try self.init(loaded: handle, status: status, error: error, path: path)
    }

    /// Loads a model from bytes already in memory (an embedded resource, a download); the bytes may be discarded
    /// afterwards.
    public convenience init(bytes: [UInt8]) throws {
        var handle: OpaquePointer?
        var error = alertnet_error()
        let status = bytes.withUnsafeBytes { alertnet_load_memory($0.baseAddress, $0.count, &handle, &error) }
        try self.init(loaded: handle, status: status, error: error, path: nil)
    }

    private init(loaded: OpaquePointer?, status: alertnet_status, error: alertnet_error, path: String?) throws {
        guard status == ALERTNET_OK, let handle = loaded else {
            throw AlertModelError(status: status, message: Self.message(of: error), path: path)
        }
        let count = Int(alertnet_output_count(handle))
        do {
            let taskName = alertnet_metadata(handle, "task").map { String(cString: $0) }
            guard let found = taskName.map(ModelTask.init(rawValue:)) ?? .alertDetection else {
                throw AlertModelError.invalidModel(
                    "metadata task \"\(PrintableText.escaped(taskName ?? ""))\" is not one of "
                        + ModelTask.allCases.map(\.rawValue).joined(separator: ", "))
            }
            task = found
            guard let specText = alertnet_feature_spec(handle) else { throw AlertModelError.invalidModel("no feature spec") }
            let spec = try FeatureSpec(json: Data(String(cString: specText).utf8))
            try spec.validate()
            var frames: Int32 = 0
            var bins: Int32 = 0
            alertnet_input_shape(handle, &frames, &bins)
            guard spec.binCount == Int(bins) else {
                throw AlertModelError.invalidModel("feature spec gives \(spec.binCount) bins, the network takes \(bins)")
            }
            featureSpec = spec
            labels = try (0..<count).map { index in
                // Invalid UTF-8 becomes U+FFFD here, which the rule refuses as it refuses any non-ASCII character.
                let label = String(cString: alertnet_label(handle, Int32(index)))
                guard AlertLabel.isValid(label) else {
                    throw AlertModelError.invalidModel(
                        "label \(index) (\"\(PrintableText.escaped(label))\") must be \(AlertLabel.rule)")
                }
                return label
            }
        } catch let error as AlertModelError {
            alertnet_free(handle)
            throw error
        } catch {
            alertnet_free(handle)
            throw AlertModelError.invalidModel("the model's \(error)")
        }
        self.handle = handle
        name = alertnet_metadata(handle, "model_name").map { String(cString: $0) } ?? ""
        thresholds = (0..<count).map { alertnet_threshold(handle, Int32($0)) }
        contextFrames = Int(alertnet_context_frames(handle))
        decisionStep = Int(alertnet_decision_step(handle))
        startPadding = Int(alertnet_context_start_padding(handle))
    }

    deinit {
        alertnet_free(handle)
    }

    /// Throws `AlertModelError.wrongTask` unless the network is for `expected`: a noise estimator handed to the
    /// detector, or a detector to the enhancer, is refused before it runs. Both tasks' hosts run the network on
    /// overlapping windows, each on its own, so a stateful network (`isStateful`) is refused too
    /// (`statefulNotSupported`): it would load and run and give nonsense.
    public func require(_ expected: ModelTask) throws(AlertModelError) {
        guard task == expected else { throw .wrongTask(expected: expected, found: task) }
        guard !isStateful else { throw .statefulNotSupported(expected) }
    }

    /// Whether the network keeps a recurrent state from one `predict` to the next (it holds a `gru` layer). Why: such
    /// a model must see each frame exactly once, in order (each window holds the frames after the previous one's),
    /// and be reset where its stream breaks; a stateless model answers each window on its own.
    public var isStateful: Bool { alertnet_is_stateful(handle) != 0 }

    /// Zeroes the recurrent state, where a loaded model starts. Call it where the stream the model follows restarts
    /// (a new file, a reopened device): otherwise the first frames after the gap are read as if they continued the
    /// audio before it. Allocates nothing; does nothing for a stateless model.
    public func resetState() {
        _ = alertnet_reset_state(handle)  // fails only for a NULL handle, which a loaded model never has
    }

    /// Any `__metadata__` value by key (`tracker`, `trained_on`, `description`...), or nil when absent.
    public func metadata(_ key: String) -> String? {
        alertnet_metadata(handle, key).map { String(cString: $0) }
    }

    /// Per-label probabilities for one window of `inputCount` floats (frames oldest first). Allocates nothing,
    /// so it may run on the audio path; throws only when a buffer has the wrong length.
    public func predict(_ window: UnsafeBufferPointer<Float>, into probabilities: UnsafeMutableBufferPointer<Float>) throws {
        try run(window, into: probabilities, alertnet_run)
    }

    /// The same computation by alertnet's naive direct-convolution oracle (no BLAS): tens of times slower; for
    /// tests and benchmarks that hold the fast path against it (package-only: never a way to run a model).
    package func predictWithReferenceOracle(
        _ window: UnsafeBufferPointer<Float>, into probabilities: UnsafeMutableBufferPointer<Float>
    ) throws {
        try run(window, into: probabilities, alertnet_run_reference)
    }

    private func run(
        _ window: UnsafeBufferPointer<Float>, into probabilities: UnsafeMutableBufferPointer<Float>,
        _ function: (OpaquePointer?, UnsafePointer<Float>?, UnsafeMutablePointer<Float>?) -> alertnet_status
    ) throws {
        guard window.count == inputCount else {
            throw AlertModelError.wrongBufferSize(what: "input window", expected: inputCount, found: window.count)
        }
        guard probabilities.count == labels.count else {
            throw AlertModelError.wrongBufferSize(what: "probabilities", expected: labels.count, found: probabilities.count)
        }
        // Cannot fail: both pointers are non-nil once the counts are checked (inputCount and labels are >= 1).
        _ = function(handle, window.baseAddress, probabilities.baseAddress)
    }

    /// The C core's message, which may quote what the file holds: shown escaped (it escapes control bytes itself;
    /// this also catches what it leaves, such as bidirectional overrides).
    private static func message(of error: alertnet_error) -> String {
        PrintableText.escaped(
            withUnsafeBytes(of: error.message) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) })
    }
}
