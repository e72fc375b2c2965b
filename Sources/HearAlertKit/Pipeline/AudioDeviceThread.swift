import Dispatch
import Foundation
import Synchronization

/// A thread that owns one ALSA device and moves audio between it and a ring: capture fills the ring, playback
/// drains it. It never waits on anything but the device (and, for playback, the ring), and it survives the
/// device: an overrun or underrun is repaired in place, a lost device is reported and reopened with backoff
/// (0.5 s doubling to 10 s) until the stream stops. What happens is only counted (`DeviceEvents`); the reporter
/// thread puts it into words, so a stalled standard error never holds up audio.
final class AudioDeviceThread: Sendable {
    let ring: SPSCRingBuffer
    /// Capture: signalled after each period is queued. Playback: waited on for the next period.
    let ringSignal = DispatchSemaphore(value: 0)
    /// Capture: where the audio in the ring breaks because the device was lost (a new stream for the detector).
    /// Kept by `DeviceEvents`, so the reporter, made before this thread, can say when breaks were coalesced.
    var restarts: CaptureRestarts { events.restarts }

    private let device: String
    private let direction: ALSAPCM.Direction
    private let sampleRate: Int
    private let periodFrames: Int
    private let stopRequested: @Sendable () -> Bool
    private let events: DeviceEvents
    private let realtimePriority: Int32?
    private let delayMeter: HeadphoneDelayMeter?
    private let queueLimit: Int
    private let firstOpen = Mutex<Result<String, ALSAError>?>(nil)
    private let opened = DispatchSemaphore(value: 0)

    init(device: String, direction: ALSAPCM.Direction, sampleRate: Int, periodFrames: Int, ringCapacity: Int,
         events: DeviceEvents, realtimePriority: Int32?, delayMeter: HeadphoneDelayMeter? = nil,
         queueLimit: Int = .max, stopRequested: @escaping @Sendable () -> Bool) {
        self.device = device
        self.direction = direction
        self.sampleRate = sampleRate
        self.periodFrames = periodFrames
        self.events = events
        self.realtimePriority = realtimePriority
        self.delayMeter = delayMeter
        self.queueLimit = queueLimit
        self.stopRequested = stopRequested
        ring = SPSCRingBuffer(minimumCapacity: ringCapacity)
    }

    private var role: String { direction == .capture ? "capture" : "playback" }

    /// Starts the thread and waits until the device has opened once; a device that cannot be opened at all (a
    /// wrong name) is an error for the caller, while one lost later is retried in the background.
    /// Returns the ALSA name actually opened.
    func start() throws(ALSAError) -> String {
        let thread = Thread { [self] in run() }
        thread.name = "hearalert-\(role)"
        thread.start()
        opened.wait()
        return try firstOpen.withLock { $0! }.get()
    }

    private func run() {
        if let realtimePriority { RealtimeScheduling.requestForCurrentThread(priority: realtimePriority) }
        let scratch = UnsafeMutableBufferPointer<Float>.allocate(capacity: periodFrames)
        scratch.initialize(repeating: 0)
        defer { scratch.deallocate() }
        var pcm: ALSAPCM?
        var backoff = 0.5
        var recovering = false
        var framesSinceOpen = 0
        var countedXruns = 0
        while !stopRequested() {
            guard let stream = pcm else {
                do {
                    let stream = try ALSAPCM(device: device, direction: direction, sampleRate: sampleRate,
                                             periodFrames: periodFrames)
                    if firstOpen.withLock({ $0 == nil }) {
                        firstOpen.withLock { $0 = .success(stream.device) }
                        opened.signal()
                    }
                    pcm = stream
                    countedXruns = 0
                } catch {
                    if firstOpen.withLock({ $0 == nil }) {
                        firstOpen.withLock { $0 = .failure(error) }
                        opened.signal()
                        return
                    }
                    waitBeforeRetry(&backoff)
                }
                continue
            }
            do {
                framesSinceOpen += try transferOnePeriod(stream, scratch)
                // Only a second of audio flowing proves the device is back; reopening alone may fail again at once.
                if recovering && framesSinceOpen >= sampleRate {
                    events.recoveries.add(1, ordering: .relaxed)
                    recovering = false
                    backoff = 0.5
                }
            } catch {
                // Nothing more is queued until the device is back, so this is also where its new audio begins.
                if direction == .capture { restarts.streamBreaks(atSample: ring.samplesWritten) }
                events.recordLoss(error, retryIn: backoff)
                pcm = nil
                recovering = true
                framesSinceOpen = 0
                waitBeforeRetry(&backoff)
            }
            if stream.recoveredXruns != countedXruns {
                events.xruns.add(stream.recoveredXruns - countedXruns, ordering: .relaxed)
                countedXruns = stream.recoveredXruns
            }
        }
    }

    /// Sleeps `backoff` seconds (in short steps, so a stop request is honoured within 0.1 s), then doubles it up
    /// to 10 s: a device that keeps failing is retried ever less often, never given up on.
    private func waitBeforeRetry(_ backoff: inout Double) {
        let until = Date().addingTimeInterval(backoff)
        while !stopRequested() && Date() < until { usleep(100_000) }
        backoff = min(backoff * 2, 10)
    }

    /// Moves up to one period between device and ring; returns the frames the device took or gave.
    private func transferOnePeriod(_ stream: ALSAPCM, _ scratch: UnsafeMutableBufferPointer<Float>) throws(ALSAError) -> Int {
        switch direction {
        case .capture:
            let count = try stream.read(into: scratch)
            let queued = ring.write(UnsafeBufferPointer(rebasing: scratch[0..<count]))
            if queued < count {
                events.droppedSamples.add(count - queued, ordering: .relaxed)
                events.overflows.add(1, ordering: .relaxed)
            }
            delayMeter?.captured(ringPosition: ring.samplesWritten, deviceFrames: stream.delayFrames())
            ringSignal.signal()
            return count
        case .playback:
            guard ring.availableToRead >= periodFrames else {
                _ = ringSignal.wait(timeout: .now() + .milliseconds(50))
                return 0
            }
            // Audio waiting here or in the device is delay in the person's ears, and a stall (an underrun, a late
            // period) or capture and playback running on different clocks would leave a backlog for good: what
            // is queued beyond `queueLimit` is dropped rather than played late.
            var excess = min(ring.availableToRead, (stream.bufferedFrames() ?? 0) + ring.availableToRead - queueLimit)
            if excess > 0 {  // told to the person, as captured audio dropped is
                events.droppedSamples.add(excess, ordering: .relaxed)
                events.overflows.add(1, ordering: .relaxed)
            }
            while excess > 0 {
                excess -= ring.read(into: UnsafeMutableBufferPointer(rebasing: scratch[0..<min(scratch.count, excess)]))
            }
            guard ring.availableToRead >= periodFrames else { return 0 }
            let count = ring.read(into: scratch)
            var written = 0
            while written < count {
                written += try stream.write(UnsafeBufferPointer(rebasing: scratch[written..<count]))
            }
            if stream.isWaitingForStart,
               stream.bufferedFrames() ?? 0 >= ALSAPCM.playbackStartPeriods * periodFrames {
                // Writes come just after capture interrupts. Started half a period after one, the device's own
                // interrupts fall midway between them, so a write may be up to half a period early or late and
                // still come between the same two of them; started at the write, a little jitter would let two
                // device periods pass between two writes, and it would underrun again and again.
                usleep(useconds_t(500_000 * periodFrames / sampleRate))
                try stream.start()
            }
            delayMeter?.played(ringPosition: ring.samplesRead, deviceFrames: stream.delayFrames())
            return written
        }
    }
}
