import HearAlertKit

// A stage of `hearalert-bench realtime-probe` (RealtimeProbe.swift): the detector's stream restarts.

/// The detector as `listen` drives it when the capture device is lost and reopened: in every loop of the audio the
/// stream restarts while the siren sounds (2 s in), which ends that alert, and the siren still sounding after it is
/// announced again; a decision observer is attached throughout. Restarting, the observer and the re-announcement
/// must allocate nothing, as the rest of the real-time path.
final class DetectorRestartStage: ProbeStage {
    /// Decisions seen by the observer (a class, so the observer only bumps a counter through a reference).
    private final class Tally {
        var decisions = 0
    }

    private let audio: ProbeAudio
    private let detector: AlertDetector
    private let tally = Tally()
    private var started = 0
    private var endedAtRestart = 0
    private var restarts = 0
    private var failures = 0
    /// The frame within each loop where the stream restarts: 2 s, mid-siren (1–3 s).
    private static let restartFrame = 200

    init(audio: ProbeAudio) throws {
        self.audio = audio
        let (model, settings) = try loadToneModel()
        detector = try AlertDetector(model: model, settings: settings) { [tally] _ in tally.decisions += 1 }
    }

    func process(frame: Int) {
        if frame % audio.framesPerLoop == Self.restartFrame {
            restarts += 1
            detector.restartStream { if !$0.isStart { endedAtRestart += 1 } }
        }
        do {
            try detector.process(audio.period(frame)) { if $0.isStart { started += 1 } }
        } catch {
            failures += 1
        }
    }

    func resetTally() {
        started = 0
        endedAtRestart = 0
        restarts = 0
        tally.decisions = 0
    }

    func verify(frames: Int) throws {
        let loops = frames / audio.framesPerLoop
        // Per loop: the siren before the restart and again after it, and the smoke alarm.
        guard failures == 0, restarts == loops, endedAtRestart >= loops, started >= 3 * loops,
              tally.decisions >= frames / 8 else {
            throw ProbeError("detector-restarts: \(restarts) restarts ended \(endedAtRestart) alerts, \(started) "
                             + "started, \(tally.decisions) decisions observed in \(loops) loops")
        }
    }

    var summary: String {
        "AlertDetector.restartStream mid-siren every loop, with a decision observer; the siren announced again"
    }
}
