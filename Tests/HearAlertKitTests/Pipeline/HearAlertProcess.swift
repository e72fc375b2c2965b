import Foundation

/// Runs the built `hearalert` binary to completion, as a person would from a shell (in `directory`, default the
/// test's own, and without a `HEARALERT_MODEL` the test machine may have set): its exit status, standard output
/// and standard error. For commands that finish on their own and print little (both pipes are read only after the
/// output one closes).
///
/// `standardOutput` replaces the captured stdout pipe (e.g. /dev/full; `stdout` is then empty). `fileSizeLimit`
/// (bytes) runs the command under that limit with SIGXFSZ ignored, so a file write past it fails (EFBIG) as on
/// a full disk (prlimit sets the limit; the ignored signal survives both execs).
func runHearAlert(
    _ arguments: [String], in directory: URL? = nil, binary: String = ListenEndToEndTests.binary,
    standardOutput: FileHandle? = nil, fileSizeLimit: Int? = nil
) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = hearAlertProcess(arguments, in: directory, binary: binary, fileSizeLimit: fileSizeLimit)
    let stdout = Pipe(), stderr = Pipe()
    process.standardOutput = standardOutput ?? stdout
    process.standardError = stderr
    try process.run()
    if standardOutput != nil { try stdout.fileHandleForWriting.close() }
    let out = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let err = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, out, err)
}

/// The `hearalert` process `runHearAlert` starts, not yet running: for tests that signal it while it works.
func hearAlertProcess(
    _ arguments: [String], in directory: URL? = nil, binary: String = ListenEndToEndTests.binary,
    fileSizeLimit: Int? = nil
) -> Process {
    let process = Process()
    if let fileSizeLimit {
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "trap '' XFSZ; exec prlimit --fsize=\(fileSizeLimit) \"$@\"", "sh", binary]
            + arguments
    } else {
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
    }
    process.currentDirectoryURL = directory
    process.environment = ProcessInfo.processInfo.environment.filter { $0.key != "HEARALERT_MODEL" }
    return process
}
