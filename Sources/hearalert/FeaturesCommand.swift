import ArgumentParser
import Foundation
import HearAlertKit

/// `hearalert features`: writes exactly the features a model sees, for a researcher to inspect in numpy.
struct FeaturesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "features",
        abstract: "Compute log-Mel or log-power features of an audio file and save them as .npy.",
        discussion: """
            Reads any file libsndfile decodes (WAV, FLAC, OGG/Vorbis, AIFF, ...), mixes it to mono, resamples it \
            to the spec's rate and writes a float32 array [frames, bins] that numpy.load reads. Frames follow \
            the FeatureSpec exactly (see CSources/alertnet/FORMAT.md); without --spec the default model's spec is \
            used (16 kHz, n_fft 512, hop 256, 64 Slaney Mel bands 50-8000 Hz, dB).

            Examples:
              hearalert features models/demo.wav -o demo.npy
              python3 -c "import numpy; print(numpy.load('demo.npy').shape)"
              hearalert features speech.flac --spec my-spec.json -o speech.npy
            """
    )

    @Argument(help: "Audio file to analyse (WAV, FLAC, OGG/Vorbis, AIFF, ...).")
    var input: String

    @Option(help: "FeatureSpec JSON file (the `features` object of a model). Default: the default model's spec.")
    var spec: String?

    @Option(name: [.short, .customLong("output")], help: "Where to write the float32 [frames, bins] .npy file.")
    var output: String

    /// What the command reads: the output must be none of these.
    private var inputs: [CommandInput] {
        [CommandInput(role: "input file", path: input)] + (spec.map { [CommandInput(role: "--spec file", path: $0)] } ?? [])
    }

    mutating func validate() throws {
        // The features put in place of the recording they came from would lose it.
        try validateOutput(output, option: "-o", inputs: inputs)
    }

    mutating func run() throws {
        let featureSpec = try spec.map { try FeatureSpec(contentsOf: URL(fileURLWithPath: $0)) } ?? FeatureSpec()
        let extractor = try FeatureExtractor(spec: featureSpec)
        let reader = try AudioFileReader(path: input, sampleRate: featureSpec.sampleRate)
        let writer = try NPYWriter(path: output, columns: featureSpec.binCount, protecting: inputs)
        do {
            try extractor.process(reader) { try writer.append($0) }
            try writer.close()
        } catch {
            // A half-written array would look like a short recording: the previous file stays instead.
            writer.discard()
            throw error
        }
        print(
            "\(output): \(writer.rows) frames × \(writer.columns) \(featureSpec.kind.rawValue) bins from \(input) "
                + "(\(String(format: "%.2f", reader.duration)) s at \(reader.sourceSampleRate) Hz, "
                + "\(reader.sourceChannels) channel\(reader.sourceChannels == 1 ? "" : "s"))")
    }
}
