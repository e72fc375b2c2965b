import Synchronization

/// Where the capture audio breaks (the device was lost), so that the detector restarts its stream at exactly that
/// sample (`AlertDetector.restartStream`): an alert sounding at the loss ends there, promptly, and the audio of the
/// reopened device is judged on its own instead of continuing the audio before the gap.
///
/// The capture thread publishes the ring position (`SPSCRingBuffer.samplesWritten`) when it loses the device.
/// Nothing is written to the ring until the device is reopened, so that position is both where the old audio ends
/// and where the new audio will begin. The processing loop (`CaptureStreamFollower`) takes the breaks in order, one
/// restart each, as the audio it reads reaches them, so a device lost twice while the loop lags behind both losses
/// restarts the detector twice, each time at its own sample.
///
/// The breaks wait in a fixed queue of `capacity` positions between exactly one publishing thread (capture) and one
/// taking thread (processing), ordered by release/acquire atomics as `SPSCRingBuffer` is: no lock, no allocation, no
/// waiting on either side. Losses are at least half a second apart (the first retry's delay), so a full queue means
/// the loop is many seconds behind; breaks published then are coalesced into the latest one (a single restart at
/// the latest break, where the newest audio begins) and counted in `coalescedBreaks`, never blocking the capture
/// thread. Breaks the queue held before it filled still restart the detector each at its own sample.
public final class CaptureRestarts: @unchecked Sendable {
    // @unchecked: `slots` is shared, but a slot is only written by the capture thread while it lies outside
    // [taken, queued) and only read by the processing loop while it lies inside; the atomics order the hand-over.

    /// Breaks the queue holds before later ones are coalesced.
    public static let capacity = 16
    private static let mask = capacity - 1
    /// The empty value of `overflow`; positions are never negative.
    private static let noBreak = -1

    private let slots: UnsafeMutablePointer<Int>
    /// Breaks ever queued; written by the capture thread only.
    private let queued = Atomic<Int>(0)
    /// Breaks ever taken from the queue; written by the processing loop only.
    private let taken = Atomic<Int>(0)
    /// A break published while the queue was full (or while an earlier such break was still waiting), or `noBreak`.
    /// It follows every queued break, and nothing is queued while it waits, so taking it last keeps the order.
    private let overflow = Atomic<Int>(CaptureRestarts.noBreak)
    /// The last position published; capture thread only (an atomic only so that the class needs no lock).
    private let lastPublished = Atomic<Int>(0)
    private let coalesced = Atomic<Int>(0)

    /// Allocates the whole queue now, so neither side ever allocates later.
    public init() {
        slots = .allocate(capacity: Self.capacity)
        slots.initialize(repeating: 0, count: Self.capacity)
    }

    deinit {
        slots.deallocate()
    }

    /// Capture thread: the device was lost after ring sample `position` − 1; the next sample starts a new stream.
    /// A position not after the last one published (the start of listening, 0, or the same loss again before any
    /// new audio) is no new break and is ignored.
    public func streamBreaks(atSample position: Int) {
        guard position > lastPublished.load(ordering: .relaxed) else { return }
        lastPublished.store(position, ordering: .relaxed)
        let end = queued.load(ordering: .relaxed)
        if overflow.load(ordering: .acquiring) == Self.noBreak
            && end - taken.load(ordering: .acquiring) < Self.capacity {
            slots[end & Self.mask] = position
            queued.store(end + 1, ordering: .releasing)
        } else if overflow.exchange(position, ordering: .acquiringAndReleasing) != Self.noBreak {
            coalesced.add(1, ordering: .relaxed)
        }
    }

    /// Breaks that were dropped in favour of a later one because the queue was full: each is a restart that did
    /// not happen at its own sample (the audio between it and the later break was judged as one stream).
    public var coalescedBreaks: Int { coalesced.load(ordering: .relaxed) }

    /// Processing loop only: removes and returns the oldest waiting break if it lies before ring sample `limit`;
    /// nil if there is none (later ones wait for the audio that reaches them).
    func takeBreak(before limit: Int) -> Int? {
        while true {
            let first = taken.load(ordering: .relaxed)
            if queued.load(ordering: .acquiring) > first {
                let position = slots[first & Self.mask]
                guard position < limit else { return nil }
                taken.store(first + 1, ordering: .releasing)
                return position
            }
            let pending = overflow.load(ordering: .acquiring)
            guard pending != Self.noBreak, pending < limit else { return nil }
            // Queued before `pending` was published: those come first.
            if queued.load(ordering: .acquiring) > first { continue }
            // Fails only when the capture thread replaced `pending` with a later break meanwhile; look again.
            if overflow.compareExchange(expected: pending, desired: Self.noBreak,
                                        ordering: .acquiringAndReleasing).exchanged {
                return pending
            }
        }
    }
}

/// The processing loop's side of `CaptureRestarts`: hands each block read from the capture ring to the detector
/// and restarts the detector's stream where the audio breaks, once per break, in order. Allocates nothing.
public struct CaptureStreamFollower {
    let restarts: CaptureRestarts
    /// Ring samples delivered so far: the position of the next block's first sample.
    private var position = 0

    /// Follows the breaks `restarts` receives from the capture thread filling the ring this loop reads.
    public init(restarts: CaptureRestarts) {
        self.restarts = restarts
    }

    /// Feeds `samples`, the next block read from the ring, to `detector`, restarting its stream inside the block
    /// wherever the audio breaks there; messages (including the alert ends a restart closes) go to `emit` in order.
    public mutating func deliver(
        _ samples: UnsafeBufferPointer<Float>, to detector: AlertDetector, emit: (AlertMessage) -> Void
    ) throws {
        let blockStart = position
        position += samples.count
        var delivered = 0
        while let brk = restarts.takeBreak(before: position) {
            let split = max(delivered, brk - blockStart)
            try detector.process(UnsafeBufferPointer(rebasing: samples[delivered..<split]), emit: emit)
            delivered = split
            detector.restartStream(emit: emit)
        }
        try detector.process(UnsafeBufferPointer(rebasing: samples[delivered...]), emit: emit)
    }

    /// While no audio comes: if the audio broke where the delivered audio ends (the device is lost and has not
    /// come back), restarts the detector now, so an alert sounding at the loss ends without waiting for the
    /// device to return.
    public mutating func catchUp(detector: AlertDetector, emit: (AlertMessage) -> Void) {
        while restarts.takeBreak(before: position + 1) != nil {
            detector.restartStream(emit: emit)
        }
    }
}
