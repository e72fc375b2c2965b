import Synchronization

/// Where the capture audio breaks (the device was lost), so that the detector restarts its stream at exactly that
/// sample (`AlertDetector.restartStream`): an alert sounding at the loss ends there, promptly, and the audio of the
/// reopened device is judged on its own instead of continuing the audio before the gap.
///
/// The capture thread publishes the ring position (`SPSCRingBuffer.samplesWritten`) when it loses the device.
/// Nothing is written to the ring until the device is reopened, so that position is both where the old audio ends
/// and where the new audio will begin. The processing loop (`CaptureStreamFollower`) looks once per block it
/// reads, and once per idle wait. The ring's release/acquire ordering makes a break visible by the time the
/// first sample after it is read. One atomic: no lock, no allocation, no waiting.
/// Should the device be lost twice while processing lags behind both losses (over half a second behind: the
/// first retry's delay), only the later break is seen, and the detector restarts once, there.
final class CaptureRestarts: Sendable {
    private let latestBreak = Atomic<Int>(0)

    /// Capture thread: the device was lost after ring sample `position` − 1; the next sample starts a new stream.
    func streamBreaks(atSample position: Int) {
        latestBreak.store(position, ordering: .releasing)
    }

    /// The latest published break (0, the start of listening, until a loss).
    var latest: Int { latestBreak.load(ordering: .acquiring) }
}

/// The processing loop's side of `CaptureRestarts`: hands each block read from the capture ring to the detector
/// and restarts the detector's stream where the audio breaks. Allocates nothing.
struct CaptureStreamFollower {
    let restarts: CaptureRestarts
    /// Ring samples delivered so far: the position of the next block's first sample.
    private var position = 0
    /// The last break acted on; 0 is the start of listening, where the detector starts anyway.
    private var handledBreak = 0

    init(restarts: CaptureRestarts) {
        self.restarts = restarts
    }

    /// Feeds `samples`, the next block read from the ring, to `detector`, restarting its stream inside the block
    /// if the audio breaks there; messages (including the alert ends a restart closes) go to `emit` in order.
    mutating func deliver(
        _ samples: UnsafeBufferPointer<Float>, to detector: AlertDetector, emit: (AlertMessage) -> Void
    ) throws {
        let brk = restarts.latest
        let blockStart = position
        position += samples.count
        guard brk > handledBreak, brk < position else {
            try detector.process(samples, emit: emit)
            return
        }
        handledBreak = brk
        let split = max(0, brk - blockStart)
        try detector.process(UnsafeBufferPointer(rebasing: samples[..<split]), emit: emit)
        detector.restartStream(emit: emit)
        try detector.process(UnsafeBufferPointer(rebasing: samples[split...]), emit: emit)
    }

    /// While no audio comes: if the audio broke where the delivered audio ends (the device is lost and has not
    /// come back), restarts the detector now, so an alert sounding at the loss ends without waiting for the
    /// device to return.
    mutating func catchUp(detector: AlertDetector, emit: (AlertMessage) -> Void) {
        let brk = restarts.latest
        guard brk > handledBreak, brk <= position else { return }
        handledBreak = brk
        detector.restartStream(emit: emit)
    }
}
