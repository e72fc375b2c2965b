import Foundation
import Synchronization
import Testing
@testable import HearAlertKit

/// Hooks run as real processes (/bin/sh scripts written to a temporary folder).
@Suite struct HookRunnerTests {
    final class Collected: Sendable {
        let lines = Mutex<[String]>([])
        var diagnostics: Diagnostics { Diagnostics { line in self.lines.withLock { $0.append(line) } } }
        var all: [String] { lines.withLock { $0 } }
    }

    static let report = AlertReport(message: .started(label: "siren", score: 0.8125, onset: 2, detectedAt: 2.3),
                                    source: "default", time: Date(timeIntervalSince1970: 1_795_000_000))

    static func script(_ body: String) throws -> (path: String, folder: URL) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hook-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let path = folder.appendingPathComponent("hook.sh").path
        try ("#!/bin/sh\n" + body).write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return (path, folder)
    }

    static func waitFor(_ seconds: Double, until done: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if done() { return true }
            usleep(20_000)
        }
        return done()
    }

    @Test func launchesFromManyThreadsAtOnceNeverExceedTheLimit() throws {
        let collected = Collected()
        let launcher = ProgramLauncher(timeLimit: 10, maxConcurrent: 2, diagnostics: collected.diagnostics)
        // Plain threads released together, not GCD workers: this suite's GCD-starvation test runs beside it.
        let gate = DispatchSemaphore(value: 0), done = DispatchGroup()
        for _ in 0..<16 {
            done.enter()
            Thread {
                gate.wait()
                launcher.launch(["sleep", "5"])
                done.leave()
            }.start()
        }
        for _ in 0..<16 { gate.signal() }
        done.wait()
        #expect(launcher.runningCount == 2)
        #expect(collected.all.filter { $0.hasPrefix("skipped sleep") }.count == 14)
        launcher.finish(grace: 0)
    }

    @Test func hookGetsTheEventOnStdinAndInItsEnvironment() throws {
        let (path, folder) = try Self.script("""
            cat > "$1/stdin.json"
            printf '%s|%s|%s|%s' "$HEARALERT_TYPE" "$HEARALERT_LABEL" "$HEARALERT_SCORE" "$HEARALERT_TIME" > "$1/env.txt"
            """)
        let collected = Collected()
        let launcher = ProgramLauncher(timeLimit: 5, maxConcurrent: 2, diagnostics: collected.diagnostics)
        let runner = HookRunner(command: [path, folder.path], trigger: .start, launcher: launcher)
        runner.deliver(Self.report)
        runner.finish()
        #expect(collected.all.isEmpty)
        let stdin = try String(contentsOf: folder.appendingPathComponent("stdin.json"), encoding: .utf8)
        #expect(stdin == AlertLineFormatter.jsonLine(Self.report) + "\n")
        let environment = try String(contentsOf: folder.appendingPathComponent("env.txt"), encoding: .utf8)
        #expect(environment == "alert_start|siren|0.8125|2026-11-18T11:06:40.000Z")
    }

    @Test func triggerChoosesStartsEndsOrBoth() {
        let end = AlertMessage.ended(AlertEvent(label: "siren", onset: 0, offset: 1, detectedAt: 0.2, peakScore: 1))
        #expect(HookRunner.Trigger.start.fires(for: Self.report.message) && !HookRunner.Trigger.start.fires(for: end))
        #expect(!HookRunner.Trigger.end.fires(for: Self.report.message) && HookRunner.Trigger.end.fires(for: end))
        #expect(HookRunner.Trigger.both.fires(for: end))
    }

    @Test func slowHookNeitherBlocksNorOutlivesItsTimeLimit() throws {
        let (path, _) = try Self.script("exec sleep 30\n")
        let collected = Collected()
        let launcher = ProgramLauncher(timeLimit: 2.5, maxConcurrent: 1, diagnostics: collected.diagnostics)
        let runner = HookRunner(command: [path], trigger: .both, launcher: launcher)
        let began = Date()
        runner.deliver(Self.report)
        runner.deliver(Self.report)  // over the concurrency limit: skipped, not queued
        // Waiting for the hook would take its whole 2.5-s time limit; the margin absorbs a loaded CI machine.
        #expect(Date().timeIntervalSince(began) < 1)
        #expect(Self.waitFor(8) { launcher.runningCount == 0 })
        #expect(collected.all.contains { $0.contains("still going") })
        #expect(collected.all.contains { $0.contains("ran longer than 2.5 s and was stopped") })
    }

    @Test func aHookStillOpenForWritingIsRetriedNotLost() throws {
        let (path, folder) = try Self.script("echo ran > \"$(dirname \"$0\")/ran\"\n")
        // Held open for writing, as a child forked by another thread holds a just-written file until it execs.
        let writer = open(path, O_WRONLY | O_CLOEXEC)
        try #require(writer >= 0)
        // A thread of its own: GCD's global threads may all be busy watching other tests' hooks.
        Thread {
            usleep(20_000)
            close(writer)
        }.start()
        let collected = Collected()
        let launcher = ProgramLauncher(timeLimit: 5, maxConcurrent: 1, diagnostics: collected.diagnostics)
        launcher.launch([path])
        launcher.finish(grace: 5)
        #expect(collected.all.isEmpty, "\(collected.all)")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("ran").path))
    }

    @Test func runningHooksLeaveGCDFreeForTheSinksAndSignalHandlers() throws {
        let collected = Collected()
        let hooks = ProcessInfo.processInfo.activeProcessorCount + 2  // more watchers than GCD has threads
        let launcher = ProgramLauncher(timeLimit: 10, maxConcurrent: hooks, diagnostics: collected.diagnostics)
        for _ in 0..<hooks { launcher.launch(["sleep", "30"]) }
        defer { launcher.finish(grace: 0) }
        try #require(launcher.runningCount == hooks, "\(collected.all)")
        usleep(100_000)  // the watchers are polling now
        let ran = DispatchSemaphore(value: 0)
        let began = Date()
        DispatchQueue.global().async { ran.signal() }
        // Starved, the block would wait for a watcher to finish: 10 s (the hooks' time limit), past this timeout.
        // Not starved, it runs at once; the 2-s bound leaves room for a loaded CI machine's scheduling.
        #expect(ran.wait(timeout: .now() + 5) == .success)
        #expect(Date().timeIntervalSince(began) < 2)
    }

    /// Runs a hook script once to its end (or its time limit): its path and what was reported, which must be
    /// one report.
    static func reportOfOneRun(_ body: String, timeLimit: Double) throws -> (path: String, report: String) {
        let (path, _) = try Self.script(body)
        let collected = Collected()
        let launcher = ProgramLauncher(timeLimit: timeLimit, maxConcurrent: 1, diagnostics: collected.diagnostics)
        launcher.launch([path])
        launcher.finish(grace: 5)
        try #require(collected.all.count == 1, "\(collected.all.map { $0.prefix(200) })")
        return (path, collected.all[0])
    }

    @Test func aHooksOutputIsReportedWithItsStatusAndCutToItsLastBytes() throws {
        // 10 000 'x', then a last line on stderr: only the last 4 KB are kept, the end always.
        let (path, report) = try Self.reportOfOneRun(
            "head -c 10000 /dev/zero | tr '\\0' x\necho\necho the end >&2\nexit 3\n", timeLimit: 5)
        #expect(report.hasPrefix("\(path) failed with exit status 3; its output (last 4096 of 10009 bytes):\n"),
                "\(report.prefix(200))")
        #expect(report.hasSuffix("xxxx\nthe end"), "\(report.suffix(100))")
        let output = report.split(separator: "\n", maxSplits: 1).last ?? ""
        #expect(output.filter { $0 == "x" }.count == 4_096 - "\nthe end\n".utf8.count)
    }

    @Test func aHookThatWritesWithoutEndIsStoppedWithItsLastBytes() throws {
        let (path, report) = try Self.reportOfOneRun("exec yes\n", timeLimit: 1)
        #expect(report.hasPrefix("\(path) ran longer than 1.0 s and was stopped; its output (last 4096 of "),
                "\(report.prefix(200))")
        #expect(report.utf8.count < 4_096 + 200 + path.utf8.count)
    }

    @Test func aQuietHookThatSucceedsReportsNothingAndAChattyOneItsOutput() throws {
        let collected = Collected()
        let launcher = ProgramLauncher(timeLimit: 5, maxConcurrent: 2, diagnostics: collected.diagnostics)
        let (quiet, _) = try Self.script("exit 0\n")
        let (chatty, _) = try Self.script("echo notified\n")
        launcher.launch([quiet])
        launcher.finish(grace: 5)
        #expect(collected.all.isEmpty)
        launcher.launch([chatty])
        launcher.finish(grace: 5)
        #expect(collected.all == ["\(chatty) exited 0; its output:\nnotified"])
    }

    @Test func failingOrMissingHooksAreReportedNotThrown() throws {
        let (path, _) = try Self.script("exit 3\n")
        let collected = Collected()
        let launcher = ProgramLauncher(timeLimit: 5, maxConcurrent: 2, diagnostics: collected.diagnostics)
        HookRunner(command: [path], trigger: .start, launcher: launcher).deliver(Self.report)
        HookRunner(command: ["/nonexistent/hook"], trigger: .start, launcher: launcher).deliver(Self.report)
        launcher.finish(grace: 5)
        #expect(collected.all.contains { $0.hasSuffix("failed with exit status 3") })
        #expect(collected.all.contains { $0.hasPrefix("cannot run /nonexistent/hook") })
    }
}

/// The desktop notifier with a stand-in for notify-send that records its arguments.
@Suite struct DesktopNotifierTests {
    @Test func notifiesOnStartsOnlyWithTheLabelAsAnArgument() throws {
        let (path, folder) = try HookRunnerTests.script("printf '%s\\n' \"$@\" > \"$(dirname \"$0\")/arguments.txt\"\n")
        let launcher = ProgramLauncher(timeLimit: 5, maxConcurrent: 2)
        let notifier = try #require(DesktopNotifier(launcher: launcher, program: path))
        let end = AlertReport(message: .ended(AlertEvent(label: "siren", onset: 0, offset: 1, detectedAt: 0.3,
                                                         peakScore: 1)), source: "default")
        notifier.deliver(end)
        notifier.finish()
        let arguments = folder.appendingPathComponent("arguments.txt").path
        #expect(!FileManager.default.fileExists(atPath: arguments))
        notifier.deliver(HookRunnerTests.report)
        notifier.finish()
        let lines = try String(contentsOfFile: arguments, encoding: .utf8).split(separator: "\n")
        #expect(lines.contains("HearAlert: siren"))
        #expect(lines.contains("A siren is sounding (score 0.81)."))
    }

    @Test func missingProgramMeansNoNotifier() {
        #expect(DesktopNotifier(launcher: ProgramLauncher(timeLimit: 1, maxConcurrent: 1),
                                program: "hearalert-no-such-notifier") == nil)
    }
}
