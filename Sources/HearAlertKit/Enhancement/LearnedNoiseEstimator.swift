import Foundation

/// The noise power per bin from a small causal network (a `NoiseModel`, run by alertnet), for the gain rule in
/// place of MCRA: it follows babble, music and traffic, which the minimum of a second of smoothed power cannot.
///
/// Per hop t, from the periodogram P_t(k) (the research side, `tools/noise_estimator.py`, is the same definition):
/// 1. band energies E_t(b) = Σ_k M(b, k) P_t(k) over the file's Mel filters, and their smoothed power
///    S_t = α S_{t−1} + (1 − α) E_t (α: MCRA's αs = 0.8 at 10 ms, carried to the hop; S_0 = E_0);
/// 2. the minimum of S over the current block of V frames and the U − 1 complete blocks before it
///    (minimum statistics, Martin 2001, without bias compensation: the network learns the rest);
/// 3. MCRA's estimate (`NoisePowerTracker`, run on the same periodograms) pooled into the same bands;
/// 4. every `step` hops the network takes the dB values of the last K band-energy frames (before the stream's
///    first frame, copies of it), S_t, the minimum and MCRA's estimate — past and present frames only — and
///    gives per band the share r(b) ∈ (0, 1) of the smoothed power that is noise; it is held until the next
///    run. With MCRA as an input the network refines the classical estimate rather than replacing it: it can
///    keep MCRA's level through speech, where MCRA is steady, and follow the noise where MCRA lags;
/// 5. λ_t(k): each band's noise power per bin, r(b)·S_t(b) / Σ_k M(b, k), interpolated linearly between the
///    bands' centres (constant beyond the outer ones) — a smooth spectrum. A share of each bin's own smoothed
///    power would carry the speech's harmonics into the estimate and cap the SNR at their peaks at 1/r
///    (measured: it removed speech, STOI −0.05 on real speech in real noise).
///
/// So the estimate follows the noise within tens of milliseconds where the network sees no speech, and sits
/// below the speech where it does. Allocates nothing after init.
final class LearnedNoiseEstimator: NoiseEstimator {
    let binCount: Int
    private let model: NoiseModel
    private let tracker: NoisePowerTracker
    private let smoothing: Float
    private let recentFrames: Int
    private let bandCount: Int
    /// The file's log: multiplier / ln(base) and floor (10·log10 max(x, 10⁻¹⁰) for dB).
    private let logMultiplier: Float
    private let logFloor: Float
    private let blockFrames: Int
    private let earlierBlocks: Int
    /// Per bin: the band whose centre is at or below it (clamped) and the weight of the band above.
    private let lowerBand: [Int]
    private let upperWeight: [Float]

    private let bandEnergy: UnsafeMutableBufferPointer<Float>      // E_t
    private let smoothedBands: UnsafeMutableBufferPointer<Float>   // S_t
    private let blockMinimum: UnsafeMutableBufferPointer<Float>    // this block's minimum of S so far
    private let blockMinima: UnsafeMutableBufferPointer<Float>     // U − 1 complete blocks' minima, [block][band]
    private let recent: UnsafeMutableBufferPointer<Float>          // ring of K rows of dB band energies
    private let input: UnsafeMutableBufferPointer<Float>           // the network's [K + 3][B] window
    private let fractions: UnsafeMutableBufferPointer<Float>       // r(b), held between runs
    private let bandWeight: [Float]                                // Σ_k M(b, k)
    private let density: UnsafeMutableBufferPointer<Float>         // r(b)·S_t(b) / Σ_k M(b, k)
    private let noise: UnsafeMutableBufferPointer<Float>           // λ_t
    private var frame = 0
    private var newestRow = 0
    private var nextBlock = 0
    private(set) var hasStarted = false

    var noisePower: UnsafeBufferPointer<Float> { UnsafeBufferPointer(noise) }
    /// The network's input for the latest hop, `[K + 3][B]` (made every hop, run every `step`), for the tests.
    var networkInput: UnsafeBufferPointer<Float> { UnsafeBufferPointer(input) }

    /// Throws when the file cannot serve frames of `fftSize` samples every `hopLength` at `sampleRate`.
    init(modelPath: String, sampleRate: Int, fftSize: Int, hopLength: Int) throws(EnhancerError) {
        model = try NoiseModel(path: modelPath, sampleRate: sampleRate, fftSize: fftSize, hopLength: hopLength)
        binCount = fftSize / 2 + 1
        tracker = NoisePowerTracker(binCount: binCount, hopSeconds: Double(hopLength) / Double(sampleRate))
        let rows = model.rows
        smoothing = RecursiveSmoothing.factor(
            rows.smoothing, referenceHopSeconds: rows.smoothingHopSeconds,
            hopSeconds: Double(hopLength) / Double(sampleRate))
        recentFrames = rows.recentFrames
        bandCount = model.bandCount
        let spec = model.network.featureSpec
        logMultiplier = Float(spec.logMultiplier / log(spec.logBase))
        logFloor = Float(spec.logFloor)
        blockFrames = rows.minimumBlockFrames
        earlierBlocks = rows.minimumBlocks - 1
        let centres = model.bandCentres
        var lower = [Int](repeating: 0, count: binCount)
        var weight = [Float](repeating: 0, count: binCount)
        for bin in 0..<binCount {
            let position = Double(bin)
            if position >= centres[centres.count - 1] {
                lower[bin] = centres.count - 1
            } else if position > centres[0] {
                let band = centres.lastIndex { $0 <= position }!
                lower[bin] = band
                weight[bin] = Float((position - centres[band]) / (centres[band + 1] - centres[band]))
            }
        }
        lowerBand = lower
        upperWeight = weight
        bandEnergy = .allocate(capacity: bandCount)
        smoothedBands = .allocate(capacity: bandCount)
        blockMinimum = .allocate(capacity: bandCount)
        blockMinima = .allocate(capacity: max(1, earlierBlocks * bandCount))
        recent = .allocate(capacity: recentFrames * bandCount)
        input = .allocate(capacity: (recentFrames + 3) * bandCount)
        fractions = .allocate(capacity: bandCount)
        density = .allocate(capacity: bandCount)
        bandWeight = model.filterbank.bands.map { $0.weights.reduce(0, +) }
        noise = .allocate(capacity: binCount)
        for buffer in [bandEnergy, smoothedBands, blockMinimum, blockMinima, recent, input, fractions, density,
                       noise] {
            buffer.initialize(repeating: 0)
        }
        reset()
    }

    deinit {
        for buffer in [bandEnergy, smoothedBands, blockMinimum, blockMinima, recent, input, fractions, density,
                       noise] {
            buffer.deallocate()
        }
    }

    func reset() {
        for buffer in [bandEnergy, smoothedBands, blockMinimum, recent, input, fractions, density, noise] {
            buffer.update(repeating: 0)
        }
        blockMinima.update(repeating: .infinity)
        tracker.reset()
        frame = 0
        newestRow = 0
        nextBlock = 0
        hasStarted = false
    }

    /// Lowers the MCRA estimate the network reads: its own rows are made afresh from the last few frames, and
    /// the minimum statistic only ever takes the lowest smoothed power.
    func lower(to limit: UnsafeBufferPointer<Float>) { tracker.lower(to: limit) }

    func update(power: UnsafeBufferPointer<Float>) {
        precondition(power.count == binCount, "power spectrum has \(power.count) bins, expected \(binCount)")
        tracker.update(power: power)
        let keep = hasStarted ? smoothing : 0
        for (band, filter) in model.filterbank.bands.enumerated() {
            var energy: Float = 0
            for (offset, weight) in filter.weights.enumerated() { energy += weight * power[filter.firstBin + offset] }
            bandEnergy[band] = energy
            smoothedBands[band] = keep * smoothedBands[band] + (1 - keep) * energy
        }
        updateRows()
        if frame % model.step == 0 { runNetwork() }
        for band in 0..<bandCount { density[band] = fractions[band] * smoothedBands[band] / bandWeight[band] }
        for bin in 0..<binCount {
            let band = lowerBand[bin]
            let weight = upperWeight[bin]
            let value = weight > 0 ? (1 - weight) * density[band] + weight * density[band + 1] : density[band]
            noise[bin] = max(value, NoisePowerTracker.smallestPower)
        }
        hasStarted = true
        frame += 1
    }

    /// The recent band energies (dB) and the minimum statistic for this hop.
    private func updateRows() {
        let multiplier = logMultiplier
        let floor = logFloor
        newestRow = hasStarted ? (newestRow + 1) % recentFrames : 0
        for row in hasStarted ? newestRow...newestRow : 0...(recentFrames - 1) {
            for band in 0..<bandCount { recent[row * bandCount + band] = multiplier * log(max(bandEnergy[band], floor)) }
        }
        let withinBlock = frame % blockFrames
        for band in 0..<bandCount {
            blockMinimum[band] = withinBlock == 0 ? smoothedBands[band] : min(blockMinimum[band], smoothedBands[band])
        }
        // The input window: K recent rows oldest first, then S_t and the minimum, all in the file's log units.
        for age in 0..<recentFrames {
            let row = (newestRow + 1 + age) % recentFrames
            (input.baseAddress! + age * bandCount).update(from: recent.baseAddress! + row * bandCount, count: bandCount)
        }
        let smoothedRow = recentFrames * bandCount
        let minimumRow = smoothedRow + bandCount
        let mcraRow = minimumRow + bandCount
        let mcra = tracker.noisePower
        for (band, filter) in model.filterbank.bands.enumerated() {
            var energy: Float = 0
            for (offset, weight) in filter.weights.enumerated() { energy += weight * mcra[filter.firstBin + offset] }
            input[mcraRow + band] = multiplier * log(max(energy, floor))
        }
        for band in 0..<bandCount {
            var minimum = blockMinimum[band]
            for block in 0..<earlierBlocks { minimum = min(minimum, blockMinima[block * bandCount + band]) }
            input[smoothedRow + band] = multiplier * log(max(smoothedBands[band], floor))
            input[minimumRow + band] = multiplier * log(max(minimum, floor))
        }
        if withinBlock == blockFrames - 1, earlierBlocks > 0 {
            (blockMinima.baseAddress! + nextBlock * bandCount).update(from: blockMinimum.baseAddress!, count: bandCount)
            nextBlock = (nextBlock + 1) % earlierBlocks
        }
    }

    private func runNetwork() {
        // Cannot throw: both buffers were sized from the same model (its input window and its band count).
        try? model.network.predict(UnsafeBufferPointer(input), into: fractions)
    }
}
