import Foundation
import Synchronization
import Testing
@testable import HearAlertKit

/// `hearalert listen` end to end, as a person runs it: the real binary, the real ALSA library, a file-backed
/// capture device fed through a FIFO (see ALSATestDevices), real hook processes.
///
/// The FIFO is how the harness controls what the listener hears, given the file plugin's two traits: the test
/// writes exactly the audio it wants (paced at twice real time), then either `--duration` stops the
/// listener after exactly that much, or SIGINT does, always before the writer closes the FIFO (after which the
/// plugin would repeat its last block forever).
@Suite struct ListenEndToEndTests {
    static let fixtures = Bundle.module.url(forResource: "Fixtures/detector", withExtension: nil)!
    static let model = fixtures.appendingPathComponent("tone_model.safetensors").path
    static let binary = Bundle.module.bundleURL.deletingLastPathComponent().appendingPathComponent("hearalert").path

    /// The fixture clip (siren 1-3 s, smoke alarm 4.5-7 s) followed by 2 s of silence, as 16-bit samples.
    static let clipWithTail: [Float] = {
        let clip = try! AudioFile.readAll(path: fixtures.appendingPathComponent("alerts_clip.wav").path,
                                          sampleRate: 16_000)
        return clip + [Float](repeating: 0, count: 32_000)
    }()

    /// What a child process has printed so far, filled from its pipes' reader threads.
    final class CapturedOutput: Sendable {
        let text = Mutex<(stdout: String, stderr: String)>(("", ""))
    }

    /// One running `hearalert listen` and the thread feeding its capture FIFO.
    final class ListenRun {
        let process = Process()
        let devices: ALSATestDevices
        private let output = CapturedOutput()
        private let closeInput = DispatchSemaphore(value: 0)
        private let inputClosed = DispatchSemaphore(value: 0)

        /// `standardOutput` replaces the captured stdout pipe (e.g. one nobody reads). `fileSizeLimit` (bytes)
        /// runs the listener under that limit with SIGXFSZ ignored, so the `hearalert_test_lossy` device fails
        /// once its recording is that large (prlimit sets the limit; the ignored signal survives both execs).
        init(_ arguments: [String], feeding samples: [Float], device: String = "hearalert_test_capture",
             model: String = ListenEndToEndTests.model, standardOutput: FileHandle? = nil,
             fileSizeLimit: Int? = nil) throws {
            devices = try ALSATestDevices(fifo: true)
            let listen = ["listen", "--device", device, "--model", model] + arguments
            if let fileSizeLimit {
                process.executableURL = URL(fileURLWithPath: "/bin/sh")
                process.arguments = ["-c", "trap '' XFSZ; exec prlimit --fsize=\(fileSizeLimit) \"$@\"", "sh",
                                     ListenEndToEndTests.binary] + listen
            } else {
                process.executableURL = URL(fileURLWithPath: ListenEndToEndTests.binary)
                process.arguments = listen
            }
            var environment = ProcessInfo.processInfo.environment
            environment["ALSA_CONFIG_PATH"] = devices.configPath
            process.environment = environment
            let stdout = Pipe(), stderr = Pipe()
            process.standardOutput = standardOutput ?? stdout
            process.standardError = stderr
            stdout.fileHandleForReading.readabilityHandler = { [output] handle in
                let text = String(decoding: handle.availableData, as: UTF8.self)
                output.text.withLock { $0.stdout += text }
            }
            stderr.fileHandleForReading.readabilityHandler = { [output] handle in
                let text = String(decoding: handle.availableData, as: UTF8.self)
                output.text.withLock { $0.stderr += text }
            }
            try process.run()
            let data = ALSATestDevices.pcm16(samples)
            let path = devices.inputPath
            Thread { [closeInput, inputClosed] in
                // Opening blocks until the listener's capture device opens the FIFO for reading. The audio then
                // goes in at twice real time, as a microphone would deliver it, only faster: unpaced, the capture
                // thread would outrun processing (a debug build on a busy machine manages a few times real time)
                // and drop audio.
                // A reader that goes away (a capture device being reopened) must make a write fail, not raise
                // SIGPIPE in the test process: blocked here, the signal stays with this thread, which drops it.
                var pipeSignal = sigset_t()
                sigemptyset(&pipeSignal)
                sigaddset(&pipeSignal, SIGPIPE)
                pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
                guard let fifo = FileHandle(forWritingAtPath: path) else { return }
                let chunk = 3_200  // 100 ms of 16-bit samples, every 50 ms
                var offset = 0
                while offset < data.count {
                    try? fifo.write(contentsOf: data[offset..<min(data.count, offset + chunk)])
                    offset += chunk
                    usleep(50_000)
                }
                closeInput.wait()
                try? fifo.close()
                inputClosed.signal()
            }.start()
        }

        var stdout: String { output.text.withLock { $0.stdout } }
        var stderr: String { output.text.withLock { $0.stderr } }
        var lines: [[String: Any]] {
            stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }
        }

        func waitUntil(_ seconds: Double, _ condition: () -> Bool) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while Date() < deadline {
                if condition() { return true }
                usleep(20_000)
            }
            return condition()
        }

        /// Waits for the listener to exit, then lets the writer close the FIFO; nil if it did not exit in time.
        func exitStatus(within seconds: Double) -> Int32? {
            defer {
                if process.isRunning { process.terminate() }
                closeInput.signal()
                _ = inputClosed.wait(timeout: .now() + 5)
                usleep(100_000)  // the last pipe reads
                devices.remove()
            }
            return waitUntil(seconds) { !process.isRunning } ? process.terminationStatus : nil
        }
    }

    /// A hook script in a fresh folder (HookRunnerTests' helper), and that folder's path.
    static func hookScript(_ body: String) throws -> (path: String, folder: String) {
        let (path, folder) = try HookRunnerTests.script(body)
        return (path, folder.path)
    }

    /// What file detection finds in the same audio: the live path must report the same events.
    static func fileDetection() throws -> [AlertMessage] {
        let model = try AlertModel(path: Self.model)
        let detector = try AlertDetector(model: model, settings: try TrackerSettings(model: model))
        var messages: [AlertMessage] = []
        try clipWithTail.withUnsafeBufferPointer { try detector.process($0) { messages.append($0) } }
        detector.finish { messages.append($0) }
        return messages
    }

    @Test func alertsReachStdoutAndTheHookGetsEachOnStdin() throws {
        let (hook, folder) = try Self.hookScript("cat > \"$1/$HEARALERT_TYPE-$HEARALERT_LABEL.json\"\n")
        let run = try ListenRun(["--duration", "10", "--hook", hook, folder, "--hook-on", "both"],
                                feeding: Self.clipWithTail)
        #expect(run.exitStatus(within: 30) == 0, "stderr: \(run.stderr)")
        let lines = run.lines
        let expected = try Self.fileDetection()
        #expect(lines.map { "\($0["type"]!) \($0["label"]!)" } == expected.map { "\($0.typeName) \($0.label)" })
        for (line, message) in zip(lines, expected) {
            #expect(abs((line["stream_time"] as? Double ?? -1) - message.streamTime) < 0.001)
            #expect(line["source"] as? String == "hearalert_test_capture")
        }
        for line in run.stdout.split(separator: "\n") {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            let file = "\(folder)/\(object["type"]!)-\(object["label"]!).json"
            #expect((try? String(contentsOfFile: file, encoding: .utf8)) == line + "\n", "hook input \(file)")
        }
        #expect(run.stderr.contains("listening on 'hearalert_test_capture' at 16000 Hz"))
        #expect(run.stderr.contains("audio threads run with real-time priority (SCHED_FIFO)")
                || run.stderr.contains("real-time scheduling not permitted"), "stderr: \(run.stderr)")
    }

    @Test func aHookThatSleepsDelaysNothing() throws {
        let (hook, _) = try Self.hookScript("exec sleep 30\n")
        let began = Date()
        let run = try ListenRun(["--duration", "10", "--hook", hook, "--hook-on", "both", "--hook-timeout", "60"],
                                feeding: Self.clipWithTail)
        #expect(run.exitStatus(within: 20) == 0)
        // Four alert messages out, four sleeping hooks stopped at exit: far sooner than one hook's 30 s.
        #expect(run.lines.count == 4)
        #expect(Date().timeIntervalSince(began) < 15)
        #expect(run.stderr.contains("still running at exit"), "stderr: \(run.stderr)")
    }

    @Test func aFailingHookIsReportedAndListeningGoesOn() throws {
        let (hook, _) = try Self.hookScript("exit 3\n")
        let run = try ListenRun(["--duration", "10", "--hook", hook], feeding: Self.clipWithTail)
        #expect(run.exitStatus(within: 30) == 0)
        #expect(run.lines.count == 4)
        #expect(run.stderr.contains("failed with exit status 3"), "stderr: \(run.stderr)")
    }

    @Test(arguments: [SIGINT, SIGTERM])
    func stopSignalDuringAnAlertEmitsItsEnd(signal: Int32) throws {
        // Two seconds of audio: the siren (1-3 s) is still sounding when the input runs dry.
        let run = try ListenRun([], feeding: Array(Self.clipWithTail[0..<32_000]))
        let started = run.waitUntil(20) { run.lines.contains { $0["type"] as? String == "alert_start" } }
        #expect(started, "stderr: \(run.stderr)")
        usleep(300_000)  // let the listener take the rest of the two seconds
        kill(run.process.processIdentifier, signal)
        #expect(run.exitStatus(within: 10) == 0, "stderr: \(run.stderr)")
        let last = try #require(run.lines.last)
        #expect(last["type"] as? String == "alert_end" && last["label"] as? String == "siren")
        let offset = last["offset"] as? Double ?? 0
        #expect(offset > (last["detected_at"] as? Double ?? 9) && offset <= 2.0 + 1e-9)
    }

    @Test func enhancedAudioReachesThePlaybackDevice() throws {
        let run = try ListenRun(["--duration", "10", "--output", "hearalert_test_playback"], feeding: Self.clipWithTail)
        let devices = run.devices
        var played: [Float] = []
        defer { _ = run.exitStatus(within: 1) }
        let exited = run.waitUntil(30) { !run.process.isRunning }
        #expect(exited && run.process.terminationStatus == 0, "stderr: \(run.stderr)")
        played = (try? devices.playedSamples()) ?? []
        // The null-backed playback device is not paced, and under load the bounded headphone queue drops what
        // piles up (by design: late audio is worse than missing audio), so only most of the 10 s must arrive.
        #expect(played.count > 5 * 16_000)
        #expect((played.map(abs).max() ?? 0) > 0.1)  // the siren and beeps (amplitude 0.2) are audible
        #expect(run.lines.count == 4)
    }

    @Test func aStuckReaderOfStdoutDoesNotMakeShutdownHang() throws {
        // Standard output is a full pipe nobody reads: the first alert line blocks the sink thread for ever.
        // Listening must still end, say so, and fail, rather than wait on the reader.
        let stalled = ALSAPCMTests.stalledPipe()
        defer {
            close(stalled.read)
            close(stalled.write)
        }
        let run = try ListenRun(["--duration", "10"], feeding: Self.clipWithTail,
                                standardOutput: FileHandle(fileDescriptor: stalled.write))
        let status = run.exitStatus(within: 30)
        #expect(status != nil && status != 0, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("output could not be flushed within 3.0 s"), "stderr: \(run.stderr)")
    }

    @Test func aDeviceThatFailsIsReportedAndRetriedWithBackoff() throws {
        let run = try ListenRun([], feeding: Array(Self.clipWithTail[0..<16_000]), device: "hearalert_test_failing")
        // The first loss is told at once; the retries after it (0.5 s, 1 s, 2 s, 4 s … apart) are summed up in
        // one line ten seconds later, so a dead device does not flood standard error.
        let retried = run.waitUntil(20) { run.stderr.contains("more times in the last") }
        #expect(retried, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("audio device 'hearalert_test_failing' stopped working: Input/output error; "
                                    + "reopening in 0.5 s"))
        let summary = run.stderr.split(separator: "\n").first { $0.contains("more times in the last") } ?? ""
        #expect(summary.hasPrefix("hearalert: capture device 'hearalert_test_failing' failed ")
                && !summary.hasSuffix("reopening in 0.5 s"), "backoff grows: \(summary)")
        #expect(run.process.isRunning)  // never gives up on the device
        run.process.interrupt()
        #expect(run.exitStatus(within: 10) == 0)
    }

    /// Runs `listen` with arguments that must make it fail before any audio: its status and standard error.
    static func failingListen(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let result = try runHearAlert(["listen"] + arguments + ["--model", Self.model])
        return (result.status, result.stderr)
    }

    @Test func aHookThatCannotRunIsRefusedBeforeListening() throws {
        let result = try Self.failingListen(["--hook", "/nonexistent/hook.sh"])
        #expect(result.status == 64)
        #expect(result.stderr.hasPrefix("Error: --hook: cannot run '/nonexistent/hook.sh': no such executable file"),
                "\(result.stderr)")
    }

    @Test func anUnknownHeadphoneDeviceIsNamedAsThePlaybackSide() throws {
        let result = try Self.failingListen(["--device", "null", "--output", "hearalert_no_such_output"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("Error: cannot open audio device 'hearalert_no_such_output' for playback: "),
                "\(result.stderr)")
    }

    @Test func anUnknownDeviceIsAOneLineErrorAndFailure() throws {
        let result = try Self.failingListen(["--device", "hearalert_no_such_device"])
        #expect(result.status != 0)
        #expect(result.stderr.contains("cannot open audio device 'hearalert_no_such_device'"), "\(result.stderr)")
    }
}
