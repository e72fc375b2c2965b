import Dispatch

/// The processing thread's side of the headphone path: enhances (hop by hop, as the enhancer requires, whatever
/// the capture period) and queues the result for the playback thread. `PeriodProcessor` drives it, live and for
/// files (`FileRun`); package-visible so the real-time probe runs this very code rather than a copy. Buffers are
/// allocated once; `play` allocates nothing.
package final class HeadphoneFeed {
    private let ring: SPSCRingBuffer
    private let wake: DispatchSemaphore?
    private let enhancer: SpeechEnhancer?
    private let delayMeter: HeadphoneDelayMeter?
    private let hopInput: UnsafeMutableBufferPointer<Float>
    private let hopOutput: UnsafeMutableBufferPointer<Float>
    private var filled = 0

    /// - Parameters:
    ///   - ring: the playback ring the audio goes to.
    ///   - wake: signalled after each `play`, so a playback thread waiting for audio wakes; nil when none waits.
    ///   - enhancer: nil plays the microphone unchanged (`--no-enhance`).
    ///   - delayMeter: told of samples the ring had no room for, which shift what is heard (live only).
    package init(ring: SPSCRingBuffer, wake: DispatchSemaphore?, enhancer: SpeechEnhancer?,
                 delayMeter: HeadphoneDelayMeter? = nil) {
        self.ring = ring
        self.wake = wake
        self.enhancer = enhancer
        self.delayMeter = delayMeter
        let hop = enhancer?.hopLength ?? 1
        hopInput = .allocate(capacity: hop)
        hopInput.initialize(repeating: 0)
        hopOutput = .allocate(capacity: hop)
        hopOutput.initialize(repeating: 0)
    }

    deinit {
        hopInput.deallocate()
        hopOutput.deallocate()
    }

    /// Queues `samples` (any count) for playback, enhanced unless there is no enhancer; `alertSounding` keeps
    /// alerts audible from the next hop on. A partial hop waits for the next call.
    package func play(_ samples: UnsafeBufferPointer<Float>, alertSounding: Bool) {
        guard let enhancer else {
            queue(samples)
            wake?.signal()
            return
        }
        enhancer.setAlertActive(alertSounding)
        var taken = 0
        while taken < samples.count {
            let count = min(hopInput.count - filled, samples.count - taken)
            _ = UnsafeMutableBufferPointer(rebasing: hopInput[filled..<(filled + count)])
                .update(fromContentsOf: UnsafeBufferPointer(rebasing: samples[taken..<(taken + count)]))
            filled += count
            taken += count
            if filled == hopInput.count {
                enhancer.process(UnsafeBufferPointer(hopInput), into: hopOutput)
                queue(UnsafeBufferPointer(hopOutput))
                filled = 0
            }
        }
        wake?.signal()
    }

    private func queue(_ samples: UnsafeBufferPointer<Float>) {
        let queued = ring.write(samples)
        if queued < samples.count { delayMeter?.feedDroppedSamples.add(samples.count - queued, ordering: .relaxed) }
    }
}
