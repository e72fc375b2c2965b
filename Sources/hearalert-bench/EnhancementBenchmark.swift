import CAllocationCounter
import Foundation
import HearAlertKit

/// The speech enhancer on the audio path: time per hop, × real time on one core, and heap allocations counted
/// (by CAllocationCounter's malloc interposition) across many `process` calls with the alert flag toggling; each
/// mode with MCRA, and the low-latency mode with the learned noise estimator (models/noise.safetensors in the
/// working directory, else skipped with a note).
enum EnhancementBenchmark {
    static let sampleRate = 16000

    static func run() throws {
        print("enhancer: one core, \(sampleRate) Hz, noisy input with a tone, alert flag toggled every 0.5 s")
        for mode in EnhancerConfiguration.Mode.allCases {
            try measure(EnhancerConfiguration(mode: mode))
        }
        let noiseModel = "models/noise.safetensors"
        if FileManager.default.fileExists(atPath: noiseModel) {
            try measure(EnhancerConfiguration(mode: .lowLatency, noiseEstimation: .learned(modelPath: noiseModel)))
        } else {
            print("  learned noise estimate: skipped, no \(noiseModel) in the working directory")
        }
    }

    /// CPU time of this thread: on a machine shared with other work, wall-clock time measures the others too.
    private static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
    }

    private static func measure(_ configuration: EnhancerConfiguration) throws {
        // The counter must be seen counting, or a zero below would prove nothing: building allocates.
        let allocationsAtStart = hearalert_allocation_count()
        let enhancer = try SpeechEnhancer(configuration: configuration, sampleRate: sampleRate)
        let allocationsToBuild = hearalert_allocation_count() - allocationsAtStart
        let hop = enhancer.hopLength
        // Ten seconds of input, cycled: white-ish noise from a linear congruential generator plus a 1 kHz tone.
        let signalLength = 10 * sampleRate / hop * hop
        let input = UnsafeMutableBufferPointer<Float>.allocate(capacity: signalLength)
        defer { input.deallocate() }
        var state: UInt32 = 12345
        for index in 0..<signalLength {
            state = state &* 1_664_525 &+ 1_013_904_223
            let noise = Float(Int32(bitPattern: state)) / Float(Int32.max) * 0.1
            input[index] = noise + 0.05 * sin(2 * .pi * 1000 * Float(index) / Float(sampleRate))
        }
        let output = UnsafeMutableBufferPointer<Float>.allocate(capacity: hop)
        defer { output.deallocate() }
        let hopsPerToggle = sampleRate / 2 / hop
        let hopsPerSignal = signalLength / hop

        func process(hops: Int) {
            for index in 0..<hops {
                let position = index % hopsPerSignal
                enhancer.setAlertActive((index / hopsPerToggle) % 2 == 1)
                enhancer.process(UnsafeBufferPointer(rebasing: input[(position * hop)..<((position + 1) * hop)]),
                                 into: output)
            }
        }

        process(hops: hopsPerSignal)  // warm caches and the noise estimate
        let hops = 200_000
        let allocationsBefore = hearalert_allocation_count()
        let cpuStart = threadCPUSeconds()
        let start = ContinuousClock.now
        process(hops: hops)
        let elapsed = ContinuousClock.now - start
        let cpuSeconds = threadCPUSeconds() - cpuStart
        let allocations = hearalert_allocation_count() - allocationsBefore

        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        let perHop = cpuSeconds / Double(hops)
        let wallPerHop = seconds / Double(hops)
        let hopSeconds = Double(hop) / Double(sampleRate)
        print("  \(configuration.mode.rawValue), \(configuration.noiseEstimation.name): " + String(
            format: "hop %d samples (%.1f ms), delay %d samples (%.1f ms): %.2f µs CPU per hop, %.0f× real time "
                + "(wall clock %.2f µs, %.0f×); %llu heap allocations in %d process() calls (%llu while building it)",
            hop, hopSeconds * 1000, enhancer.latencySamples,
            Double(enhancer.latencySamples) / Double(sampleRate) * 1000, perHop * 1e6, hopSeconds / perHop,
            wallPerHop * 1e6, hopSeconds / wallPerHop, allocations, hops, allocationsToBuild))
    }
}
