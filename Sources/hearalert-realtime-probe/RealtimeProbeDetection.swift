import Foundation
import HearAlertKit

// Stages of `hearalert-realtime-probe` (RealtimeProbe.swift): the detection core and the live chain.

/// The detector's tone model (a test fixture that responds to the probe's siren and beeps), loaded with its own
/// tracker settings.
func loadToneModel() throws -> (model: AlertModel, settings: TrackerSettings) {
    let path = "\(RealtimeProbe.fixtures)/detector/tone_model.safetensors"
    guard FileManager.default.fileExists(atPath: path) else {
        throw ProbeError("\(path) not found: run realtime-probe from the package root")
    }
    let model = try AlertModel(path: path)
    let settings = try TrackerSettings(labels: model.labels, thresholds: model.thresholds,
                                       trackerMetadata: model.metadata("tracker"))
    return (model, settings)
}

/// The shared detection core (`AlertDetector`: features → context window → model every decision step → event
/// tracker) on capture periods, with alerts announced and ended in every loop of the audio.
final class DetectorStage: ProbeStage {
    private let audio: ProbeAudio
    private let detector: AlertDetector
    private var started = 0
    private var ended = 0
    private var failures = 0

    init(audio: ProbeAudio) throws {
        self.audio = audio
        let (model, settings) = try loadToneModel()
        detector = try AlertDetector(model: model, settings: settings)
    }

    func process(frame: Int) {
        do {
            try detector.process(audio.period(frame)) { message in
                if message.isStart { started += 1 } else { ended += 1 }
            }
        } catch {
            failures += 1
        }
    }

    func resetTally() {
        started = 0
        ended = 0
    }

    func verify(frames: Int) throws {
        let loops = frames / audio.framesPerLoop
        guard failures == 0, started >= loops, ended >= loops - 1 else {
            throw ProbeError("detector: \(started) alerts started, \(ended) ended in \(loops) loops of the siren clip")
        }
    }

    var summary: String { "AlertDetector.process (tone model), alerts announced and ended" }
}

/// The live pipeline's work, on one thread and without a sound card, in the periods `listen` uses with headphones
/// (2 ms, five per frame): ALSA capture (a `type file` PCM reading the probe's audio) → capture ring → the
/// listener's own per-period code (`PeriodProcessor`: AlertDetector, then the speech enhancer, hop by hop, told
/// whether an alert is possible) → playback ring → ALSA playback (a `type file` PCM writing to /dev/null). The same
/// calls `LiveListener` makes on its capture, processing and playback threads, minus the waiting.
final class LiveChainStage: ProbeStage {
    private let framesPerLoop: Int
    private let livePeriod: Int
    private let folder: URL
    private let capture: ALSAPCM
    private let playback: ALSAPCM
    private let captureRing = SPSCRingBuffer(minimumCapacity: 16_000)
    private let playbackRing = SPSCRingBuffer(minimumCapacity: 8 * RealtimeProbe.periodSamples)
    private var processor: PeriodProcessor
    private let period: UnsafeMutableBufferPointer<Float>
    private var started = 0
    private var played = 0
    private var failures = 0

    init(audio: ProbeAudio) throws {
        framesPerLoop = audio.framesPerLoop
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hearalert-probe-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        // The file PCM does not pace reads and repeats its last block at the end: give it all the audio the
        // warm-up and the counted frames will read, as 16-bit samples.
        let input = folder.appendingPathComponent("capture.raw")
        let loops = (audio.countedFrames + audio.framesPerLoop - 1) / audio.framesPerLoop + 1
        var bytes = Data(capacity: loops * audio.samples.count * 2)
        for _ in 0..<loops {
            for sample in audio.samples {
                withUnsafeBytes(of: Int16(max(-32_768, min(32_767, (sample * 32_768).rounded()))).littleEndian) {
                    bytes.append(contentsOf: $0)
                }
            }
        }
        try bytes.write(to: input)
        let config = folder.appendingPathComponent("asound.conf")
        try """
            </usr/share/alsa/alsa.conf>
            pcm.hearalert_probe_capture {
                type file; slave.pcm null; file "/dev/null"; infile "\(input.path)"; format raw
            }
            pcm.hearalert_probe_playback { type file; slave.pcm null; file "/dev/null"; format raw }
            """.write(to: config, atomically: true, encoding: .utf8)
        setenv("ALSA_CONFIG_PATH", config.path, 1)
        let seconds = ListenConfiguration(playbackDevice: "hearalert_probe_playback").effectivePeriodSeconds
        livePeriod = Int((seconds * 16_000).rounded())
        guard RealtimeProbe.periodSamples.isMultiple(of: livePeriod) else {
            throw ProbeError("live-chain: the listener's \(livePeriod)-sample period does not divide a probe frame")
        }
        capture = try ALSAPCM(device: "hearalert_probe_capture", direction: .capture, sampleRate: 16_000,
                              periodFrames: livePeriod)
        playback = try ALSAPCM(device: "hearalert_probe_playback", direction: .playback, sampleRate: 16_000,
                               periodFrames: livePeriod)
        period = .allocate(capacity: livePeriod)
        let (model, settings) = try loadToneModel()
        let enhancer = try SpeechEnhancer(configuration: EnhancerConfiguration(), sampleRate: 16_000)
        processor = PeriodProcessor(detector: try AlertDetector(model: model, settings: settings),
                                    feed: HeadphoneFeed(ring: playbackRing, wake: nil, enhancer: enhancer))
        period.initialize(repeating: 0)
    }

    deinit {
        period.deallocate()
        try? FileManager.default.removeItem(at: folder)
    }

    func process(frame: Int) {
        for _ in 0..<(RealtimeProbe.periodSamples / livePeriod) { processPeriod() }
    }

    private func processPeriod() {
        do {
            // Capture thread: device → ring.
            let captured = try capture.read(into: period)
            captureRing.write(UnsafeBufferPointer(rebasing: period[0..<captured]))
            // Processing thread: ring → the listener's per-period code (detector, enhancer) → playback ring.
            let count = captureRing.read(into: period)
            try processor.process(UnsafeBufferPointer(rebasing: period[0..<count])) { message in
                if message.isStart { started += 1 }
            }
            // Playback thread: ring → device, a period at a time.
            while playbackRing.availableToRead >= period.count {
                playbackRing.read(into: period)
                played += try playback.write(UnsafeBufferPointer(period))
            }
        } catch {
            failures += 1
        }
    }

    func resetTally() {
        started = 0
        played = 0
    }

    func verify(frames: Int) throws {
        let expectedPlayed = (frames - 1) * RealtimeProbe.periodSamples
        guard failures == 0, started >= frames / framesPerLoop, played >= expectedPlayed else {
            throw ProbeError("live-chain: \(failures) failures, \(started) alerts, \(played) samples played")
        }
    }

    var summary: String {
        "ALSA capture → ring → PeriodProcessor (AlertDetector, SpeechEnhancer) → ring → ALSA playback, in the "
            + "listener's periods"
    }
}
