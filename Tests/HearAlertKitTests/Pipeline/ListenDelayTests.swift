import Foundation
import Testing

/// Microphone-to-ear delay of `hearalert listen --output`, measured through the real ALSA API on devices that
/// keep time (`ClockedALSADevices`): clicks go into the microphone, and each one's delay is when it reached the
/// headphones minus when it was at the microphone, both on the devices' own clock, not on anything HearAlert says.
@Suite(.serialized) struct ListenDelayTests {
    static let rate = 16_000
    /// A click every 250 ms from 0.5 s on, in 4.5 s of silence: far enough apart that each is found alone.
    static let clickIndices = Array(stride(from: 8_000, to: 68_000, by: 4_000))
    static let clicks: [Float] = {
        var samples = [Float](repeating: 0, count: 72_000)
        for index in clickIndices { samples[index] = 0.5 }
        return samples
    }()

    /// Delays in milliseconds of the clicks that were heard (a click lost in an underrun is left out).
    struct Measurement {
        let delays: [Double]
        let stderr: String
        var median: Double { delays.sorted()[delays.count / 2] }
        /// The clicks heard later than `bound` ms. One is a stall of the shared machine that playback recovered
        /// from (a single 9.6-ms click among 5.3–6.0-ms ones, measured); a delay that stays raises every later
        /// click, and the median.
        func over(_ bound: Double) -> [Double] { delays.filter { $0 > bound } }
    }

    static func measure(_ arguments: [String]) throws -> Measurement {
        let devices = try ClockedALSADevices(input: clicks)
        defer { devices.remove() }
        let process = hearAlertProcess(["listen", "--device", "hearalert_clock_capture",
                                        "--output", "hearalert_clock_playback", "--duration", "4.4",
                                        "--model", ListenEndToEndTests.model] + arguments)
        process.environment?["ALSA_CONFIG_PATH"] = devices.configPath
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let text = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "stderr: \(text)")
        let heard = try devices.heard()
        let offset = Double(try devices.playbackStartsAfterCapture()) / 1e9
        var delays: [Double] = []
        for index in clickIndices {
            // The click is heard at output index j = index + delay·rate - offset·rate; look 100 ms on from zero delay.
            let from = index - Int((offset * Double(rate)).rounded())
            guard from >= 0, from + rate / 10 <= heard.count else { continue }
            let window = heard[from..<(from + rate / 10)]
            guard let peak = window.indices.max(by: { abs(heard[$0]) < abs(heard[$1]) }), abs(heard[peak]) > 0.1 else {
                continue
            }
            delays.append(Double(peak - from) / Double(rate) * 1000)
        }
        return Measurement(delays: delays, stderr: text)
    }

    /// The listener's own figures from its closing line: mean, smallest and largest, in milliseconds.
    static func reportedDelay(_ stderr: String) -> (mean: Double, smallest: Double, largest: Double)? {
        guard let range = stderr.range(of: "headphone delay, microphone to ear: ") else { return nil }
        let numbers = stderr[range.upperBound...].prefix { $0 != "\n" }
            .split { !($0.isNumber || $0 == ".") }.compactMap { Double($0) }
        guard numbers.count >= 3 else { return nil }
        return (numbers[0], numbers[1], numbers[2])
    }

    /// Playback underruns over the run: the first is told alone, later ones summed up ("…: N in the last …").
    static func underruns(_ stderr: String) -> Int {
        stderr.split(separator: "\n").reduce(0) { total, line in
            guard line.contains("playback underrun") else { return total }
            guard let range = line.range(of: "repaired: ") else { return total + 1 }
            return total + (Int(line[range.upperBound...].prefix { $0.isNumber }) ?? 1)
        }
    }

    /// A short delay bought with underruns would be worse than a longer one: each is a gap in what the person
    /// hears. Alone on a quiet machine a run underruns at most once, as playback starts; on the shared 2-core
    /// machine with its host busy, up to 43 times (measured with nothing else running in it). A playback queue
    /// capped too tightly underran 74–180 times in the 2200 periods of a run. The bound sits between the two: it
    /// catches that regression, not load.
    static func expectFewUnderruns(_ measurement: Measurement) {
        #expect(underruns(measurement.stderr) <= 60, "stderr: \(measurement.stderr)")
    }

    /// The listener's own figures must agree with the devices' clocks. It measures at every write and may read
    /// up to one 2 ms period high (it counts the period being played as not yet heard); the clicks sample the
    /// delay every 250 ms. So each click lies within the listener's range (less that period), and the clicks'
    /// median within a period of its mean.
    static func expectReportAgrees(_ measurement: Measurement) {
        let reported = reportedDelay(measurement.stderr)
        print("clicks heard after (ms): \(measurement.delays); listener says: \(reported.map { "\($0)" } ?? "nothing")")
        #expect(reported != nil, "stderr: \(measurement.stderr)")
        guard let reported else { return }
        let clicks = "reported \(reported) ms, measured \(measurement.delays)"
        #expect(measurement.delays.allSatisfy { $0 >= reported.smallest - 2.5 && $0 <= reported.largest + 0.5 },
                "\(clicks)")
        #expect(abs(measurement.median - reported.mean) <= 2.5, "\(clicks)")
    }

    /// Unenhanced: a capture period (2 ms) and at most two periods queued ahead of it for playback. Before the
    /// playback queue was capped, a stall left up to 8 ms more for good (10.3 ms measured here).
    /// Measured 4.3–6.1 ms alone and up to 7.25 ms beside a training run; the bound is 8 ms so that a busier
    /// machine does not fail it while the regression (10.3 ms, every click after the stall) still does. One click
    /// over it is a stall playback recovered from (`Measurement.over`); the target is what the person hears
    /// throughout, and `hearalert listen` prints the range it measured.
    @Test func unenhancedHeadphonesAreWithinEightMilliseconds() throws {
        let measurement = try Self.measure(["--no-enhance"])
        #expect(measurement.delays.count >= Self.clickIndices.count / 2, "stderr: \(measurement.stderr)")
        #expect(measurement.median <= 8 && measurement.over(8).count <= 1, "measured \(measurement.delays) ms")
        Self.expectReportAgrees(measurement)
        Self.expectFewUnderruns(measurement)
    }

    /// Issue #20's target: with the enhancer, the clicks from microphone to ear within 10 ms, all but a single
    /// stall (the low-latency mode with its 4 ms hop measured 6.4–8.0 ms, one run 10.7 ms at its largest).
    @Test func enhancedHeadphonesAreWithinTenMilliseconds() throws {
        let measurement = try Self.measure([])
        #expect(measurement.delays.count >= Self.clickIndices.count / 2, "stderr: \(measurement.stderr)")
        #expect(measurement.median <= 10 && measurement.over(10).count <= 1, "measured \(measurement.delays) ms")
        Self.expectReportAgrees(measurement)
        Self.expectFewUnderruns(measurement)
    }
}
