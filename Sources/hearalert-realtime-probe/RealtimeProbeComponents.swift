import Foundation
import HearAlertKit

// Stages of `hearalert-realtime-probe` (RealtimeProbe.swift): each real-time component on its own.

/// Capture → processing → playback hand-over: a period written into an SPSC ring and read out again, with a
/// ring size that is not a multiple of the period, so the copies wrap around the end.
final class RingStage: ProbeStage {
    private let audio: ProbeAudio
    private let ring = SPSCRingBuffer(minimumCapacity: 1_000)
    private let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: RealtimeProbe.periodSamples)
    private var moved = 0

    init(audio: ProbeAudio) { self.audio = audio }
    deinit { block.deallocate() }

    func process(frame: Int) {
        moved += ring.write(audio.period(frame))
        moved += ring.read(into: block)
    }

    func resetTally() { moved = 0 }

    func verify(frames: Int) throws {
        guard moved == 2 * frames * RealtimeProbe.periodSamples else { throw ProbeError("ring lost samples") }
    }

    var summary: String { "SPSCRingBuffer write + read, wrapping" }
}

/// Feature extraction as the detector runs it, for the specs that take different code paths.
final class FeaturesStage: ProbeStage {
    private let audio: ProbeAudio
    private let extractors: [FeatureExtractor]
    private var framesOut = 0
    private var sum: Float = 0

    init(audio: ProbeAudio) throws {
        self.audio = audio
        let binCount = FeatureSpec(kind: .logPower).binCount
        extractors = try [
            FeatureSpec(),  // the default model's: log-Mel, hop 256 (not a multiple of the period)
            FeatureSpec(winLength: 400, hopLength: 160, window: .hamming, power: 1),  // magnitude, short window
            FeatureSpec(kind: .logPower, normalization: .init(mean: Array(repeating: -40, count: binCount),
                                                               std: Array(repeating: 20, count: binCount))),
            FeatureSpec(nFFT: 256, winLength: 256, hopLength: 400, nMels: 32),  // hop beyond the frame: skipping
        ].map { try FeatureExtractor(spec: $0) }
    }

    func process(frame: Int) {
        for extractor in extractors {
            extractor.process(audio.period(frame)) { features in
                framesOut += 1
                sum += features[0]
            }
        }
    }

    func resetTally() { framesOut = 0 }

    func verify(frames: Int) throws {
        guard framesOut >= frames, sum.isFinite else { throw ProbeError("features: too few frames or non-finite") }
    }

    var summary: String { "FeatureExtractor.process, 4 specs (log-Mel, magnitude, normalised log-power, skipping)" }
}

/// The streaming STFT on its own (analysis, spectrum untouched, synthesis), at the period as hop.
final class STFTStage: ProbeStage {
    private let audio: ProbeAudio
    private let stft: StreamingSTFT
    private let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: RealtimeProbe.periodSamples)
    private var sum: Float = 0

    init(audio: ProbeAudio) throws {
        self.audio = audio
        let window = WindowFunction.make(.sqrtHann, length: 512)
        stft = try StreamingSTFT(fftSize: 512, hopLength: RealtimeProbe.periodSamples, analysisWindow: window,
                                 synthesisWindow: window)
    }

    deinit { output.deallocate() }

    func process(frame: Int) {
        stft.analyze(audio.period(frame))
        stft.synthesize(into: output)
        sum += output[0]
    }

    func resetTally() {}

    func verify(frames: Int) throws {
        guard sum.isFinite else { throw ProbeError("stft: non-finite output") }
    }

    var summary: String { "StreamingSTFT analyze + synthesize" }
}

/// `AlertModel.predict` on every model at hand: the shipped default model (models/default.safetensors: conv +
/// im2col + OpenBLAS) and the test fixtures (batch norm, pooling kinds, flatten, softmax, the detector's tone model), on a
/// sliding window of real features. The fixtures predict once per decision step; the default architecture only
/// every `defaultModelInterval` frames, because under valgrind one of its predictions takes about 0.25 s.
final class ModelStage: ProbeStage {
    static let defaultModelInterval = 80

    private struct Loaded {
        let model: AlertModel
        let interval: Int
        let window: UnsafeMutableBufferPointer<Float>
        let scores: UnsafeMutableBufferPointer<Float>
    }

    private let audio: ProbeAudio
    private let models: [Loaded]
    private var predictions = 0
    private var failures = 0

    init(audio: ProbeAudio) throws {
        self.audio = audio
        guard FileManager.default.fileExists(atPath: RealtimeProbe.defaultModel) else {
            throw ProbeError("\(RealtimeProbe.defaultModel) not found: run the probe from the package root")
        }
        var models = [try AlertModel(path: RealtimeProbe.defaultModel)]
        let directory = "\(RealtimeProbe.fixtures)/alertnet"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: directory))?.sorted() ?? []
        where name.hasSuffix(".safetensors") {
            models.append(try AlertModel(path: "\(directory)/\(name)"))
        }
        let toneModel = "\(RealtimeProbe.fixtures)/detector/tone_model.safetensors"
        if FileManager.default.fileExists(atPath: toneModel) { models.append(try AlertModel(path: toneModel)) }
        // Each model's input: log features of the clip, so activations are in their realistic range.
        self.models = try models.map { model in
            let window = UnsafeMutableBufferPointer<Float>.allocate(capacity: model.inputCount)
            let features = try FeatureExtractor.features(
                of: Array(audio.samples.prefix(model.featureSpec.sampleRate * 4)), spec: model.featureSpec)
            for index in 0..<model.inputCount { window[index] = features[index % features.count] }
            let scores = UnsafeMutableBufferPointer<Float>.allocate(capacity: model.labels.count)
            scores.initialize(repeating: 0)
            let interval = model === models[0] ? Self.defaultModelInterval : model.decisionStep
            return Loaded(model: model, interval: interval, window: window, scores: scores)
        }
    }

    deinit {
        for loaded in models {
            loaded.window.deallocate()
            loaded.scores.deallocate()
        }
    }

    func process(frame: Int) {
        for loaded in models where frame % loaded.interval == 0 {
            // Slide: the window changes between decisions, as it does live.
            loaded.window[frame % loaded.window.count] += 0.5
            do {
                try loaded.model.predict(UnsafeBufferPointer(loaded.window), into: loaded.scores)
                predictions += 1
            } catch {
                failures += 1
            }
        }
    }

    /// Two predictions of the default model, and dozens of each fixture's.
    func warmUpFrames(_ audio: ProbeAudio) -> Int { 2 * Self.defaultModelInterval }

    func resetTally() { predictions = 0 }

    func verify(frames: Int) throws {
        guard failures == 0, predictions >= frames / Self.defaultModelInterval else {
            throw ProbeError("cnn: predictions failed")
        }
        guard models.allSatisfy({ $0.scores.allSatisfy(\.isFinite) }) else {
            throw ProbeError("cnn: non-finite scores")
        }
    }

    var summary: String { "AlertModel.predict, \(models.count) models (the default model + fixtures)" }
}

/// The event tracker on scores that rise and fall every second, so alerts start, merge gaps close, events end
/// and cooldowns expire in every loop; messages go to a caller that only counts them.
final class TrackerStage: ProbeStage {
    private static let labels = ["siren", "car_horn", "smoke_alarm", "alarm_clock", "doorbell", "phone_ring"]
    private var tracker: EventTracker
    private let scores = UnsafeMutableBufferPointer<Float>.allocate(capacity: TrackerStage.labels.count)
    private var started = 0
    private var ended = 0

    init(audio: ProbeAudio) throws {
        var tuning = TrackerSettings.Partial()
        (tuning.smoothingFrames, tuning.offRatio, tuning.minDuration) = (3, 0.5, 0.1)
        (tuning.mergeGap, tuning.cooldown, tuning.onsetRiseRatio) = (0.2, 0.1, 0.5)
        tracker = EventTracker(settings: try TrackerSettings(
            labels: Self.labels, thresholds: Array(repeating: 0.5, count: Self.labels.count), tuning: tuning))
        scores.initialize(repeating: 0)
    }

    deinit { scores.deallocate() }

    func process(frame: Int) {
        let phase = frame % 100
        for label in 0..<scores.count {
            // Label k sounds for 50 frames starting at frame 8k of each second, with a 3-frame dip mid-way
            // (merged by the gap) and a two-frame blip near the end (too short to announce on its own).
            let sounding = (phase >= 8 * label && phase < 8 * label + 50 && phase % 25 > 2) || phase / 2 == 47
            scores[label] = sounding ? 0.9 : 0.05
        }
        let time = Double(frame) * 0.01
        tracker.update(scores: UnsafeBufferPointer(scores), decisionTime: time, streamTime: time + 0.2) { message in
            if message.isStart { started += 1 } else { ended += 1 }
        }
    }

    func resetTally() {
        started = 0
        ended = 0
    }

    func verify(frames: Int) throws {
        guard started >= frames / 100, ended >= frames / 100 - Self.labels.count else {
            throw ProbeError("tracker: alerts did not start and end every second")
        }
    }

    var summary: String { "EventTracker.update, alerts starting and ending" }
}

/// The speech enhancer in both modes with MCRA, and in the low-latency mode with the learned noise estimator
/// (models/noise.safetensors, from the working directory: the probe runs in the checkout), fed hop by hop from
/// the capture periods as the headphone feed does, with the alert flag switched on and off (noise tracking
/// frozen, alert bands kept).
final class EnhancerStage: ProbeStage {
    private let audio: ProbeAudio
    private let enhancers: [SpeechEnhancer]
    private let output: UnsafeMutableBufferPointer<Float>
    private var hopsDone: [Int]
    private var sum: Float = 0

    init(audio: ProbeAudio) throws {
        self.audio = audio
        enhancers = try EnhancerConfiguration.Mode.allCases.map {
            try SpeechEnhancer(configuration: EnhancerConfiguration(mode: $0), sampleRate: 16_000)
        } + [SpeechEnhancer(configuration: EnhancerConfiguration(noiseEstimation: .learned(
            modelPath: "models/noise.safetensors")), sampleRate: 16_000)]
        output = .allocate(capacity: enhancers.map(\.hopLength).max()!)
        output.initialize(repeating: 0)
        hopsDone = Array(repeating: 0, count: enhancers.count)
    }

    deinit { output.deallocate() }

    func process(frame: Int) {
        let samplesSoFar = (frame + 1) * RealtimeProbe.periodSamples
        for (index, enhancer) in enhancers.enumerated() {
            enhancer.setAlertActive(frame % 200 >= 100)
            let hop = enhancer.hopLength
            while (hopsDone[index] + 1) * hop <= samplesSoFar {
                enhancer.process(audio.slice(at: hopsDone[index], count: hop),
                                 into: UnsafeMutableBufferPointer(rebasing: output[0..<hop]))
                sum += output[0]
                hopsDone[index] += 1
            }
        }
    }

    func resetTally() {}

    func verify(frames: Int) throws {
        guard sum.isFinite, hopsDone.allSatisfy({ $0 > frames }) else { throw ProbeError("enhancer: no output") }
    }

    var summary: String {
        "SpeechEnhancer.process, \(enhancers.map(\.configuration.mode.rawValue).joined(separator: " and ")), "
            + "alert flag toggling"
    }
}
