import Foundation
import Testing
@testable import HearAlertKit

extension ListenEndToEndTests {
    /// A microphone lost while a siren sounds, and back half a second later, through the real binary and ALSA:
    /// the siren's alert ends where the audio broke, and the reopened device's audio is a new stream, so the siren
    /// still sounding is a new alert whose onset is that same moment (start padding makes it quick), not one event
    /// glued across the gap. The `hearalert_test_lossy` device fails once it has recorded 81 920 bytes (2.56 s of
    /// 16-bit audio at 16 kHz, plus ALSA's buffering): inside the clip's siren (1–3 s); 4 s are fed.
    @Test func aLostCaptureDeviceEndsTheAlertAndTheReopenedOneIsANewStream() throws {
        try #require(FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit"), "needs prlimit (util-linux)")
        let model = Self.fixtures.appendingPathComponent("tone_model_padded.safetensors").path
        let run = try ListenRun([], feeding: Array(Self.clipWithTail[0..<64_000]), device: "hearalert_test_lossy",
                                model: model, fileSizeLimit: 81_920)
        let siren = { run.lines.filter { $0["label"] as? String == "siren" } }
        let restarted = run.waitUntil(30) {
            siren().count >= 3 && run.stderr.contains("capture device 'hearalert_test_lossy' is back")
        }
        #expect(restarted, "stdout: \(run.stdout)\nstderr: \(run.stderr)")
        run.process.interrupt()
        #expect(run.exitStatus(within: 10) == 0, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("audio device 'hearalert_test_lossy' stopped working"), "stderr: \(run.stderr)")

        let events = siren()
        #expect(events.map { $0["type"] as? String ?? "" } == ["alert_start", "alert_end", "alert_start", "alert_end"],
                "stdout: \(run.stdout)")
        guard events.count == 4 else { return }
        let loss = events[1]["offset"] as? Double ?? -1
        #expect(loss > 1.5 && loss < 3, "the device was lost at \(loss) s")
        #expect(events[2]["stream_time"] as? Double == loss, "the new alert's onset")
        #expect((events[2]["detected_at"] as? Double ?? 0) > loss)
    }
}
