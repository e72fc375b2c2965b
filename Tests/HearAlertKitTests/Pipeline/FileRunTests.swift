import Foundation
import Testing
@testable import HearAlertKit

/// `FileRun` plays a file as `listen` plays the microphone: the file path and the listener's own per-period code
/// (`PeriodProcessor` with its headphone feed, in the listener's headphone periods) must give the same headphone
/// signal, sample for sample. The clip (alerts_clip.wav: a siren and a beeping alarm in noise) makes the tone
/// model announce alerts, so the enhancer's alert flag switches on and off during the run.
@Suite struct FileRunTests {
    static let clip = FileDetectorTests.clipPath

    static func detector() throws -> AlertDetector {
        let model = try AlertModel(path: FileDetectorTests.modelPath)
        return try AlertDetector(model: model, settings: TrackerSettings(model: model))
    }

    /// `hearalert enhance --model`'s output, read back (float WAV: exact).
    static func enhanceFile(alerts: AlertIntervals = AlertIntervals(), detector: AlertDetector?) throws -> [Float] {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let target = scratch.path("out.wav")
        _ = try FileEnhancement.run(inputPath: clip, output: AtomicOutputFile(path: target),
                                    configuration: EnhancerConfiguration(), alerts: alerts, detector: detector)
        return try AudioFile.readAll(path: target, sampleRate: 16_000)
    }

    /// What the listener's processing thread sends to the playback ring for this audio, with a playback device,
    /// delay included.
    static func listenerOutput(_ samples: [Float]) throws -> (output: [Float], latency: Int) {
        let configuration = ListenConfiguration(playbackDevice: "headphones")
        let periodFrames = ListenConfiguration.periodFrames(seconds: configuration.effectivePeriodSeconds,
                                                            sampleRate: 16_000)
        let enhancer = try SpeechEnhancer(configuration: EnhancerConfiguration(), sampleRate: 16_000)
        let ring = SPSCRingBuffer(minimumCapacity: samples.count + periodFrames)
        var processor = PeriodProcessor(detector: try detector(),
                                        feed: HeadphoneFeed(ring: ring, wake: nil, enhancer: enhancer))
        try samples.withUnsafeBufferPointer { all in
            for start in stride(from: 0, to: all.count, by: periodFrames) {
                try processor.process(UnsafeBufferPointer(rebasing: all[start..<min(all.count, start + periodFrames)]),
                                      emit: { _ in })
            }
        }
        var output = [Float](repeating: 0, count: ring.availableToRead)
        _ = output.withUnsafeMutableBufferPointer { ring.read(into: $0) }
        return (output, enhancer.latencySamples)
    }

    @Test func enhancingWithAModelSoundsAsListeningWould() throws {
        let input = try AudioFile.readAll(path: Self.clip, sampleRate: 16_000)
        let file = try Self.enhanceFile(detector: Self.detector())
        let (live, latency) = try Self.listenerOutput(input)
        #expect(file.count == input.count)
        // The listener has no end to flush: compare everything it has played, delay removed.
        let compared = live.count - latency
        #expect(compared > input.count - 2 * latency)
        let firstDifference = (0..<compared).first { file[$0] != live[$0 + latency] }
        #expect(firstDifference == nil)

        // The comparison can tell: keeping alerts audible over the detected events' onset…offset (what
        // `enhance --model` did before it ran the listener's code) or not at all gives another signal.
        let events = try FileDetector(model: AlertModel(path: FileDetectorTests.modelPath),
                                      settings: TrackerSettings(model: AlertModel(path: FileDetectorTests.modelPath)))
            .detect(path: Self.clip)
        #expect(events.count == 2)
        let overEvents = try Self.enhanceFile(alerts: AlertIntervals(events.map { $0.onset...$0.offset }),
                                              detector: nil)
        let withoutAlerts = try Self.enhanceFile(detector: nil)
        #expect((0..<compared).contains { overEvents[$0] != live[$0 + latency] })
        #expect((0..<compared).contains { withoutAlerts[$0] != live[$0 + latency] })
    }

    /// The alert flag's stretches are what the detector says live: each begins at the latest when its alert is
    /// announced (the flag rises at the first decision above threshold, the announcement waits for the minimum
    /// duration) and ends no earlier than the alert's offset.
    @Test func alertActivityFollowsTheDetector() throws {
        var announced: [Double] = []
        var offsets: [Double] = []
        let run = try FileRun(path: Self.clip, sampleRate: 16_000).run(detector: Self.detector(), emit: { message in
            switch message {
            case .started(_, _, _, let detectedAt): announced.append(detectedAt)
            case .ended(let event): offsets.append(event.offset)
            }
        })
        #expect(run.samples == 8 * 16_000)
        #expect(run.alertActivity.count == 2 && announced.count == 2 && offsets.count == 2)
        for (range, (start, end)) in zip(run.alertActivity, zip(announced, offsets)) {
            #expect(range.lowerBound <= start && range.upperBound >= end, "\(range) vs \(start)...\(end)")
        }
    }
}
