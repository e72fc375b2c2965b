import Foundation
import Testing
@testable import HearAlertKit

/// The same speech as 16 kHz WAV, FLAC, AIFF, Ogg Vorbis, and 44.1/48 kHz stereo files gives the same features: exactly
/// for lossless formats at the model's rate, and to codec/resampler tolerance otherwise.
///
/// Compared in dB (default spec) where the signal is: frames within 40 dB of the clip's loudest, bands within
/// 40 dB of their frame's loudest and centred below 7 kHz. Above 7 kHz the two resamplers' anti-alias filters
/// (sox up, libsoxr's 91 %-of-Nyquist passband down) legitimately attenuate; in pauses and 40 dB down, Vorbis's
/// psychoacoustic model drops or reshapes content on purpose.
/// Tolerances (mean / max |Δ|, dB) with measured values in brackets:
/// - resampling 44.1 or 48 kHz (24-bit, so no dither) → 16 kHz: 0.01 / 0.2 [≈0.0005 / 0.02]; both converters are
///   flat to well under 0.01 dB there, and the max allows a band straddling 7 kHz;
/// - Ogg Vorbis quality 8: 0.5 / 6 [0.26 / 3.4]: a perceptual codec is "the same sound", not the same samples.
@Suite struct AudioFormatConsistencyTests {
    static let spec = FeatureSpec()

    static func features(_ path: String) throws -> [Float] {
        try FeatureExtractor.features(of: AudioFile.readAll(path: path, sampleRate: spec.sampleRate), spec: spec)
    }

    struct Difference: CustomStringConvertible {
        var mean = 0.0, max = 0.0, compared = 0
        var description: String { "mean \(mean) dB, max \(max) dB over \(compared) values" }
    }

    static func difference(_ reference: [Float], _ other: [Float]) -> Difference {
        let bands = spec.nMels
        let filterbank = MelFilterbank(spec: spec)
        let binHertz = Double(spec.sampleRate) / Double(spec.nFFT)
        let lowBands = filterbank.bands.enumerated().filter { _, band in
            Double(band.firstBin + band.weights.count / 2) * binHertz < 7_000
        }.map(\.offset)
        var result = Difference()
        var total = 0.0
        let loudest = reference.max()!
        for frame in 0..<min(reference.count, other.count) / bands {
            let row = reference[(frame * bands)..<((frame + 1) * bands)]
            let peak = row.max()!
            guard peak >= loudest - 40 else { continue }
            for band in lowBands where reference[frame * bands + band] >= peak - 40 {
                let delta = Double(abs(reference[frame * bands + band] - other[frame * bands + band]))
                total += delta
                result.max = max(result.max, delta)
                result.compared += 1
            }
        }
        result.mean = total / Double(max(result.compared, 1))
        return result
    }

    @Test func sameAudioInEveryFormatGivesTheSameFeatures() throws {
        let scratch = try ScratchFolder()
        let source = FeatureFixtures.url("speech.wav").path
        let reference = try Self.features(source)
        #expect(reference.count == 61 * 64)

        try sox([source, scratch.path("speech.flac")])
        // Lossless and at the model's rate: bit-identical features (FFTW's ESTIMATE plans are deterministic).
        #expect(try Self.features(scratch.path("speech.flac")) == reference, "FLAC is lossless")
        try sox([source, scratch.path("speech.aiff")])
        #expect(try Self.features(scratch.path("speech.aiff")) == reference, "AIFF is lossless")

        try sox([source, "-c", "2", "-r", "44100", "-b", "24", scratch.path("speech44.wav")])
        let resampled44 = Self.difference(reference, try Self.features(scratch.path("speech44.wav")))
        #expect(resampled44.mean < 0.01 && resampled44.max < 0.2, "44.1 kHz stereo WAV: \(resampled44)")

        try sox([source, "-r", "48000", "-b", "24", scratch.path("speech48.flac")])
        let resampled48 = Self.difference(reference, try Self.features(scratch.path("speech48.flac")))
        #expect(resampled48.mean < 0.01 && resampled48.max < 0.2, "48 kHz FLAC: \(resampled48)")

        try sox([source, "-C", "8", scratch.path("speech.ogg")])
        let vorbis = Self.difference(reference, try Self.features(scratch.path("speech.ogg")))
        #expect(vorbis.mean < 0.5 && vorbis.max < 6.0, "Ogg Vorbis: \(vorbis)")
        print("format consistency (speech, default spec): 44.1 kHz WAV \(resampled44); 48 kHz FLAC \(resampled48); "
            + "Vorbis q8 \(vorbis)")
    }
}
