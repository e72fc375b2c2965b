import Synchronization

/// What an audio device thread has to tell the person, recorded as counts the reporter turns into lines.
///
/// The audio threads only add to atomics here: no string, no allocation, no I/O, so a stalled standard error (a
/// paused terminal, a full journal pipe, a chatty hook writing there) can never hold up audio.
final class DeviceEvents: Sendable {
    /// "capture" or "playback", as the person reads it.
    let role: String
    /// The configured ALSA device name.
    let device: String
    /// Overruns (capture) or underruns (playback) repaired in place.
    let xruns = Atomic<Int>(0)
    /// Times the device stopped working and was closed to be reopened.
    let losses = Atomic<Int>(0)
    /// Times a lost device delivered a second of audio again.
    let recoveries = Atomic<Int>(0)
    /// Capture: periods that did not fit in the ring because processing fell behind. Playback: times audio
    /// queued for the headphones was skipped because more than the delay allows had piled up (after a stall, or
    /// as capture and playback clocks drift apart).
    let overflows = Atomic<Int>(0)
    /// Samples lost in those overflows: captured ones, or headphone audio skipped.
    let droppedSamples = Atomic<Int>(0)
    /// The part of `droppedSamples` already put into words (the reporter's own bookkeeping).
    private let droppedSamplesReported = Atomic<Int>(0)
    /// Milliseconds until the next reopening attempt, as of the last loss.
    let retryMilliseconds = Atomic<Int>(0)
    /// Capture only: where the captured audio breaks because the device was lost, for the processing loop to
    /// restart the detector at; breaks it could not queue are coalesced and counted there.
    let restarts = CaptureRestarts()
    /// Why the device was last lost. Written only on a loss (the device is gone, nothing real-time is at
    /// stake) and read by the reporter, which holds the lock just long enough to copy the value.
    let lastLoss = Mutex<ALSAError?>(nil)

    init(role: String, device: String) {
        self.role = role
        self.device = device
    }

    /// Called by the device thread when the device stops working, before it waits `retryIn` seconds.
    func recordLoss(_ error: ALSAError, retryIn seconds: Double) {
        lastLoss.withLock { $0 = error }
        retryMilliseconds.store(Int(seconds * 1000), ordering: .relaxed)
        losses.add(1, ordering: .releasing)
    }

    /// The facts worth a line, each with its words; processing falling behind belongs to the capture side.
    var facts: [CountedFact] {
        let kind = role == "capture" ? "overrun" : "underrun"
        var facts = [
            CountedFact(total: { [self] in losses.load(ordering: .acquiring) }) { [self] count, seconds in
                let reason = lastLoss.withLock { $0 }.map { "\($0)" } ?? "\(role) device '\(device)' stopped working"
                let retry = Double(retryMilliseconds.load(ordering: .relaxed)) / 1000
                guard let seconds else { return "\(reason); reopening in \(retry) s" }
                return "\(role) device '\(device)' failed \(count) more \(Self.times(count)) in the last "
                    + "\(Self.whole(seconds)) s (last: \(reason)); reopening in \(retry) s"
            },
            CountedFact(total: { [self] in recoveries.load(ordering: .relaxed) }) { [self] count, seconds in
                guard let seconds, count > 1 else { return "\(role) device '\(device)' is back" }
                return "\(role) device '\(device)' came back \(count) times in the last \(Self.whole(seconds)) s"
            },
            CountedFact(total: { [self] in xruns.load(ordering: .relaxed) }) { [self] count, seconds in
                guard let seconds else { return "\(role) \(kind) on '\(device)' repaired" }
                return "\(role) \(kind)s on '\(device)' repaired: \(count) in the last \(Self.whole(seconds)) s"
            },
        ]
        if role != "capture" {
            facts.append(CountedFact(total: { [self] in overflows.load(ordering: .relaxed) }) { [self] count, seconds in
                let dropped = droppedSinceLastReport()
                guard let seconds else { return "headphone audio skipped to keep the delay short: \(dropped) samples" }
                return "headphone audio skipped to keep the delay short, \(count) \(Self.times(count)) in the last "
                    + "\(Self.whole(seconds)) s: \(dropped) samples"
            })
        }
        if role == "capture" {
            facts.append(CountedFact(total: { [self] in overflows.load(ordering: .relaxed) }) { [self] count, seconds in
                let dropped = droppedSinceLastReport()
                guard let seconds else { return "processing fell behind: \(dropped) captured samples dropped" }
                return "processing fell behind \(count) \(Self.times(count)) in the last \(Self.whole(seconds)) s: "
                    + "\(dropped) captured samples dropped"
            })
            facts.append(CountedFact(total: { [self] in restarts.coalescedBreaks }) { count, seconds in
                let what = "the capture device was lost again while processing was far behind"
                guard let seconds else { return "\(what): the detector restarts once, at the latest loss" }
                return "\(what), \(count) \(Self.times(count)) in the last \(Self.whole(seconds)) s: the detector "
                    + "restarted once for them, at the latest loss"
            })
        }
        return facts
    }

    /// Samples dropped since the last line that told of them (the reporter's thread only).
    private func droppedSinceLastReport() -> Int {
        let total = droppedSamples.load(ordering: .relaxed)
        return total - droppedSamplesReported.exchange(total, ordering: .relaxed)
    }

    private static func times(_ count: Int) -> String { count == 1 ? "time" : "times" }

    private static func whole(_ seconds: Double) -> Int { Int(seconds.rounded()) }
}
