import Foundation
import Synchronization

/// Measures, while `listen --output` runs, the delay from microphone to ear it actually has: from the moment a
/// sample reaches the capture device's converter to the moment the playback device's converter plays it.
///
/// Each sample is followed by its position in the capture ring (the stream the processing thread reads):
/// - The capture thread, after each read, asks the device how many frames it holds that were not read yet
///   (`snd_pcm_delay`) and stores when position 0 was at the microphone: now − (ring position + those frames)
///   / rate. So the sample at the microphone at time t has position (t − that instant) × rate.
/// - The playback thread, after each write, asks the device how many frames will play before the frame just
///   written (`snd_pcm_delay`): the frame heard now is the one that many frames back from the playback ring's
///   read position, which is enhancer output position; the enhancer's output lags its input by
///   `latencySamples`, and samples the headphone feed could not queue shift the rest.
/// The delay at that moment is the difference of the two positions, divided by the rate: it includes the
/// capture period, the capture ring, the hop being collected, the enhancer's algorithmic delay, the playback ring
/// and the device's queue. It leaves out the converters themselves (under a millisecond on most cards) and it
/// reads up to one period high on cards whose pointer moves a period at a time, since the frame being played
/// counts as not yet heard.
///
/// The device threads only store integers in atomics here; the reporter thread puts them into words.
package final class HeadphoneDelayMeter: Sendable {
    private let sampleRate: Int
    private let enhancerLatency: Int
    /// CLOCK_MONOTONIC nanoseconds at which capture-ring position 0 was at the microphone; Int.min: not yet.
    private let captureOrigin = Atomic<Int>(Int.min)
    /// Samples the headphone feed could not queue (the playback ring was full): positions after them shift.
    let feedDroppedSamples = Atomic<Int>(0)
    private let count = Atomic<Int>(0)
    private let totalMicroseconds = Atomic<Int>(0)
    private let smallestMicroseconds = Atomic<Int>(Int.max)
    private let largestMicroseconds = Atomic<Int>(Int.min)

    /// `enhancerLatency`: the enhancer's `latencySamples`, 0 when the microphone plays unchanged.
    init(sampleRate: Int, enhancerLatency: Int) {
        self.sampleRate = sampleRate
        self.enhancerLatency = enhancerLatency
    }

    private static func now() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return time.tv_sec * 1_000_000_000 + time.tv_nsec
    }

    private func nanoseconds(samples: Int) -> Int { samples * 1_000_000_000 / sampleRate }

    /// Capture thread, after queueing a read: `ringPosition` is the capture ring's `samplesWritten`,
    /// `deviceFrames` the capture device's `delayFrames()`.
    func captured(ringPosition: Int, deviceFrames: Int?) {
        guard let deviceFrames else { return }
        captureOrigin.store(Self.now() - nanoseconds(samples: ringPosition + deviceFrames), ordering: .relaxed)
    }

    /// Playback thread, after a write: `ringPosition` is the playback ring's `samplesRead`, `deviceFrames` the
    /// playback device's `delayFrames()`.
    func played(ringPosition: Int, deviceFrames: Int?) {
        let origin = captureOrigin.load(ordering: .relaxed)
        guard let deviceFrames, origin != Int.min else { return }
        let heard = ringPosition - deviceFrames - enhancerLatency + feedDroppedSamples.load(ordering: .relaxed)
        let microseconds = (Self.now() - origin - nanoseconds(samples: heard)) / 1000
        count.add(1, ordering: .relaxed)
        totalMicroseconds.add(microseconds, ordering: .relaxed)
        if microseconds < smallestMicroseconds.load(ordering: .relaxed) {
            smallestMicroseconds.store(microseconds, ordering: .relaxed)
        }
        if microseconds > largestMicroseconds.load(ordering: .relaxed) {
            largestMicroseconds.store(microseconds, ordering: .relaxed)
        }
    }

    /// The delay over the run so far in words, or nil before any was measured.
    var summary: String? {
        let measured = count.load(ordering: .relaxed)
        guard measured > 0 else { return nil }
        func milliseconds(_ microseconds: Int) -> String { String(format: "%.1f", Double(microseconds) / 1000) }
        let mean = totalMicroseconds.load(ordering: .relaxed) / measured
        let enhancer = enhancerLatency > 0
            ? ", of which \(milliseconds(1_000_000 * enhancerLatency / sampleRate)) ms the enhancer's own" : ""
        return "headphone delay, microphone to ear: \(milliseconds(mean)) ms on average "
            + "(\(milliseconds(smallestMicroseconds.load(ordering: .relaxed)))–"
            + "\(milliseconds(largestMicroseconds.load(ordering: .relaxed))) ms over \(measured) writes\(enhancer))"
    }
}
