import Foundation

/// What `hearalert model inspect` prints: enough to tell which model a file holds, what it listens for, what
/// features it needs and what it costs, without Python.
public struct AlertModelReport: Sendable {
    /// The whole report, one fact per line, ready to print.
    public let text: String

    /// Loads the file (throwing `AlertModelError` exactly as `AlertModel(path:)` does) and describes it.
    public init(path: String) throws {
        let model = try AlertModel(path: path)
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? nil
        text = Self.describe(model, path: path, fileSize: size)
    }

    static func describe(_ model: AlertModel, path: String, fileSize: Int?) -> String {
        // Names and free text come from the file (or the command line): shown escaped, never interpreted.
        let shown = PrintableText.escaped
        let spec = model.featureSpec
        var lines = [
            "model       \(shown(model.name))",
            "file        \(shown(path))" + (fileSize.map { " (\(group($0)) bytes)" } ?? ""),
            "trained on  \(shown(model.metadata("trained_on") ?? ""))",
        ]
        if model.task != .alertDetection {
            lines.append("task        \(model.task.rawValue) (\(model.task.fileDescription))")
        }
        if let description = model.metadata("description") { lines.append("description \(shown(description))") }
        lines.append("labels      " + zip(model.labels, model.thresholds).map { "\(shown($0)) (threshold \(format($1, 2)))" }
            .joined(separator: ", "))
        lines.append("features    \(summary(of: spec))")
        let seconds = Double(model.contextFrames * spec.hopLength) / Double(spec.sampleRate)
        let step = Double(model.decisionStep * spec.hopLength) / Double(spec.sampleRate)
        lines.append("context     \(model.contextFrames) frames x \(spec.binCount) bins (\(format(seconds, 2)) s), "
            + "a decision every \(model.decisionStep) hops (\(format(step, 3)) s)")
        if model.startPadding > 0 {
            let firstFrames = model.contextFrames - model.startPadding
            let first = Double((firstFrames - 1) * spec.hopLength + spec.nFFT) / Double(spec.sampleRate)
            lines.append("start pad   \(model.startPadding) copies of the first frame: first decision after "
                + "\(firstFrames) frames (\(format(first, 2)) s of audio)")
        }
        if let tracker = model.metadata("tracker") { lines.append("tracker     \(shown(tracker))") }
        lines.append("layers")
        for (index, layer) in model.layers.enumerated() {
            let shape = "[" + layer.outputShape.map(String.init).joined(separator: ", ") + "]"
            let name = layer.op.padding(toLength: 15, withPad: " ", startingAt: 0)
            let detail = layer.detail.padding(toLength: 44, withPad: " ", startingAt: 0)
            let cost = "\(group(layer.parameterCount)) params, \(format(layer.mflops, 3)) MFLOP"
            lines.append("  \(index < 10 ? " " : "")\(index)  \(name)\(detail)-> \(shape.padding(toLength: 14, withPad: " ", startingAt: 0))\(cost)")
        }
        lines.append("parameters  \(group(model.parameterCount))")
        lines.append("cost        \(format(model.mflops, 2)) MFLOP per inference")
        return lines.joined(separator: "\n")
    }

    private static func summary(of spec: FeatureSpec) -> String {
        var kind = "log-power, \(spec.binCount) bins"
        if spec.kind == .logMel {
            kind = "log-Mel, \(spec.nMels) bands \(format(spec.fmin, 0))-\(format(spec.fmax, 0)) Hz "
                + "(\(spec.melScale.rawValue) scale, \(spec.melNorm.rawValue) norm)"
        }
        let log = "\(shortest(spec.logMultiplier))*log_\(shortest(spec.logBase))(max(x, \(shortest(spec.logFloor))))"
        return "\(kind); \(spec.sampleRate) Hz, n_fft \(spec.nFFT), \(spec.window.rawValue) window \(spec.winLength), "
            + "hop \(spec.hopLength), power \(format(spec.power, 1)), \(log), "
            + (spec.normalization == nil ? "no normalization" : "per-bin normalization")
    }

    private static func format(_ value: Double, _ digits: Int) -> String { String(format: "%.\(digits)f", value) }
    private static func shortest(_ value: Double) -> String { String(format: "%g", value) }
    private static func format(_ value: Float, _ digits: Int) -> String { format(Double(value), digits) }

    private static func group(_ value: Int) -> String {
        let digits = String(value)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return out
    }
}
