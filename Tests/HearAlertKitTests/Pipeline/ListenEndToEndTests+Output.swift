import Foundation
import Testing

extension ListenEndToEndTests {
    /// Alert lines that could not be written (standard output on a full disk) are reported, and the listener
    /// exits with a failure: a person or a supervisor must learn that alerts went nowhere.
    @Test func alertLinesThatCouldNotBeWrittenMakeTheListenerFail() throws {
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        defer { try? full.close() }
        let run = try ListenRun(["--duration", "10"], feeding: Self.clipWithTail, standardOutput: full)
        #expect(run.exitStatus(within: 30) == 1, "stderr: \(run.stderr)")
        #expect(run.stderr.contains("hearalert: 4 alert lines could not be written to the output"),
                "stderr: \(run.stderr)")
    }

    /// A hook that writes a megabyte per run (an `exec yes` writes gigabytes) reaches standard error as at most
    /// its last 4 KB, with its exit status: the listener's own messages are not drowned, and listening goes on.
    @Test func aHookThatFloodsItsOutputIsCutToItsLastBytes() throws {
        let (hook, _) = try Self.hookScript("head -c 1000000 /dev/zero | tr '\\0' y\necho last line\nexit 5\n")
        let run = try ListenRun(["--duration", "10", "--hook", hook], feeding: Self.clipWithTail)
        #expect(run.exitStatus(within: 30) == 0, "stderr: \(run.stderr.suffix(2_000))")
        #expect(run.lines.count == 4)
        let stderr = run.stderr
        // Two alert starts ran the hook: two reports of at most 4 KB of output each, plus the usual lines.
        #expect(stderr.utf8.count < 2 * (4_096 + 300) + 1_000, "\(stderr.utf8.count) bytes on stderr")
        #expect(stderr.components(separatedBy: "failed with exit status 5").count == 3, "\(stderr.suffix(2_000))")
        #expect(stderr.contains("yyylast line"), "\(stderr.suffix(2_000))")
    }
}
