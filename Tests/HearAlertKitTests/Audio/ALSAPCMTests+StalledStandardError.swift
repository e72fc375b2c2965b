import Dispatch
import Foundation
import Synchronization
import Testing
@testable import HearAlertKit

/// Live listening while standard error is a pipe nobody reads (a paused terminal, a stuck journal): the audio
/// threads must go on. Part of the serialized ALSA suite, which owns the process's ALSA configuration.
extension ALSAPCMTests {
    /// A pipe filled to capacity and never read: any write to its write end blocks for ever.
    static func stalledPipe() -> (read: Int32, write: Int32) {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0)
        let flags = fcntl(fds[1], F_GETFL)
        _ = fcntl(fds[1], F_SETFL, flags | O_NONBLOCK)
        let chunk = [UInt8](repeating: 0x2E, count: 4096)
        while write(fds[1], chunk, chunk.count) > 0 {}
        _ = fcntl(fds[1], F_SETFL, flags)  // blocking again, as standard error normally is
        return (fds[0], fds[1])
    }

    @Test func listeningGoesOnWhileStandardErrorIsStalled() throws {
        // The unpaced file device delivers audio far faster than processing takes it, so capture overflows its
        // ring again and again: before the reporter, each overflow was a blocking write to standard error.
        let clip = try AudioFile.readAll(path: ListenEndToEndTests.fixtures.appendingPathComponent("alerts_clip.wav").path,
                                         sampleRate: 16_000)
        try ALSATestDevices.pcm16(clip).write(to: URL(fileURLWithPath: Self.devices.inputPath))
        // Left open on purpose: the reporter thread stays blocked on the write end, and closing either end
        // under it would mean EBADF on a reused descriptor or SIGPIPE.
        let stalled = Self.stalledPipe()
        let diagnostics = Diagnostics { line in
            let bytes = Array("hearalert: \(line)\n".utf8)
            _ = write(stalled.write, bytes, bytes.count)
        }
        let listener = LiveListener(
            configuration: ListenConfiguration(captureDevice: "hearalert_test_capture", periodSeconds: 0.01,
                                               maxDuration: 3, realtimeScheduling: false),
            diagnostics: diagnostics)
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let result = Result {
                let model = try AlertModel(path: ListenEndToEndTests.model)
                let detector = try AlertDetector(model: model, settings: TrackerSettings(model: model))
                try listener.run(detector: detector, dispatcher: AlertDispatcher(sinks: [], source: "test"))
            }
            outcome.withLock { $0 = result }
            done.signal()
        }.start()
        // Generous: 3 s of audio take well under a second; only a blocked thread needs longer than this.
        let finished = done.wait(timeout: .now() + 60) == .success
        if !finished { listener.stop() }
        #expect(finished, "live listening blocked on the stalled standard error")
        #expect(throws: Never.self) { try outcome.withLock { $0 }?.get() }

        // The reporter did try to tell: once the pipe is read, its lines come out. On a loaded machine capture can
        // overflow before the start-up note is queued, so the first overflow line may come before it: read both.
        let flags = fcntl(stalled.read, F_GETFL)
        _ = fcntl(stalled.read, F_SETFL, flags | O_NONBLOCK)
        var text = ""
        let deadline = Date().addingTimeInterval(30)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !(text.contains("processing fell behind") && text.contains("listening on")) && Date() < deadline {
            let count = read(stalled.read, &buffer, buffer.count)
            if count > 0 {
                text += String(decoding: buffer[0..<count].filter { $0 != 0x2E }, as: UTF8.self)
            } else {
                usleep(10_000)
            }
        }
        #expect(text.contains("listening on 'hearalert_test_capture'"), "\(text)")
        #expect(text.contains("processing fell behind"), "\(text)")
    }
}
