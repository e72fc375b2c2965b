import Foundation
import HearAlertKit

/// The real-time path's allocation-freedom, for a heap profiler to judge (`hearalert-realtime-probe`).
///
/// Builds every real-time component once, warms it up through every behaviour it has (alerts starting and
/// ending, the enhancer's alert flag toggling, rings wrapping), then feeds it HEARALERT_PROBE_FRAMES (default
/// 800) frames of 10 ms audio. Everything it prints is independent of the frame count, so under valgrind the
/// heap's total allocation count is the same for N and 2N frames exactly when the frames allocate nothing:
///   HEARALERT_PROBE_FRAMES=800 valgrind .build/release/hearalert-realtime-probe
///   HEARALERT_PROBE_FRAMES=1600 valgrind .build/release/hearalert-realtime-probe
/// tools/tests/test_realtime_allocations.py does this and names the stage that allocated.
///
/// HEARALERT_PROBE_STAGES (comma-separated, default all) picks stages; the hidden `self-test-allocating` stage
/// allocates on purpose, so the test can show the check fails when it should. Run it from the package root: the
/// `cnn` stage runs the default model (models/default.safetensors) and the test fixtures' models.
/// A stage whose frames did not do their work (no features, no alert announced) fails the probe, so a pass
/// cannot come from frames that did nothing.
enum RealtimeProbe {
    /// One capture period: 10 ms at 16 kHz. Every stage consumes the audio of one such period per frame.
    static let periodSamples = 160
    static let fixtures = "Tests/HearAlertKitTests/Fixtures"
    static let defaultModel = "models/default.safetensors"

    static func run() throws {
        let environment = ProcessInfo.processInfo.environment
        let frames = Int(environment["HEARALERT_PROBE_FRAMES"] ?? "") ?? 800
        guard frames > 0 else { throw ProbeError("HEARALERT_PROBE_FRAMES must be a positive number of frames") }
        let known: [(name: String, build: (ProbeAudio) throws -> any ProbeStage)] = [
            ("ring", RingStage.init),
            ("features", FeaturesStage.init),
            ("stft", STFTStage.init),
            ("cnn", ModelStage.init),
            ("tracker", TrackerStage.init),
            ("enhancer", EnhancerStage.init),
            ("detector", DetectorStage.init),
            ("detector-restarts", DetectorRestartStage.init),
            ("live-chain", LiveChainStage.init),
            ("self-test-allocating", AllocatingStage.init),
        ]
        let everyStage = known.map(\.name).filter { $0 != "self-test-allocating" }
        let wanted = environment["HEARALERT_PROBE_STAGES"].map { $0.split(separator: ",").map(String.init) }
            ?? everyStage
        if let unknown = wanted.first(where: { name in !known.contains { $0.name == name } }) {
            throw ProbeError("unknown probe stage '\(unknown)'; known: \(known.map(\.name).joined(separator: ", "))")
        }
        let audio = ProbeAudio(countedFrames: frames)
        for (name, build) in known where wanted.contains(name) {
            let stage = try build(audio)
            // Warm-up, so every lazy first-use allocation (type metadata, OpenBLAS buffers, the first alert
            // message) has happened before counting starts.
            let warmUp = stage.warmUpFrames(audio)
            for frame in 0..<warmUp { stage.process(frame: frame) }
            stage.resetTally()
            for frame in warmUp..<(warmUp + frames) { stage.process(frame: frame) }
            try stage.verify(frames: frames)
            print("realtime-probe: \(name) ok: \(stage.summary)")
        }
    }
}

/// One real-time component, built (allocating freely) and then fed frame by frame (allocating nothing).
protocol ProbeStage: AnyObject {
    /// Frames that take the stage through every behaviour once; by default a whole loop of the audio.
    func warmUpFrames(_ audio: ProbeAudio) -> Int
    /// The work the live pipeline does on one 10 ms capture period.
    func process(frame: Int)
    /// Forgets what the warm-up did, so `verify` judges only the counted frames.
    func resetTally()
    /// Throws when the counted frames did not do their work (a vacuous pass).
    func verify(frames: Int) throws
    /// What the stage covers, in words independent of the frame count.
    var summary: String { get }
}

extension ProbeStage {
    func warmUpFrames(_ audio: ProbeAudio) -> Int { audio.framesPerLoop }
}

struct ProbeError: Error, CustomStringConvertible, LocalizedError {
    let description: String
    init(_ description: String) { self.description = description }
    var errorDescription: String? { description }
}

/// The probe's audio, looped: 8 s at 16 kHz of faint white noise with a 900/1100 Hz hi-lo siren (1-3 s) and
/// three 3.2 kHz smoke-alarm beeps (4.5-7 s), as in the detector's fixture clip
/// (tools/fixtures/make_detector_fixtures.py), so the detector hears alerts start and end in every loop.
final class ProbeAudio {
    static let sampleRate = 16_000
    let samples: UnsafeMutableBufferPointer<Float>
    /// Frames (capture periods) in one pass over the clip. 8 s is a whole number of periods and of enhancer
    /// hops (64 and 128 samples), so no slice ever straddles the loop.
    let framesPerLoop: Int
    /// HEARALERT_PROBE_FRAMES: the frames counted after the warm-up.
    let countedFrames: Int

    init(countedFrames: Int) {
        self.countedFrames = countedFrames
        let rate = Double(Self.sampleRate)
        samples = .allocate(capacity: 8 * Self.sampleRate)
        var noise: UInt32 = 7
        var sirenPhase = 0.0
        for index in samples.indices {
            let time = Double(index) / rate
            noise = noise &* 1_664_525 &+ 1_013_904_223
            var value = Double(Int32(bitPattern: noise)) / Double(Int32.max) * 0.017  // uniform, std 0.01
            if time >= 1, time < 3 {
                sirenPhase += 2 * Double.pi * (Int((time - 1) / 0.25).isMultiple(of: 2) ? 900 : 1_100) / rate
                value += 0.2 * sin(sirenPhase)
            }
            if [4.5, 5.5, 6.5].contains(where: { time >= $0 && time < $0 + 0.5 }) {
                value += 0.2 * sin(2 * Double.pi * 3_200 * time)
            }
            samples[index] = Float(value)
        }
        framesPerLoop = samples.count / RealtimeProbe.periodSamples
    }

    deinit { samples.deallocate() }

    /// `count` samples starting at `offset` (modulo the clip); `count` must divide the clip's length.
    func slice(at offset: Int, count: Int) -> UnsafeBufferPointer<Float> {
        let start = (offset * count) % samples.count
        return UnsafeBufferPointer(rebasing: samples[start..<(start + count)])
    }

    /// Frame `frame`'s capture period.
    func period(_ frame: Int) -> UnsafeBufferPointer<Float> { slice(at: frame, count: RealtimeProbe.periodSamples) }
}

/// Allocates one small array per frame on purpose: the test runs it to prove it sees an allocating frame.
final class AllocatingStage: ProbeStage {
    private let audio: ProbeAudio
    private var kept: [Float] = []
    private var sum: Float = 0

    init(audio: ProbeAudio) { self.audio = audio }

    func process(frame: Int) {
        kept = Array(audio.period(frame).prefix(16))  // a fresh heap array, kept past the call
        sum += kept[0]
    }

    func resetTally() {}
    func verify(frames: Int) throws {}
    var summary: String { "one array allocated per frame, on purpose" }
}
