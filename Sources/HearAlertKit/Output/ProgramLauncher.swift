import Dispatch
import Foundation
import Synchronization

/// Runs short helper programs (notification hooks, notify-send) without ever letting them hold anything up.
///
/// Each program is started with `posix_spawnp` from an argument vector (never a shell string), gets its input on
/// standard input, runs in its own process group with default signal handling, and is watched off the caller's
/// thread: past `timeLimit` its group gets SIGTERM, then SIGKILL. What it prints (stdout and stderr) is kept, its
/// last 4 KB only (`ProgramOutputTail`), and reported with its exit status once it ends: standard output carries
/// only alerts, and a program that prints without end cannot flood standard error. At most `maxConcurrent` run at
/// once; further launches are skipped and reported, so a hook that hangs cannot pile up processes. Failures are
/// reported, never thrown.
public final class ProgramLauncher: Sendable {
    /// Seconds a program may run before its process group is stopped.
    public let timeLimit: Double
    /// Programs allowed at once; a launch beyond this is skipped and reported.
    public let maxConcurrent: Int
    private let diagnostics: Diagnostics
    private let children = Mutex(Children())
    private let finished = DispatchGroup()

    /// Both limits must be positive (callers validate user input first); failures are reported to `diagnostics`.
    public init(timeLimit: Double, maxConcurrent: Int, diagnostics: Diagnostics = .standardError) {
        precondition(timeLimit > 0 && maxConcurrent > 0, "a launcher needs a time limit and room for one program")
        self.timeLimit = timeLimit
        self.maxConcurrent = maxConcurrent
        self.diagnostics = diagnostics
    }

    /// Whether `launch` would find `program`: an executable file (not a directory, whose search permission
    /// looks like an execute bit) at that path if it contains a `/`, else on `PATH` (as `posix_spawnp` searches).
    /// Lets a listener refuse a mistyped hook at start, not at the first alert.
    public static func canRun(_ program: String) -> Bool {
        if program.contains("/") { return isExecutableFile(program) }
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { isExecutableFile("\($0)/\(program)") }
    }

    private static func isExecutableFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
            && FileManager.default.isExecutableFile(atPath: path)
    }

    /// How many launched programs have not exited yet.
    public var runningCount: Int { children.withLock { $0.running.count } }

    /// Starts `arguments[0]` (looked up in `PATH`) with the rest as its arguments, `extraEnvironment` added to
    /// ours and `input` on its standard input, then returns at once.
    public func launch(_ arguments: [String], extraEnvironment: [String: String] = [:], input: Data = Data()) {
        guard let program = arguments.first else { return }
        // The slot is taken in the same locked step as the count is checked, so launches from several threads
        // cannot together exceed the limit; it becomes a pid, or is given back, once the spawn is known.
        let reserved = children.withLock { children in
            guard children.running.count + children.starting < maxConcurrent else { return false }
            children.starting += 1
            return true
        }
        guard reserved else {
            diagnostics.report("skipped \(program): \(maxConcurrent) earlier runs are still going")
            return
        }
        let pid: pid_t, output: Int32
        do {
            (pid, output) = try spawn(arguments, environment: ProcessInfo.processInfo.environment.merging(extraEnvironment) { $1 },
                                      input: input)
        } catch {
            children.withLock { $0.starting -= 1 }
            diagnostics.report("cannot run \(program): \(error.reason)")
            return
        }
        children.withLock {
            $0.starting -= 1
            $0.running.insert(pid)
        }
        finished.enter()
        // A thread of its own, not a GCD global one: the watcher sleeps between polls for up to `timeLimit`, and
        // a few sleeping GCD workers starve every global queue (the alert sinks, the signal handlers) for a
        // second or more on a small machine before GCD adds threads.
        let watcher = Thread { [self] in
            let (outcome, printed) = watch(pid, output: output)
            children.withLock { _ = $0.running.remove(pid) }
            if let text = printed.text {
                diagnostics.report("\(program) \(outcome ?? "exited 0"); \(printed.heading):\n\(text)")
            } else if let outcome {
                diagnostics.report("\(program) \(outcome)")
            }
            finished.leave()
        }
        watcher.name = "hearalert-hook-\(pid)"
        watcher.start()
    }

    /// Waits up to `grace` seconds for programs still running, then stops the rest (at exit: no orphans).
    public func finish(grace: Double) {
        if finished.wait(timeout: .now() + grace) == .timedOut {
            let left = children.withLock { $0.running }
            for pid in left { kill(-pid, SIGTERM) }
            diagnostics.report("stopped \(left.count) program(s) still running at exit")
            _ = finished.wait(timeout: .now() + 1)
        }
    }

    /// Programs that are running (by process id) and launches between taking a slot and knowing their pid.
    private struct Children {
        var running: Set<pid_t> = []
        var starting = 0
    }

    /// Polls for the exit (10 ms steps; these are rare, short programs), enforces the time limit and keeps the
    /// end of what the program prints on `output` (the read end of its stdout and stderr, closed here). Returns
    /// nil for a clean exit, else what went wrong, and the output.
    private func watch(_ pid: pid_t, output: Int32) -> (String?, ProgramOutputTail) {
        var printed = ProgramOutputTail()
        defer { close(output) }
        // At most a pipe's worth per step: a program that prints without end waits on its pipe, mostly.
        let perStep = 65_536
        let deadline = Date().addingTimeInterval(timeLimit)
        var status: Int32 = 0
        var signalled = false
        while true {
            printed.read(from: output, atMost: perStep)
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { break }
            if result < 0 { return ("could not be watched: \(String(cString: strerror(errno)))", printed) }
            if !signalled && Date() >= deadline {
                kill(-pid, SIGTERM)
                signalled = true
            } else if signalled && Date() >= deadline.addingTimeInterval(1) {
                kill(-pid, SIGKILL)
            }
            usleep(10_000)
        }
        // What it printed last; a child it left running may hold the pipe open, so only what is there now.
        printed.read(from: output, atMost: 4 * perStep)
        if signalled { return ("ran longer than \(timeLimit) s and was stopped", printed) }
        let exitCode = (status >> 8) & 0xFF
        let signal = status & 0x7F
        if signal != 0 { return ("was killed by signal \(signal)", printed) }
        return (exitCode == 0 ? nil : "failed with exit status \(exitCode)", printed)
    }

    /// glibc ≥ 2.34's `posix_spawn_file_actions_addclosefrom_np`, which Swift's Glibc module does not export;
    /// looked up at run time, and skipped where missing (descriptors we open ourselves are close-on-exec anyway).
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    private struct SpawnError: Error {
        var reason: String
        init(_ code: Int32) { reason = String(cString: strerror(code)) }
    }

    /// A pipe (read end, write end), both closed on exec, the end at index `nonBlocking` non-blocking.
    private static func makePipe(nonBlocking: Int) throws(SpawnError) -> [Int32] {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw SpawnError(errno) }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(ends[nonBlocking], F_SETFL, O_NONBLOCK)
        return ends
    }

    /// Starts the program; returns its pid and the read end (non-blocking) of the pipe it prints to.
    private func spawn(_ arguments: [String], environment: [String: String], input: Data) throws(SpawnError)
        -> (pid_t, Int32) {
        // The input is written into the pipe before the program starts, so the write can neither block on nor
        // be interrupted by (SIGPIPE) a program that never reads it. It must fit the pipe: alert JSON is tiny.
        let inputEnds = try Self.makePipe(nonBlocking: 1)
        defer { close(inputEnds[0]) }
        let written = input.withUnsafeBytes { write(inputEnds[1], $0.baseAddress, $0.count) }
        close(inputEnds[1])
        guard written == input.count else { throw SpawnError(written < 0 ? errno : EMSGSIZE) }

        // Its stdout and stderr go to a pipe the watcher reads, never straight to our standard error.
        let outputEnds = try Self.makePipe(nonBlocking: 0)
        defer { close(outputEnds[1]) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, inputEnds[0], STDIN_FILENO)
        posix_spawn_file_actions_adddup2(&actions, outputEnds[1], STDOUT_FILENO)
        posix_spawn_file_actions_adddup2(&actions, outputEnds[1], STDERR_FILENO)
        // Nothing else of ours leaks into the program (audio devices, files being written by other threads).
        _ = Self.addCloseFrom?(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        // Own process group (a timeout stops the whole group; Ctrl-C at our terminal does not reach it); default
        // dispositions for the signals a listener ignores or handles, and nothing blocked.
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP] { sigaddset(&defaults, signal) }
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &unblocked)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        var status = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        // ETXTBSY: a file just written (a freshly installed hook) is still open for writing in some child that
        // another thread forked before the writer closed it, until that child execs. That takes milliseconds, so
        // retrying for up to a quarter second runs the hook instead of losing the alert's notification.
        var retries = 0
        while status == ETXTBSY && retries < 50 {
            usleep(5_000)
            retries += 1
            status = posix_spawnp(&pid, arguments[0], &actions, &attributes, argv, envp)
        }
        guard status == 0 else {
            close(outputEnds[0])
            throw SpawnError(status)
        }
        return (pid, outputEnds[0])
    }
}
