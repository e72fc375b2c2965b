import Foundation
import HearAlertKit

/// Feature extraction speed (× real time, one core) and constant memory while streaming a long file.
///
/// `hearalert-bench features` — HEARALERT_BENCH_SECONDS (default 600) sets the throughput signal's length and
/// HEARALERT_BENCH_HOURS (default 10) the long file's. Allocation-freedom per frame: run it under valgrind with
/// two signal lengths and compare the heap's allocation counts, which must not grow with the number of frames:
///   HEARALERT_BENCH_SECONDS=5 HEARALERT_BENCH_HOURS=0.002 valgrind .build/release/hearalert-bench features
///   HEARALERT_BENCH_SECONDS=20 HEARALERT_BENCH_HOURS=0.002 valgrind .build/release/hearalert-bench features
enum FeatureBenchmark {
    static func run() throws {
        let environment = ProcessInfo.processInfo.environment
        let seconds = Double(environment["HEARALERT_BENCH_SECONDS"] ?? "") ?? 600
        print(String(format: "== features: STFT + log-Mel throughput on one core, thread CPU time, best of 3 runs "
                     + "over %.0f s of noise", seconds))
        let issueSpec = FeatureSpec(winLength: 512, hopLength: 160)
        let specs: [(String, FeatureSpec)] = [
            ("16 kHz, n_fft 512, hop 160, 64 Mel (issue #2 target ≥ 2000×)", issueSpec),
            ("default spec: 16 kHz, n_fft 512, hop 256, 64 Mel", FeatureSpec()),
            ("log-power: 16 kHz, n_fft 512, win 400 Hamming, hop 256, 257 bins",
             FeatureSpec(winLength: 400, window: .hamming, kind: .logPower)),
        ]
        let noise = Self.noise(count: Int(seconds * 16_000))
        for (name, spec) in specs {
            let speed = try Self.realTimeFactor(spec: spec, samples: noise, seconds: seconds)
            print(String(format: "  %8.0f× real time  %@", speed, name))
        }
        print(String(format: "  %8.0f× real time  StreamingSTFT analysis + synthesis, n_fft 512, hop 128, sqrt-Hann",
                     try Self.stftRealTimeFactor(samples: noise, seconds: seconds)))

        let hours = Double(environment["HEARALERT_BENCH_HOURS"] ?? "") ?? 10
        try streamLongFile(hours: hours)
    }

    static func noise(count: Int) -> [Float] {
        var state: UInt32 = 12_345
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(Int32(bitPattern: state)) / Float(Int32.max) * 0.3
        }
    }

    /// CPU time of this thread: "× real time on one core" even when other processes share the machine.
    static func now() -> Double { clock(CLOCK_THREAD_CPUTIME_ID) }

    /// Wall-clock time, printed beside CPU time: the two differ when the machine is busy.
    static func wallNow() -> Double { clock(CLOCK_MONOTONIC) }

    static func clock(_ id: clockid_t) -> Double {
        var time = timespec()
        clock_gettime(id, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
    }

    static func realTimeFactor(spec: FeatureSpec, samples: [Float], seconds: Double) throws -> Double {
        let extractor = try FeatureExtractor(spec: spec)
        var best = Double.infinity
        var checksum: Float = 0
        for _ in 0..<3 {
            extractor.reset()
            let start = now()
            samples.withUnsafeBufferPointer { all in
                for offset in stride(from: 0, to: all.count, by: 1_024) {
                    let block = UnsafeBufferPointer(rebasing: all[offset..<min(offset + 1_024, all.count)])
                    extractor.process(block) { checksum += $0[0] }
                }
            }
            best = min(best, now() - start)
        }
        if !checksum.isFinite { print("  (non-finite features!)") }
        return seconds / best
    }

    static func stftRealTimeFactor(samples: [Float], seconds: Double) throws -> Double {
        let window = WindowFunction.make(.sqrtHann, length: 512)
        let stft = try StreamingSTFT(fftSize: 512, hopLength: 128, analysisWindow: window, synthesisWindow: window)
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: 128)
        defer { output.deallocate() }
        var best = Double.infinity
        for _ in 0..<3 {
            let start = now()
            samples.withUnsafeBufferPointer { all in
                for offset in stride(from: 0, to: all.count - 127, by: 128) {
                    stft.analyze(UnsafeBufferPointer(rebasing: all[offset..<(offset + 128)]))
                    stft.synthesize(into: output)
                }
            }
            best = min(best, now() - start)
        }
        return seconds / best
    }

    /// Writes a long 16 kHz file block by block, then streams it through reader and extractor, printing
    /// resident memory as it goes: constant memory means the peak stays flat however long the file.
    static func streamLongFile(hours: Double) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("hearalert-bench-\(getpid()).wav").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let sampleRate = 16_000
        let total = Int(hours * 3_600 * Double(sampleRate))
        print(String(format: "== features: streaming a %.1f-hour file (%d MB, 16-bit 16 kHz WAV) in constant memory",
                     hours, total * 2 / 1_000_000))
        let block = noise(count: 160_000)
        let writer = try AudioFileWriter(path: path, sampleRate: sampleRate)
        var written = 0
        try block.withUnsafeBufferPointer { block in
            while written < total {
                let count = min(block.count, total - written)
                try writer.write(UnsafeBufferPointer(rebasing: block[0..<count]))
                written += count
            }
        }
        try writer.close()

        Memory.resetPeak()
        let start = now()
        let wallStart = wallNow()
        let reader = try AudioFileReader(path: path, sampleRate: sampleRate)
        let extractor = try FeatureExtractor(spec: FeatureSpec())
        var frames = 0
        var checksum: Float = 0
        var nextReport = 0.1
        try extractor.process(reader) { rows in
            frames += rows.count / extractor.spec.binCount
            checksum += rows[0]
            let done = Double(frames * extractor.spec.hopLength) / Double(total)
            if done >= nextReport {
                print(String(format: "  %3.0f%%  resident %6.1f MB", done * 100, Memory.residentMegabytes()))
                nextReport += 0.3
            }
        }
        let elapsed = now() - start
        let wall = wallNow() - wallStart
        print(String(format: "  %d frames in %.1f s CPU, %.1f s wall (%.0f× real time incl. decoding)",
                     frames, elapsed, wall, hours * 3_600 / elapsed))
        print(String(format: "  peak resident %.1f MB%@", Memory.peakMegabytes(),
                     checksum.isFinite ? "" : " (non-finite features!)"))
    }
}

/// Resident memory from /proc/self/status (Linux).
enum Memory {
    static func field(_ name: String) -> Double {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") })
        else { return .nan }
        let kilobytes = line.split(separator: " ").compactMap { Double($0) }.first ?? .nan
        return kilobytes / 1_024
    }

    static func residentMegabytes() -> Double { field("VmRSS") }
    static func peakMegabytes() -> Double { field("VmHWM") }

    /// Writing 5 to clear_refs resets the peak (VmHWM) to the current resident size (Linux ≥ 4.0).
    static func resetPeak() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }
}
