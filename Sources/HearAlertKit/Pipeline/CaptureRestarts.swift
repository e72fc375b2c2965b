import Synchronization

/// Where a reopened capture device's audio begins in the capture ring, so that the detector is told at exactly
/// that sample (`AlertDetector.restartStream`): the audio after a lost device does not continue the audio before.
///
/// The capture thread publishes the ring position (`SPSCRingBuffer.samplesWritten`) of each reopening before it
/// writes any of the new audio; the processing loop (`CaptureStreamFollower`) asks, once per block it read,
/// whether a start it has not acted on lies in that block. The ring's own release/acquire ordering makes the
/// start visible by the time its first sample is read. One atomic: no lock, no allocation, no waiting.
/// Should the device be lost and reopened twice while processing lags behind both reopenings (over half a second
/// behind, the first retry's delay), only the later start is seen and the detector restarts once, there.
final class CaptureRestarts: Sendable {
    private let latestStart = Atomic<Int>(0)

    /// Capture thread: the device was reopened and its first sample will be ring sample `position`.
    func deviceReopened(atSample position: Int) {
        latestStart.store(position, ordering: .releasing)
    }

    /// The latest published start (0 until a reopening).
    var latest: Int { latestStart.load(ordering: .acquiring) }
}

/// The processing loop's side of `CaptureRestarts`: hands each block read from the capture ring to the detector,
/// restarting the detector's stream at the first sample of a reopened device's audio. Allocates nothing.
struct CaptureStreamFollower {
    let restarts: CaptureRestarts
    /// Ring samples delivered so far: the position of the next block's first sample.
    private var position = 0
    /// The last start acted on; 0 is the start of listening, where the detector starts anyway.
    private var handledStart = 0

    init(restarts: CaptureRestarts) {
        self.restarts = restarts
    }

    /// Feeds `samples`, the next block read from the ring, to `detector`, with a restart inside it if a new
    /// stream begins there; messages (including the alert ends a restart closes) go to `emit` in order.
    mutating func deliver(
        _ samples: UnsafeBufferPointer<Float>, to detector: AlertDetector, emit: (AlertMessage) -> Void
    ) throws {
        let start = restarts.latest
        let blockStart = position
        position += samples.count
        guard start > handledStart, start < position else {
            try detector.process(samples, emit: emit)
            return
        }
        handledStart = start
        let split = max(0, start - blockStart)
        try detector.process(UnsafeBufferPointer(rebasing: samples[..<split]), emit: emit)
        detector.restartStream(emit: emit)
        try detector.process(UnsafeBufferPointer(rebasing: samples[split...]), emit: emit)
    }
}
