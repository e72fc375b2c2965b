import Foundation
@testable import HearAlertKit

/// A scratch folder removed when the value is released.
final class ScratchFolder {
    let url: URL
    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("hearalert-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(at: url) }
    func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}

/// Runs sox (a system package HearAlert's setup installs) to make test files in other formats and rates.
func sox(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["sox"] + arguments
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        throw FixtureError("sox \(arguments.joined(separator: " ")) failed: \(message)")
    }
}

func writeWAV(_ samples: [Float], to path: String, sampleRate: Int, encoding: AudioFileWriter.Encoding = .float32) throws {
    let writer = try AudioFileWriter(path: path, sampleRate: sampleRate, encoding: encoding)
    try samples.withUnsafeBufferPointer { try writer.write($0) }
    try writer.close()
}
