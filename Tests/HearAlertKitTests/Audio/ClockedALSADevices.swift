import Foundation

/// ALSA devices that keep time, for measuring delay through the real ALSA API on a machine without a sound card.
///
/// The file and null plugins (`ALSATestDevices`) move audio as fast as asked, so nothing queues in them and
/// `snd_pcm_delay` says 0. These devices are the test plugin in `Fixtures/alsa-clock/clock_pcm.c`, built here with
/// the system C compiler and loaded by ALSA like any external plugin: their hardware pointer moves one period per
/// period of CLOCK_MONOTONIC, as a sound card's interrupts do.
/// - `hearalert_clock_capture`: a microphone that hears `input` (time 0 = its first start).
/// - `hearalert_clock_playback`: headphones whose every sample is recorded at the time it is heard.
/// Each writes its first start time (CLOCK_MONOTONIC ns) to a file, so the two timelines can be lined up: a
/// sample at input index i was at the microphone at `captureStart + i / rate`; output index j reached the ear at
/// `playbackStart + j / rate`.
///
/// What this proves and what it does not: the delay measured includes everything HearAlert and alsa-lib do, with
/// a card whose pointer moves in whole periods; a real card adds its converters (typically well under 1 ms) and
/// may move its pointer more finely (USB audio: every millisecond), and a real scheduler may wake threads later
/// than this machine's does.
struct ClockedALSADevices {
    let folder: URL
    let configPath: String

    /// The plugin's path, built once per test run, or the compiler's message when it cannot be built.
    static let plugin: Result<String, PluginBuildError> = {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hearalert-clock-\(UUID().uuidString)")
        let library = folder.appendingPathComponent("libasound_module_pcm_hearalert_clock.so").path
        let source = Bundle.module.url(forResource: "Fixtures/alsa-clock/clock_pcm", withExtension: "c")!.path
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let compiler = Process()
            compiler.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            compiler.arguments = ["cc", "-O2", "-DPIC", "-shared", "-fPIC", "-o", library, source, "-lasound"]
            let errors = Pipe()
            compiler.standardError = errors
            try compiler.run()
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            compiler.waitUntilExit()
            guard compiler.terminationStatus == 0 else { return .failure(PluginBuildError(message: message)) }
            return .success(library)
        } catch {
            return .failure(PluginBuildError(message: "\(error)"))
        }
    }()

    struct PluginBuildError: Error, CustomStringConvertible {
        let message: String
        var description: String { "cannot build the clocked ALSA test plugin: \(message)" }
    }

    var inputPath: String { folder.appendingPathComponent("input.raw").path }
    var outputPath: String { folder.appendingPathComponent("output.raw").path }
    var captureStartPath: String { folder.appendingPathComponent("capture.start").path }
    var playbackStartPath: String { folder.appendingPathComponent("playback.start").path }

    /// Writes the configuration and the microphone's input.
    init(input: [Float]) throws {
        let library = try Self.plugin.get()
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hearalert-clocked-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        configPath = folder.appendingPathComponent("asound.conf").path
        try ALSATestDevices.pcm16(input).write(to: URL(fileURLWithPath: folder.appendingPathComponent("input.raw").path))
        let config = """
            </usr/share/alsa/alsa.conf>
            pcm_type.hearalert_clock { lib "\(library)" }
            pcm.hearalert_clock_capture {
                type hearalert_clock
                file "\(inputPath)"
                start_file "\(captureStartPath)"
            }
            pcm.hearalert_clock_playback {
                type hearalert_clock
                file "\(outputPath)"
                start_file "\(playbackStartPath)"
            }
            """
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// What reached the ear, one sample per 1/rate seconds from `playbackStart`.
    func heard() throws -> [Float] {
        let data = try Data(contentsOf: URL(fileURLWithPath: outputPath))
        return data.withUnsafeBytes { raw in
            raw.bindMemory(to: Int16.self).map { Float(Int16(littleEndian: $0)) / 32768 }
        }
    }

    /// Nanoseconds from the microphone's time 0 to the headphones' time 0.
    func playbackStartsAfterCapture() throws -> Int64 {
        func read(_ path: String) throws -> Int64 {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            guard let value = Int64(text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
                throw CocoaError(.fileReadCorruptFile)
            }
            return value
        }
        return try read(playbackStartPath) - read(captureStartPath)
    }

    func remove() {
        try? FileManager.default.removeItem(at: folder)
    }
}
