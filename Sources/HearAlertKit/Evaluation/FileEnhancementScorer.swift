import Foundation

/// Runs the speech enhancer over one corpus file the way the live pipeline would, and scores its output against
/// the clean speech (with the alert stem added, when there is one) using `EnhancementMetrics`.
///
/// The alert pass-through follows the detector: the enhancer is told an alert is active when the live listener
/// would tell it (`FileDetection.alertActivity`), so scores include the cost of late or missed alerts.
/// Holds one enhancer; not `Sendable` (one per worker thread), and it reads whole files into memory, which is
/// fine for corpus clips of seconds to minutes.
public final class FileEnhancementScorer {
    private let enhancer: SpeechEnhancer
    private let sampleRate: Int

    /// Segmental SNR framing: 30 ms frames every 7.5 ms, as Loizou's `comp_snr`.
    private var segmentFrame: Int { sampleRate * 30 / 1000 }
    private var segmentHop: Int { sampleRate * 75 / 10_000 }

    /// - Parameter sampleRate: the rate files are read and enhanced at (the corpus's `sample_rate`).
    public init(configuration: EnhancerConfiguration = EnhancerConfiguration(), sampleRate: Int) throws {
        enhancer = try SpeechEnhancer(configuration: configuration, sampleRate: sampleRate)
        self.sampleRate = sampleRate
    }

    /// Scores one file of `corpus`, which must have `clean/`.
    ///
    /// The target is what the listener should hear: the clean speech, plus the alert stem when `alerts/`
    /// exists (HearAlert keeps alerts audible on purpose, so an alert in the output is not an error).
    public func score(_ file: CorpusFile, in corpus: Corpus, alertActivity: [Range<Double>]) throws
        -> FileEnhancementScore
    {
        let mixturePath = corpus.audioPath(of: file)
        let mixture = try AudioFile.readAll(path: mixturePath, sampleRate: sampleRate,
                                            largestMagnitude: SpeechEnhancer.largestInputMagnitude)
        var target = try readAligned(corpus.cleanPath(of: file), length: mixture.count, mixturePath: mixturePath)
        let output = enhance(mixture, alertActivity: alertActivity)
        var retained: Double?
        if corpus.hasAlertStems {
            let alerts = try readAligned(corpus.alertsPath(of: file), length: mixture.count, mixturePath: mixturePath)
            for index in target.indices { target[index] += alerts[index] }
            let during = sampleRanges(of: file.events, count: mixture.count)
            if !during.isEmpty {
                retained = EnhancementMetrics.alertEnergyRetained(
                    alert: during.flatMap { alerts[$0] }, output: during.flatMap { output[$0] })
            }
        }
        return FileEnhancementScore(
            snrInDB: EnhancementMetrics.signalToNoiseRatio(reference: target, estimate: mixture),
            snrOutDB: EnhancementMetrics.signalToNoiseRatio(reference: target, estimate: output),
            segmentalSNRInDB: EnhancementMetrics.segmentalSNR(
                reference: target, estimate: mixture, frameLength: segmentFrame, hopLength: segmentHop),
            segmentalSNROutDB: EnhancementMetrics.segmentalSNR(
                reference: target, estimate: output, frameLength: segmentFrame, hopLength: segmentHop),
            alertRetainedDB: retained
        )
    }

    /// A stem must be sample-aligned with the mixture and as long (shared/docs/CORPUS.md).
    private func readAligned(_ path: String, length: Int, mixturePath: String) throws -> [Float] {
        let samples = try AudioFile.readAll(path: path, sampleRate: sampleRate)
        guard samples.count == length else {
            throw TextFileError(file: path, "has \(samples.count) samples at \(sampleRate) Hz but \(mixturePath) has \(length)")
        }
        return samples
    }

    /// The enhancer's output, delayed back by its latency so sample k is the enhanced input sample k.
    private func enhance(_ input: [Float], alertActivity: [Range<Double>]) -> [Float] {
        enhancer.reset()
        let hop = enhancer.hopLength, latency = enhancer.latencySamples
        let hops = (input.count + latency + hop - 1) / hop
        let padded = input + [Float](repeating: 0, count: hops * hop - input.count)
        var output = [Float](repeating: 0, count: hops * hop)
        padded.withUnsafeBufferPointer { source in
            output.withUnsafeMutableBufferPointer { destination in
                for index in 0..<hops {
                    let time = Double(index * hop) / Double(sampleRate)
                    enhancer.setAlertActive(alertActivity.contains { $0.contains(time) })
                    enhancer.process(UnsafeBufferPointer(rebasing: source[index * hop..<(index + 1) * hop]),
                                     into: UnsafeMutableBufferPointer(rebasing: destination[index * hop..<(index + 1) * hop]))
                }
            }
        }
        return Array(output[latency..<(latency + input.count)])
    }

    /// The sample ranges the events cover, merged where they overlap, clipped to the signal.
    private func sampleRanges(of events: [SoundEvent], count: Int) -> [Range<Int>] {
        let ranges = events.map { event -> Range<Int> in
            let start = min(count, max(0, Int((event.onset * Double(sampleRate)).rounded())))
            let end = min(count, max(start, Int((event.offset * Double(sampleRate)).rounded())))
            return start..<end
        }.sorted { $0.lowerBound < $1.lowerBound }
        var merged: [Range<Int>] = []
        for range in ranges {
            if let last = merged.last, range.lowerBound <= last.upperBound {
                merged[merged.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }
}
