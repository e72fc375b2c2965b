import Foundation
import Testing
@testable import HearAlertKit

struct FileEnhancementTests {
    private func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("enhancer-\(UUID().uuidString)-\(name)").path
    }

    private func writeWAV(_ samples: [Float], to path: String, sampleRate: Int = 16000) throws {
        let writer = try AudioFileWriter(path: path, sampleRate: sampleRate, encoding: .float32)
        try samples.withUnsafeBufferPointer { try writer.write($0) }
        try writer.close()
    }

    /// At strength 0 the enhancer reconstructs its input, so the file written must equal the file read, sample
    /// for sample: this checks that the delay is removed and the tail flushed, for a length that is not a whole
    /// number of hops and for both modes.
    @Test(arguments: EnhancerConfiguration.Mode.allCases)
    func outputIsAlignedWithTheInputAndAsLong(mode: EnhancerConfiguration.Mode) throws {
        var signals = EnhancementTestSignals(seed: 21)
        let input = signals.gaussian(count: 16000 + 37, standardDeviation: 0.1)
        let source = temporaryPath("in.wav")
        let target = temporaryPath("out.wav")
        defer { for path in [source, target] { try? FileManager.default.removeItem(atPath: path) } }
        try writeWAV(input, to: source)
        let summary = try FileEnhancement.run(
            inputPath: source, outputPath: target, configuration: .init(mode: mode, strength: 0))
        let output = try AudioFile.readAll(path: target, sampleRate: 16000)
        #expect(summary.samples == input.count && output.count == input.count)
        let worst = zip(input, output).map { abs($0 - $1) }.max() ?? .infinity
        #expect(worst < 1e-5)
    }

    @Test func alertIntervalsComeFromTheRowsForThisFile() throws {
        let table = temporaryPath("alerts.tsv")
        defer { try? FileManager.default.removeItem(atPath: table) }
        try """
            filename\tonset\toffset\tevent_label
            other.wav\t0.000\t9.000\tsiren
            noisy.wav\t5.000\t6.500\tsmoke_alarm
            noisy.wav\t1.000\t2.000\tdoorbell
            noisy.wav\t1.500\t3.000\tphone_ring

            """.write(toFile: table, atomically: true, encoding: .utf8)
        let alerts = try AlertIntervals.load(dcaseTable: table, filename: "noisy.wav")
        #expect(alerts.intervals == [1.0...2.0, 1.5...3.0, 5.0...6.5])
        #expect(alerts.coveredSeconds == 3.5)
        #expect(alerts.overlaps(start: 2.9, end: 3.1))
        #expect(!alerts.overlaps(start: 3.1, end: 4.9))
        #expect(try AlertIntervals.load(dcaseTable: table, filename: "quiet.wav").intervals.isEmpty)
    }

    @Test func malformedAlertRowsAreRejectedWithTheirLine() throws {
        let table = temporaryPath("bad.tsv")
        defer { try? FileManager.default.removeItem(atPath: table) }
        try "filename\tonset\toffset\tevent_label\nnoisy.wav\t4.0\t3.0\tsiren\n"
            .write(toFile: table, atomically: true, encoding: .utf8)
        #expect {
            try AlertIntervals.load(dcaseTable: table, filename: "noisy.wav")
        } throws: { error in
            "\(error)".contains(":2:")
        }
    }
}
