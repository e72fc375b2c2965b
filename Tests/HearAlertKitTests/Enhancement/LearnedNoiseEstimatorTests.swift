import Foundation
import Testing
@testable import HearAlertKit

/// The learned noise estimator against the numpy definition (Fixtures/noise, made by
/// tools/fixtures/make_noise_estimator_fixtures.py with tools/noise_estimator.py and the independent reference
/// tools/alertnet_ref.py), its file checks, and the bundled model (models/noise.safetensors) in the enhancer.
struct LearnedNoiseEstimatorTests {
    static let fixtures = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/noise")
    static let tinyModel = fixtures.appendingPathComponent("tiny-noise.safetensors").path
    static let bundledModel = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("models/noise.safetensors").path
    static let detectorModel = AlertModelTests.sigmoidModel

    /// The estimator fed as the enhancer feeds it: the low-latency framing's spectra, from the first hop whose
    /// frame holds only signal; returns its estimate and the network's input after each hop.
    static func estimates(of signal: [Float], modelPath: String) throws -> (noise: [[Float]], inputs: [[Float]]) {
        let framing = try EnhancerFraming(mode: .lowLatency, sampleRate: 16_000)
        let stft = try StreamingSTFT(fftSize: framing.fftSize, hopLength: framing.hopLength,
                                     analysisWindow: framing.analysisWindow, synthesisWindow: framing.synthesisWindow)
        let estimator = try LearnedNoiseEstimator(
            modelPath: modelPath, sampleRate: 16_000, fftSize: framing.fftSize, hopLength: framing.hopLength)
        let hop = framing.hopLength
        let partial = framing.fftSize / hop - 1
        var power = [Float](repeating: 0, count: framing.fftSize / 2 + 1)
        var out: [[Float]] = []
        var inputs: [[Float]] = []
        for start in stride(from: 0, through: signal.count - hop, by: hop) {
            signal[start..<(start + hop)].withUnsafeBufferPointer { stft.analyze($0) }
            guard start / hop >= partial else { continue }
            for bin in power.indices { power[bin] = stft.real[bin] * stft.real[bin] + stft.imag[bin] * stft.imag[bin] }
            power.withUnsafeBufferPointer { estimator.update(power: $0) }
            out.append(Array(estimator.noisePower))
            inputs.append(Array(estimator.networkInput))
        }
        return (out, inputs)
    }

    @Test func matchesTheNumpyDefinitionFrameByFrame() throws {
        let signal = try NPYMatrix(contentsOf: Self.fixtures.appendingPathComponent("signal.npy")).values
        let expected = try NPYMatrix(contentsOf: Self.fixtures.appendingPathComponent("noise.npy"))
        let (found, inputs) = try Self.estimates(of: signal, modelPath: Self.tinyModel)
        #expect(found.count == expected.rows)
        // The rows first (recent band energies, smoothed power, minimum, in dB): 0.01 dB.
        let expectedInputs = try NPYMatrix(contentsOf: Self.fixtures.appendingPathComponent("inputs.npy"))
        #expect(inputs.count == expectedInputs.rows && inputs.first?.count == expectedInputs.columns)
        var worstRow: Float = 0
        for frame in 0..<min(inputs.count, expectedInputs.rows) {
            for index in 0..<expectedInputs.columns {
                worstRow = max(worstRow, abs(inputs[frame][index] - expectedInputs[frame, index]))
            }
        }
        #expect(worstRow < 0.01, "largest input difference \(worstRow) dB")
        var worst: Float = 0
        for frame in 0..<min(found.count, expected.rows) {
            for bin in 0..<expected.columns {
                let reference = expected[frame, bin]
                worst = max(worst, abs(found[frame][bin] - reference) / max(reference, 1e-9))
            }
        }
        // float32 spectra and sums against float64: 10⁻³ relative is 0.004 dB.
        #expect(worst < 1e-3, "largest relative difference \(worst)")
    }

    @Test func aDetectorFileIsRefusedAsANoiseEstimator() throws {
        let configuration = EnhancerConfiguration(noiseEstimation: .learned(modelPath: Self.detectorModel))
        let error = #expect(throws: EnhancerError.self) {
            try SpeechEnhancer(configuration: configuration, sampleRate: 16_000)
        }
        #expect(error?.description == "enhancer: noise model \(Self.detectorModel): the model is an alert detector "
                    + "(task alert_detection), not a noise estimator for the speech enhancer")
    }

    @Test func aNoiseEstimatorIsRefusedAsADetector() throws {
        let model = try AlertModel(path: Self.tinyModel)
        #expect(model.task == .noiseEstimation)
        #expect(throws: AlertModelError.wrongTask(expected: .alertDetection, found: .noiseEstimation)) {
            try AlertDetector(model: model, settings: TrackerSettings(model: model))
        }
    }

    /// A task the host does not know is refused at load, whatever it is then used for.
    @Test func anUnknownTaskIsRefused() throws {
        let bytes = try Data(contentsOf: URL(fileURLWithPath: Self.tinyModel))
        let text = try #require(String(data: bytes, encoding: .isoLatin1))
        #expect(text.contains("\"task\":\"noise_estimation\""))
        let changed = text.replacingOccurrences(of: "\"task\":\"noise_estimation\"", with: "\"task\":\"noise_estimatiom\"")
        let error = #expect(throws: AlertModelError.self) {
            try AlertModel(bytes: Array(try #require(changed.data(using: .isoLatin1))))
        }
        #expect(error?.description == "metadata task \"noise_estimatiom\" is not one of alert_detection, noise_estimation")
    }

    /// `hearalert model inspect` says what a noise estimator is (and says nothing new of a detector).
    @Test func theReportNamesTheTask() throws {
        #expect(try AlertModelReport(path: Self.tinyModel).text.contains(
            "task        noise_estimation (a noise estimator for the speech enhancer)\n"))
        #expect(try !AlertModelReport(path: Self.detectorModel).text.contains("task"))
    }

    @Test func anotherFramingIsRefusedWithBoth() throws {
        let configuration = EnhancerConfiguration(mode: .higherQuality, noiseEstimation: .learned(modelPath: Self.tinyModel))
        let error = #expect(throws: EnhancerError.self) {
            try SpeechEnhancer(configuration: configuration, sampleRate: 16_000)
        }
        #expect(error?.description.hasSuffix("it was trained on 256-sample frames every 64 samples at 16000 Hz; this "
                    + "enhancer frames 512 samples every 128 at 16000 Hz") == true)
    }

    /// MCRA when asked is the enhancer exactly as before (the library's default), and the learned estimate
    /// changes the output.
    @Test func mcraWhenAskedIsTheDefaultEnhancer() throws {
        var signals = EnhancementTestSignals(seed: 5)
        let noise = signals.gaussian(count: 16_000, standardDeviation: 0.02)
        let speech = EnhancementTestSignals.syllables(count: 16_000, sampleRate: 16_000, amplitude: 0.05)
        let input = zip(noise, speech).map { $0 + $1 }
        func run(_ estimation: NoiseEstimation?) throws -> [Float] {
            let configuration = estimation.map { EnhancerConfiguration(noiseEstimation: $0) } ?? EnhancerConfiguration()
            return EnhancementTestSignals.enhance(
                input, with: try SpeechEnhancer(configuration: configuration, sampleRate: 16_000))
        }
        let plain = try run(nil)
        #expect(try run(.mcra) == plain)
        #expect(try run(.learned(modelPath: Self.bundledModel)) != plain)
    }

    /// White noise that rises by 10 dB: hops until the median over bins of the estimate is within 3 dB of the
    /// new level, which is known exactly (σ² times the analysis window's energy), for both estimators. Measured
    /// with the bundled model: 275 hops (1.10 s) against MCRA's 293 (1.17 s) — the network mostly follows MCRA.
    @Test func followsARiseInNoiseFasterThanMCRA() throws {
        let framing = try EnhancerFraming(mode: .lowLatency, sampleRate: 16_000)
        var signals = EnhancementTestSignals(seed: 9)
        let quiet = signals.gaussian(count: 32_000, standardDeviation: 0.003)
        let loud = signals.gaussian(count: 48_000, standardDeviation: 0.003 * 10.0.squareRoot())
        let truth = Float(0.003 * 0.003 * 10) * framing.analysisWindow.reduce(0) { $0 + $1 * $1 }
        func hopsToFollow(_ estimator: any NoiseEstimator) throws -> Int? {
            let stft = try StreamingSTFT(fftSize: framing.fftSize, hopLength: framing.hopLength,
                                         analysisWindow: framing.analysisWindow, synthesisWindow: framing.synthesisWindow)
            var power = [Float](repeating: 0, count: framing.fftSize / 2 + 1)
            let signal = quiet + loud
            let hop = framing.hopLength
            for start in stride(from: 0, through: signal.count - hop, by: hop) {
                signal[start..<(start + hop)].withUnsafeBufferPointer { stft.analyze($0) }
                guard start / hop >= 3 else { continue }
                for bin in power.indices { power[bin] = stft.real[bin] * stft.real[bin] + stft.imag[bin] * stft.imag[bin] }
                power.withUnsafeBufferPointer { estimator.update(power: $0) }
                guard start >= quiet.count else { continue }
                let ratios = estimator.noisePower[2..<(power.count - 2)].map { $0 / truth }.sorted()
                if ratios[ratios.count / 2] >= 0.5 { return (start - quiet.count) / hop }
            }
            return nil
        }
        let learned = try hopsToFollow(LearnedNoiseEstimator(
            modelPath: Self.bundledModel, sampleRate: 16_000, fftSize: framing.fftSize, hopLength: framing.hopLength))
        let mcra = try hopsToFollow(NoisePowerTracker(binCount: framing.fftSize / 2 + 1, hopSeconds: 0.004))
        print("hops to follow a 10 dB rise: learned \(learned.map(String.init) ?? "never"), MCRA \(mcra.map(String.init) ?? "never")")
        let mcraHops = try #require(mcra)
        #expect((learned ?? .max) < mcraHops)
    }

    /// The impulse test with the learned estimate: the delay is the framing's, whatever estimates the noise.
    @Test func impulseComesOutAfterTheStatedLatency() throws {
        let enhancer = try SpeechEnhancer(
            configuration: .init(noiseEstimation: .learned(modelPath: Self.bundledModel)), sampleRate: 16_000)
        var input = [Float](repeating: 0, count: 8000)
        input[4000] = 1
        let output = EnhancementTestSignals.enhance(input, with: enhancer)
        let peak = try #require(output.indices.max { abs(output[$0]) < abs(output[$1]) })
        #expect(peak - 4000 == enhancer.latencySamples)
        #expect(enhancer.latencySamples + enhancer.hopLength <= 160)
    }
}
