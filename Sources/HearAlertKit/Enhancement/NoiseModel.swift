import Foundation

/// A learned noise estimator's weight file (alertnet format, task `noise_estimation`), checked against the
/// enhancer framing it will run in, with everything the estimator derives from it once: the band filters, the
/// bands' centres and how the input rows are made (`noise_input`, `CSources/alertnet/FORMAT.md`).
///
/// One per `LearnedNoiseEstimator`: the network's workspace is reused by every run, so it cannot be shared.
final class NoiseModel {
    /// How the rows after the recent band energies are made (the file's `noise_input`).
    struct InputRows: Decodable, Equatable {
        /// K: band-energy frames of the most recent hops in the input, oldest first.
        let recentFrames: Int
        /// α of the smoothed powers (band and bin), quoted per `smoothingHopSeconds` and carried to the hop.
        let smoothing: Double
        let smoothingHopSeconds: Double
        /// V and U of the minimum statistic: the minimum of the smoothed band power over the current block of
        /// V frames and the U − 1 complete blocks before it.
        let minimumBlockFrames: Int
        let minimumBlocks: Int

        enum CodingKeys: String, CodingKey, CaseIterable {
            case recentFrames = "recent_frames"
            case smoothing
            case smoothingHopSeconds = "smoothing_hop_seconds"
            case minimumBlockFrames = "minimum_block_frames"
            case minimumBlocks = "minimum_blocks"
        }
    }

    let network: AlertModel
    let rows: InputRows
    /// The file's band filters over the enhancer's bins.
    let filterbank: MelFilterbank
    /// Each band's centre of mass, in bins (increasing): where its noise fraction holds exactly.
    let bandCentres: [Double]
    /// Hops between two runs of the network (the file's context `step`); its output is held in between.
    var step: Int { network.decisionStep }
    var bandCount: Int { filterbank.bands.count }

    /// Loads `path` and checks that it is a noise estimator for frames of `fftSize` samples every `hopLength` at
    /// `sampleRate` (the framing the file was trained with must be the enhancer's).
    init(path: String, sampleRate: Int, fftSize: Int, hopLength: Int) throws(EnhancerError) {
        func refuse(_ reason: String) -> EnhancerError { .invalidNoiseModel(path: path, reason: reason) }
        do {
            network = try AlertModel(path: path)
            try network.require(.noiseEstimation)
        } catch let error as AlertModelError {
            throw refuse("\(error)")
        } catch {
            throw refuse("\(error)")
        }
        let spec = network.featureSpec
        guard spec.sampleRate == sampleRate, spec.nFFT == fftSize, spec.hopLength == hopLength else {
            throw refuse(
                "it was trained on \(spec.nFFT)-sample frames every \(spec.hopLength) samples at \(spec.sampleRate) Hz; "
                    + "this enhancer frames \(fftSize) samples every \(hopLength) at \(sampleRate) Hz")
        }
        guard spec.kind == .logMel, spec.window == .sqrtHann, spec.winLength == spec.nFFT, spec.power == 2,
              spec.normalization == nil
        else {
            throw refuse("its features must be log_mel bands of the enhancer's power spectrum (window sqrt_hann over "
                         + "n_fft, power 2, no normalization; FORMAT.md, Noise estimators)")
        }
        guard let text = network.metadata("noise_input") else { throw refuse("metadata noise_input is missing") }
        let input: InputRows
        do {
            let data = Data(text.utf8)
            let keys = Set(((try JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]).keys)
            let unknown = keys.subtracting(InputRows.CodingKeys.allCases.map(\.rawValue))
            guard unknown.isEmpty else { throw refuse("noise_input has unknown key(s) \(unknown.sorted())") }
            input = try JSONDecoder().decode(InputRows.self, from: data)
        } catch let error as EnhancerError {
            throw error
        } catch {
            throw refuse("noise_input is not the JSON object FORMAT.md describes")
        }
        guard input.recentFrames >= 1, input.recentFrames + 3 == network.contextFrames else {
            throw refuse("noise_input recent_frames \(input.recentFrames) + 3 rows must equal the context's "
                         + "\(network.contextFrames) frames")
        }
        guard input.smoothing > 0, input.smoothing < 1, input.smoothingHopSeconds > 0,
              input.minimumBlockFrames >= 1, input.minimumBlocks >= 1, input.minimumBlocks <= 1024
        else { throw refuse("noise_input values out of range (FORMAT.md, Noise estimators)") }
        guard network.labels.count == spec.nMels else {
            throw refuse("it gives \(network.labels.count) outputs for \(spec.nMels) bands")
        }
        filterbank = MelFilterbank(spec: spec)
        let centres = filterbank.bands.map { band -> Double in
            let total = band.weights.reduce(0) { $0 + Double($1) }
            let moment = band.weights.enumerated().reduce(0) { $0 + Double(band.firstBin + $1.offset) * Double($1.element) }
            return total > 0 ? moment / total : .nan
        }
        guard zip(centres, centres.dropFirst()).allSatisfy({ $0 < $1 }), centres.allSatisfy(\.isFinite) else {
            throw refuse("a band covers no bin at \(fftSize)-point frames (too many bands for this resolution)")
        }
        bandCentres = centres
        rows = input
    }
}
