import Foundation
import Testing
@testable import HearAlertKit

/// Detection on the fixture clip with the hand-built tone model (tools/fixtures/make_detector_fixtures.py). The
/// expected events are the clip's construction (alerts_clip.tsv), not anything this code computed.
@Suite struct FileDetectorTests {
    static let folder = Bundle.module.url(forResource: "Fixtures/detector", withExtension: nil)!
    static var modelPath: String { folder.appendingPathComponent("tone_model.safetensors").path }
    static var clipPath: String { folder.appendingPathComponent("alerts_clip.wav").path }

    static func reference() throws -> [(label: String, onset: Double, offset: Double)] {
        let text = try String(contentsOf: folder.appendingPathComponent("alerts_clip.tsv"), encoding: .utf8)
        return text.split(separator: "\n").dropFirst().map { row in
            let fields = row.split(separator: "\t")
            return (String(fields[3]), Double(fields[1])!, Double(fields[2])!)
        }
    }

    static func detector() throws -> FileDetector {
        let model = try AlertModel(path: modelPath)
        return FileDetector(model: model, settings: try TrackerSettings(model: model))
    }

    @Test func findsEachAlertOnceWithinACollar() throws {
        let events = try Self.detector().detect(path: Self.clipPath)
        let reference = try Self.reference()
        #expect(events.map(\.label) == reference.map(\.label))  // the beeps merged into one smoke_alarm event
        for (event, truth) in zip(events, reference) {
            #expect(abs(event.onset - truth.onset) < 0.1, "\(event.label) onset \(event.onset) vs \(truth.onset)")
            #expect(abs(event.offset - truth.offset) < 0.2, "\(event.label) offset \(event.offset) vs \(truth.offset)")
            // Announced after the sound began, and within the context window plus smoothing and min duration.
            #expect(event.detectedAt > truth.onset && event.detectedAt - truth.onset < 0.5)
            #expect(event.peakScore > 0.9)
        }
    }

    @Test func progressRisesToOne() throws {
        var fractions: [Double] = []
        _ = try Self.detector().detect(path: Self.clipPath) { fractions.append($0) }
        #expect(fractions == fractions.sorted())
        #expect(abs((fractions.last ?? 0) - 1) < 1e-9)
    }

    /// The live path delivers audio in whatever pieces ALSA hands over: the messages must not depend on them.
    @Test func messagesDoNotDependOnBlockSizes() throws {
        let model = try AlertModel(path: Self.modelPath)
        let samples = try AudioFile.readAll(path: Self.clipPath, sampleRate: 16_000)
        func messages(blockSizes: [Int]) throws -> [AlertMessage] {
            let detector = try AlertDetector(model: model, settings: try TrackerSettings(model: model))
            var collected: [AlertMessage] = []
            var start = 0
            var turn = 0
            try samples.withUnsafeBufferPointer { all in
                while start < all.count {
                    let end = min(all.count, start + blockSizes[turn % blockSizes.count])
                    try detector.process(UnsafeBufferPointer(rebasing: all[start..<end])) { collected.append($0) }
                    start = end
                    turn += 1
                }
            }
            detector.finish { collected.append($0) }
            return collected
        }
        let whole = try messages(blockSizes: [samples.count])
        #expect(whole.count == 4)
        #expect(try messages(blockSizes: [1, 37, 160, 4093]) == whole)
    }

    @Test func missingFileIsAnError() throws {
        #expect(throws: (any Error).self) { try Self.detector().detect(path: "/nonexistent/clip.wav") }
    }
}
