import HearAlertKit

// A stage of `hearalert-realtime-probe` (RealtimeProbe.swift): the detector's stream restarts.

/// The detector as `listen` drives it when the capture device is lost and reopened, through the same queue of breaks
/// (`CaptureRestarts`) and the listener's per-period code (`PeriodProcessor`, following the breaks with a
/// `CaptureStreamFollower`): in every loop of the audio two breaks are published at once, ahead of the audio read (as
/// when the processing loop lags behind two losses), one while the siren sounds (2 s in) and one between the smoke
/// alarm's first two beeps (5.5 s in, inside the merge gap); each restarts the stream at its own sample, which ends the
/// alert in progress there at once, and the alert still sounding after it is announced again; a decision observer is
/// attached throughout. Publishing, taking, restarting, the observer and the re-announcements must allocate nothing, as
/// the rest of the real-time path.
final class DetectorRestartStage: ProbeStage {
    /// Decisions seen by the observer (a class, so the observer only bumps a counter through a reference).
    private final class Tally {
        var decisions = 0
    }

    private let audio: ProbeAudio
    private let restarts = CaptureRestarts()
    private var processor: PeriodProcessor
    private let tally = Tally()
    private var started = 0
    /// Alert ends emitted while delivering a frame that begins at a break: the ends the restarts forced.
    private var endedAtBreak = 0
    private var published = 0
    private var failures = 0
    /// The frame within each loop where both breaks are published: 1.9 s, before the audio reaches either.
    private static let publishFrame = 190
    /// The breaks' frames within each loop: 2 s, mid-siren (1–3 s), and 5.5 s, between the alarm's beeps
    /// (4.5–7 s).
    private static let breakFrames = [200, 550]

    init(audio: ProbeAudio) throws {
        self.audio = audio
        let (model, settings) = try loadToneModel()
        let detector = try AlertDetector(model: model, settings: settings) { [tally] _ in tally.decisions += 1 }
        processor = PeriodProcessor(detector: detector, restarts: restarts, feed: nil)
    }

    func process(frame: Int) {
        let inLoop = frame % audio.framesPerLoop
        if inLoop == Self.publishFrame {
            for breakFrame in Self.breakFrames {
                restarts.streamBreaks(atSample: (frame - inLoop + breakFrame) * RealtimeProbe.periodSamples)
                published += 1
            }
        }
        let atBreak = Self.breakFrames.contains(inLoop)
        do {
            try processor.process(audio.period(frame)) { message in
                if message.isStart {
                    started += 1
                } else if atBreak {
                    endedAtBreak += 1
                }
            }
        } catch {
            failures += 1
        }
    }

    func resetTally() {
        started = 0
        endedAtBreak = 0
        published = 0
        tally.decisions = 0
    }

    func verify(frames: Int) throws {
        let loops = frames / audio.framesPerLoop
        // Per loop: two breaks, each ending the alert sounding there; the siren and the alarm before their break
        // and again after it.
        guard failures == 0, published == 2 * loops, endedAtBreak == 2 * loops, restarts.coalescedBreaks == 0,
              started >= 4 * loops, tally.decisions >= frames / 8 else {
            throw ProbeError("detector-restarts: \(published) breaks published ended \(endedAtBreak) alerts "
                             + "(\(restarts.coalescedBreaks) coalesced), \(started) started, \(tally.decisions) "
                             + "decisions observed in \(loops) loops")
        }
    }

    var summary: String {
        "two capture breaks queued ahead of the audio every loop, each restarting AlertDetector mid-alert at its "
            + "own sample (PeriodProcessor), with a decision observer; the alerts announced again"
    }
}
