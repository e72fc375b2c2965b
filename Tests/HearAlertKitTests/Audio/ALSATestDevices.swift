import Foundation

/// ALSA devices for tests on machines without a sound card, through the real ALSA API.
///
/// An ALSA configuration (pointed to by `ALSA_CONFIG_PATH`) includes the system's alsa.conf and adds:
/// - `hearalert_test_capture`: a `type file` PCM whose `infile` holds raw 16-bit mono 16 kHz samples.
/// - `hearalert_test_playback`: a `type file` PCM that writes what is played to a raw 16-bit file.
/// - `hearalert_test_failing`: the capture device again, but recording what it captures to /dev/full, so every
///   read fails with an I/O error, as when a USB microphone is unplugged.
/// - `hearalert_test_lossy`: the capture device again, recording what it captures to a file in the folder. Run
///   under a file-size limit with SIGXFSZ ignored (see `ListenEndToEndTests.ListenRun`), a read fails once that
///   file is full, as when a USB microphone is unplugged mid-stream, and the device works again when reopened
///   (ALSA truncates the file): a capture device lost and reopened, with audio before and after.
/// - `hearalert_test_float_only`: a null device behind an `lfloat` plugin that accepts only float samples, so
///   opening it exercises HearAlert's fallback through ALSA's `plug` layer.
///
/// The file plugin's `infile` is only read correctly when no conversion plugin sits above it (through `plug` or
/// `linear` conversions, alsa-lib 1.2.8 skips input frames), which is one reason HearAlert asks devices for the
/// 16-bit samples they deliver natively.
///
/// Two facts of the file plugin shape the tests: it does not pace reads in real time (a regular input file is
/// read as fast as asked), and at the end of its input it keeps returning full counts while leaving the buffer
/// untouched (the last block repeats). So the harness decides how much audio the listener sees: either a regular
/// file and a reader that stops after the known number of frames, or a FIFO that the test writes at its own
/// pace, with `listen --duration` or SIGINT ending the run before the writer closes.
struct ALSATestDevices {
    let folder: URL
    let configPath: String
    let inputPath: String
    let outputPath: String

    /// Writes the configuration; `fifo` makes the capture input a named pipe instead of a regular file.
    init(fifo: Bool) throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hearalert-alsa-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        inputPath = folder.appendingPathComponent(fifo ? "input.fifo" : "input.raw").path
        outputPath = folder.appendingPathComponent("output.raw").path
        configPath = folder.appendingPathComponent("asound.conf").path
        if fifo {
            guard mkfifo(inputPath, 0o600) == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
        }
        let config = """
            </usr/share/alsa/alsa.conf>
            pcm.hearalert_test_file_in {
                type file
                slave.pcm null
                file "/dev/null"
                infile "\(inputPath)"
                format raw
            }
            pcm.hearalert_test_capture hearalert_test_file_in
            pcm.hearalert_test_playback {
                type file
                slave.pcm null
                file "\(outputPath)"
                format raw
            }
            pcm.hearalert_test_failing {
                type file
                slave.pcm null
                file "/dev/full"
                infile "\(inputPath)"
                format raw
            }
            pcm.hearalert_test_lossy {
                type file
                slave.pcm null
                file "\(folder.appendingPathComponent("lossy.raw").path)"
                infile "\(inputPath)"
                format raw
            }
            pcm.hearalert_test_float_only {
                type lfloat
                slave { pcm null; format S16_LE }
            }
            """
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)
    }

    /// 16-bit little-endian samples as the capture device's input expects them.
    static func pcm16(_ samples: [Float]) -> Data {
        var data = Data(capacity: samples.count * 2)
        for sample in samples {
            let value = Int16(max(-32768, min(32767, (sample * 32768).rounded())))
            withUnsafeBytes(of: value.littleEndian) { data.append(contentsOf: $0) }
        }
        return data
    }

    /// Reads what the playback device wrote, as floats.
    func playedSamples() throws -> [Float] {
        let data = try Data(contentsOf: URL(fileURLWithPath: outputPath))
        return data.withUnsafeBytes { raw in
            raw.bindMemory(to: Int16.self).map { Float(Int16(littleEndian: $0)) / 32768 }
        }
    }

    func remove() {
        try? FileManager.default.removeItem(at: folder)
    }
}
