import ArgumentParser
import Foundation
import HearAlertKit

/// `--noise-estimator` and `--noise-model`, shared by every command that enhances speech (`enhance`, `listen`,
/// `evaluate`), so they mean the same everywhere.
struct NoiseEstimatorOptions: ParsableArguments {
    /// The estimators a person can name.
    enum Choice: String, CaseIterable, ExpressibleByArgument {
        case learned
        case mcra
    }

    /// The estimator used when none is named.
    static let defaultChoice = Choice.mcra

    @Option(help: ArgumentHelp(
        "Noise estimate of the speech enhancer: learned (a small network refining MCRA's estimate, "
            + "models/noise.safetensors; low-latency mode at 16 kHz; measured no better than mcra on real noise, "
            + "see Enhancement/README.md) or mcra (minima-controlled recursive averaging; no file). "
            + "Default: \(defaultChoice.rawValue).",
        valueName: "learned|mcra"))
    var noiseEstimator: Choice?

    @Option(help: ArgumentHelp(
        "Weight file of the learned noise estimator (alertnet, task noise_estimation) instead of the bundled "
            + "models/noise.safetensors; implies --noise-estimator learned.",
        valueName: "PATH"))
    var noiseModel: String?

    func validate() throws {
        if noiseEstimator == .mcra, noiseModel != nil {
            throw ValidationError("--noise-model is for the learned estimator; drop it or --noise-estimator mcra")
        }
        if noiseModel?.isEmpty == true { throw ValidationError("--noise-model is empty; name a weight file") }
    }

    /// What the enhancer runs: MCRA, or the learned estimator with `--noise-model` or the bundled file.
    func estimation() throws -> NoiseEstimation {
        if let noiseModel { return .learned(modelPath: noiseModel) }
        switch noiseEstimator ?? Self.defaultChoice {
        case .mcra:
            return .mcra
        case .learned:
            let bundled = BundledModel.resolve(BundledModel.noiseEstimator)
            guard let path = bundled.path else {
                throw ValidationError(
                    "no bundled noise model found (looked for \(bundled.tried.joined(separator: ", "))); give one "
                        + "with --noise-model PATH or use --noise-estimator mcra")
            }
            return .learned(modelPath: path)
        }
    }

    /// The weight file as an input no output may overwrite (nil for MCRA or when none can be found).
    var inputs: [CommandInput] {
        guard case .learned(let path)? = try? estimation() else { return [] }
        return [CommandInput(role: "--noise-model file", path: path)]
    }
}
