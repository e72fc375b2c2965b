import Foundation

/// The whole of `hearalert model check`: load, then one inference whose outputs must be probabilities.
public enum AlertModelCheck {
    /// Returns a one-line summary of a usable model; throws `AlertModelError` with the reason otherwise.
    public static func run(path: String) throws -> String {
        let model = try AlertModel(path: path)
        // The feature floor (e.g. -100 dB): what the network sees in digital silence.
        let floor = Float(model.featureSpec.logMultiplier * log(model.featureSpec.logFloor) / log(model.featureSpec.logBase))
        let window = [Float](repeating: floor.isFinite ? floor : 0, count: model.inputCount)
        var probabilities = [Float](repeating: 0, count: model.labels.count)
        try window.withUnsafeBufferPointer { input in
            try probabilities.withUnsafeMutableBufferPointer { try model.predict(input, into: $0) }
        }
        if let bad = probabilities.firstIndex(where: { !($0 >= 0 && $0 <= 1) }) {
            throw AlertModelError.invalidModel("output \(model.labels[bad]) is \(probabilities[bad]), not a probability")
        }
        // The name comes from the file: shown escaped, never interpreted (labels are identifiers by then).
        return "\(PrintableText.escaped(model.name)): \(model.labels.count) labels (\(model.labels.joined(separator: ", "))), input "
            + "\(model.contextFrames)x\(model.featureSpec.binCount), \(model.parameterCount) parameters"
    }
}
