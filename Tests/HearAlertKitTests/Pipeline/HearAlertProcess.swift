import Foundation

/// Runs the built `hearalert` binary to completion, as a person would from a shell (in `directory`, default the
/// test's own, and without a `HEARALERT_MODEL` the test machine may have set): its exit status, standard output
/// and standard error. For commands that finish on their own and print little (both pipes are read only after the
/// output one closes).
func runHearAlert(
    _ arguments: [String], in directory: URL? = nil, binary: String = ListenEndToEndTests.binary
) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    process.arguments = arguments
    process.currentDirectoryURL = directory
    process.environment = ProcessInfo.processInfo.environment.filter { $0.key != "HEARALERT_MODEL" }
    let stdout = Pipe(), stderr = Pipe()
    process.standardOutput = stdout
    process.standardError = stderr
    try process.run()
    let out = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    let err = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    return (process.terminationStatus, out, err)
}
