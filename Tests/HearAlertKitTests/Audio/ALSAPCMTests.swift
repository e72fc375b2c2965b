import Foundation
import Testing
@testable import HearAlertKit

/// ALSAPCM through the real ALSA library, with file-backed PCMs (see ALSATestDevices). ALSA reads its
/// configuration path from the environment, so these tests share one configuration and run one at a time.
@Suite(.serialized) struct ALSAPCMTests {
    static let devices: ALSATestDevices = {
        let devices = try! ALSATestDevices(fifo: false)
        setenv("ALSA_CONFIG_PATH", devices.configPath, 1)
        return devices
    }()

    @Test func captureReadsTheInputExactly() throws {
        // A known ramp of 16-bit values; float samples must equal value / 32768 exactly.
        let values = (0..<4000).map { Float(($0 * 37) % 20000 - 10000) / 32768 }
        try ALSATestDevices.pcm16(values).write(to: URL(fileURLWithPath: Self.devices.inputPath))
        let pcm = try ALSAPCM(device: "hearalert_test_capture", direction: .capture, sampleRate: 16_000,
                              periodFrames: 160)
        #expect(pcm.device == "hearalert_test_capture")
        #expect(pcm.periodFrames > 0 && pcm.bufferFrames >= 2 * pcm.periodFrames)
        var received: [Float] = []
        var block = [Float](repeating: 0, count: 256)
        while received.count < values.count {
            let count = try block.withUnsafeMutableBufferPointer { try pcm.read(into: $0) }
            received += block[0..<count]
        }
        let mismatch = zip(received, values).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(mismatch == nil, "first difference at sample \(mismatch?.offset ?? -1): \(String(describing: mismatch?.element))")
    }

    @Test func playbackWritesWhatIsPlayed() throws {
        let values = (0..<3200).map { Float(sin(Double($0) * 0.05) * 0.5) }
        do {
            let pcm = try ALSAPCM(device: "hearalert_test_playback", direction: .playback, sampleRate: 16_000,
                                  periodFrames: 160)
            var written = 0
            try values.withUnsafeBufferPointer { all in
                while written < all.count {
                    written += try pcm.write(UnsafeBufferPointer(rebasing: all[written...]))
                }
            }
        }  // closing the PCM flushes the file plugin
        let played = try Self.devices.playedSamples()
        #expect(played.count >= values.count)
        let worst = zip(played, values).map { abs($0 - $1) }.max() ?? 1
        #expect(worst <= 1.0 / 32768 + 1e-7)
    }

    @Test func deviceThatCannotDeliverSixteenBitsIsOpenedThroughPlug() throws {
        _ = Self.devices
        let pcm = try ALSAPCM(device: "hearalert_test_float_only", direction: .capture, sampleRate: 16_000,
                              periodFrames: 160)
        #expect(pcm.device == "plug:'hearalert_test_float_only'")
        var block = [Float](repeating: 0, count: 160)
        #expect(try block.withUnsafeMutableBufferPointer { try pcm.read(into: $0) } > 0)
    }

    @Test func unknownDeviceIsAOneLineError() {
        #expect {
            _ = try ALSAPCM(device: "hearalert_no_such_device", direction: .capture, sampleRate: 16_000,
                            periodFrames: 160)
        } throws: { error in
            "\(error)".hasPrefix("cannot open audio device 'hearalert_no_such_device'")
        }
    }

    @Test func deviceListIncludesTheConfiguredPCMs() throws {
        _ = Self.devices
        let names = try ALSADevice.all().map(\.name)
        #expect(names.contains("null"))
    }
}
