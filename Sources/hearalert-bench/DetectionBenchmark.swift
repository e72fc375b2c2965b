import Foundation
import HearAlertKit
import Synchronization

/// Detection speed offline (× real time on one core; target ≥ 100×, the budget a wider network trained for real
/// sound may use: models/MODEL_CARD.md) and the live listener's CPU share and processing delay on a
/// real-time-paced ALSA stream.
///
/// `hearalert-bench detection`. The model: HEARALERT_BENCH_MODEL, else models/default.safetensors, else the
/// test fixture's tiny tone model (which flatters the speed; say which one a figure used). For the default
/// architecture with random weights: `.venv/bin/python tools/export.py --demo /tmp/demo.safetensors`.
/// HEARALERT_BENCH_SECONDS (default 600) sets the offline signal's length, HEARALERT_BENCH_LIVE_SECONDS (default
/// 20, 0 skips) each live run's. The live runs need no sound card: a `type file` ALSA PCM reads a FIFO that a
/// thread here fills at exactly real-time pace, as a microphone would.
///
/// Allocation-freedom of the detection path: run the offline part under valgrind at two lengths; the heap's
/// allocation count must not grow with the length of the audio:
///   HEARALERT_BENCH_SECONDS=20 HEARALERT_BENCH_LIVE_SECONDS=0 valgrind .build/release/hearalert-bench detection
///   HEARALERT_BENCH_SECONDS=80 HEARALERT_BENCH_LIVE_SECONDS=0 valgrind .build/release/hearalert-bench detection
enum DetectionBenchmark {
    static let toneModel = "Tests/HearAlertKitTests/Fixtures/detector/tone_model.safetensors"
    static let alertClip = "Tests/HearAlertKitTests/Fixtures/detector/alerts_clip.wav"

    static func run() throws {
        let environment = ProcessInfo.processInfo.environment
        let modelPath = environment["HEARALERT_BENCH_MODEL"]
            ?? (FileManager.default.fileExists(atPath: "models/default.safetensors") ? "models/default.safetensors"
                : toneModel)
        let seconds = Double(environment["HEARALERT_BENCH_SECONDS"] ?? "") ?? 600
        let liveSeconds = Double(environment["HEARALERT_BENCH_LIVE_SECONDS"] ?? "") ?? 20
        let model = try AlertModel(path: modelPath)
        print("== detection: \(model.name) (\(modelPath)), \(model.contextFrames)-frame context, a decision every "
              + "\(model.decisionStep) hops of \(model.featureSpec.hopLength) samples")
        try offline(modelPath: modelPath, seconds: seconds)
        guard liveSeconds > 0 else { return }
        try live(modelPath: modelPath, seconds: liveSeconds, reportLatency: modelPath == toneModel)
        if modelPath != toneModel {
            try live(modelPath: toneModel, seconds: liveSeconds, reportLatency: true)
        }
    }

    /// FileDetector over a WAV file (decoding and resampling included), thread CPU time, best of 3.
    static func offline(modelPath: String, seconds: Double) throws {
        let model = try AlertModel(path: modelPath)
        let detector = FileDetector(model: model, settings: try TrackerSettings(model: model))
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hearalert-bench-\(getpid()).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let writer = try AudioFileWriter(path: path, sampleRate: model.featureSpec.sampleRate)
        try FeatureBenchmark.noise(count: Int(seconds * Double(model.featureSpec.sampleRate))).withUnsafeBufferPointer {
            try writer.write($0)
        }
        try writer.close()
        var best = (cpu: Double.infinity, wall: Double.infinity)
        for _ in 0..<3 {
            let (cpu, wall) = (FeatureBenchmark.now(), FeatureBenchmark.wallNow())
            _ = try detector.detect(path: path)
            best = (min(best.cpu, FeatureBenchmark.now() - cpu), min(best.wall, FeatureBenchmark.wallNow() - wall))
        }
        print(String(format: "  offline: %.0f s of audio in %.3f s thread CPU (%.3f s wall): %.0f× real time on one "
                     + "core (target ≥ 100×)", seconds, best.cpu, best.wall, seconds / best.cpu))
    }

    /// A LiveListener on a FIFO-backed ALSA capture device fed at real-time pace; CPU share from getrusage.
    static func live(modelPath: String, seconds: Double, reportLatency: Bool) throws {
        let model = try AlertModel(path: modelPath)
        let sampleRate = model.featureSpec.sampleRate
        let clip = try AudioFile.readAll(path: alertClip, sampleRate: sampleRate)
        let total = Int(seconds * Double(sampleRate))
        let signal = (0..<total).map { clip[$0 % clip.count] }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hearalert-bench-alsa-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fifo = folder.appendingPathComponent("capture.fifo").path
        let config = folder.appendingPathComponent("asound.conf").path
        mkfifo(fifo, 0o600)
        try """
            </usr/share/alsa/alsa.conf>
            pcm.hearalert_bench_capture { type file; slave.pcm null; file "/dev/null"; infile "\(fifo)"; format raw }
            """.write(toFile: config, atomically: true, encoding: .utf8)
        setenv("ALSA_CONFIG_PATH", config, 1)

        let feeder = PacedFeeder(samples: signal, sampleRate: sampleRate, fifo: fifo)
        feeder.start()
        let arrivals = ArrivalSink()
        let listener = LiveListener(configuration: ListenConfiguration(captureDevice: "hearalert_bench_capture",
                                                                       maxDuration: seconds),
                                    diagnostics: Diagnostics { _ in })
        let detector = try AlertDetector(model: model, settings: try TrackerSettings(model: model))
        let before = usage()
        let wallStart = FeatureBenchmark.wallNow()
        try listener.run(detector: detector, dispatcher: AlertDispatcher(sinks: [arrivals], source: "bench"))
        let wall = FeatureBenchmark.wallNow() - wallStart
        let cpu = usage() - before - feeder.cpuSeconds
        feeder.finish()
        print(String(format: "  live (%@): %.1f s of paced audio, %.3f s CPU in %.1f s: %.2f %% of one core",
                     model.name, seconds, cpu, wall, 100 * cpu / wall))
        guard reportLatency else { return }
        // Wall-clock delay from the moment the deciding sample entered ALSA to the message reaching a sink: the
        // cost of the live path on top of the model's own (stream-time) detection latency.
        let delays = arrivals.starts.map { arrival in
            arrival.wall - feeder.wallTimeWritten(sampleAt: arrival.detectedAt)
        }.sorted()
        let latencies = arrivals.starts.map(\.latency).sorted()
        if delays.isEmpty {
            print("  (no alerts detected: no latency figures)")
        } else {
            print(String(format: "  live path delay (sample in ALSA → message at the sink): median %.1f ms, max %.1f ms "
                         + "over %d alert starts", 1e3 * delays[delays.count / 2], 1e3 * (delays.last ?? 0), delays.count))
            print(String(format: "  stream-time onset latency of the tone model on the fixture clip: median %.0f ms",
                         1e3 * latencies[latencies.count / 2]))
        }
    }

    /// user + system CPU seconds of the whole process.
    static func usage() -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
            + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6
    }
}

/// Writes 16-bit samples into the capture FIFO in 10 ms chunks against absolute deadlines: a microphone's pace.
private final class PacedFeeder: @unchecked Sendable {
    // @unchecked: `startWall` and `cpuSeconds` are written by the feeder thread before it signals `done`.
    private let data: Data
    private let sampleRate: Int
    private let fifo: String
    private let done = DispatchSemaphore(value: 0)
    private let release = DispatchSemaphore(value: 0)
    private(set) var startWall = 0.0
    private(set) var cpuSeconds = 0.0

    init(samples: [Float], sampleRate: Int, fifo: String) {
        var data = Data(capacity: samples.count * 2)
        for sample in samples {
            withUnsafeBytes(of: Int16(max(-32768, min(32767, (sample * 32768).rounded()))).littleEndian) {
                data.append(contentsOf: $0)
            }
        }
        self.data = data
        self.sampleRate = sampleRate
        self.fifo = fifo
    }

    func start() {
        Thread { [self] in
            guard let handle = FileHandle(forWritingAtPath: fifo) else { return }
            let chunk = sampleRate / 100 * 2
            let cpuStart = FeatureBenchmark.now()
            startWall = FeatureBenchmark.wallNow()
            var offset = 0
            while offset < data.count {
                try? handle.write(contentsOf: data[offset..<min(data.count, offset + chunk)])
                offset += chunk
                let due = startWall + Double(offset / 2) / Double(sampleRate)
                let wait = due - FeatureBenchmark.wallNow()
                if wait > 0 { usleep(UInt32(wait * 1e6)) }
            }
            cpuSeconds = FeatureBenchmark.now() - cpuStart
            done.signal()
            release.wait()  // keep the FIFO open until the listener has stopped (EOF would repeat the last block)
            try? handle.close()
        }.start()
    }

    /// When the chunk holding the sample at `time` (stream seconds) went into the FIFO: chunk k is written at
    /// its deadline, `startWall + k · chunk duration`.
    func wallTimeWritten(sampleAt time: Double) -> Double {
        let chunkFrames = Double(sampleRate / 100)
        let lastSample = (time * Double(sampleRate)).rounded() - 1
        return startWall + (lastSample / chunkFrames).rounded(.down) * chunkFrames / Double(sampleRate)
    }

    /// Waits for the last chunk, then closes the FIFO.
    func finish() {
        done.wait()
        release.signal()
    }
}

/// Records when each alert start reached the sinks.
private final class ArrivalSink: AlertSink {
    struct Start {
        var wall: Double
        var detectedAt: Double
        var latency: Double
    }

    private let lock = NSLock()
    private var recorded: [Start] = []

    var starts: [Start] { lock.withLock { recorded } }

    func deliver(_ report: AlertReport) {
        guard case .started(_, _, let onset, let detectedAt) = report.message else { return }
        let start = Start(wall: FeatureBenchmark.wallNow(), detectedAt: detectedAt, latency: detectedAt - onset)
        lock.withLock { recorded.append(start) }
    }

    func finish() {}
}
