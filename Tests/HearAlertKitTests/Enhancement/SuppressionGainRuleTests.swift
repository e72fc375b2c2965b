import Foundation
import Testing
@testable import HearAlertKit

struct SuppressionGainRuleTests {
    private func gains(
        rule: SuppressionGainRule, power: [Float], noise: [Float], alertActive: Bool = false
    ) -> [Float] {
        var result = [Float](repeating: .nan, count: power.count)
        power.withUnsafeBufferPointer { power in
            noise.withUnsafeBufferPointer { noise in
                result.withUnsafeMutableBufferPointer { result in
                    rule.computeGains(power: power, noise: noise, alertActive: alertActive, into: result)
                }
            }
        }
        return result
    }

    /// The literature's constants, which the higher-quality mode uses: a = 0.98, α up to 1.75.
    static let literature = SuppressionGainRule.Tuning(
        decisionDirectedFactor: 0.98, fullStrengthOverSubtraction: 1.75)

    private func expectGains(rule: SuppressionGainRule, noise: [Float], expected: [[Float]]) {
        for (frame, expected) in zip(Self.frames, expected) {
            let result = gains(rule: rule, power: frame.power, noise: noise, alertActive: frame.alert)
            for (got, expected) in zip(result, expected) {
                #expect(abs(got - expected) < 1e-5, "got \(result), expected \(expected)")
            }
        }
    }

    /// Five frames over noise [1, 1, 2]; the third and fourth with the alert flag on, the last after it.
    static let frames: [(power: [Float], alert: Bool)] = [
        ([1, 10, 1000], false), ([2, 0.5, 800], false), ([0.5, 1.2, 6], true), ([0.5, 0.6, 1], true),
        ([1, 10, 1000], false),
    ]

    /// Golden gains from an independent numpy transcription of the documented rule (a = 0.98^(4 ms/10 ms),
    /// ξmin = −25 dB, α from 1 + 0.75·s at −5 dB to 1 at 20 dB, floor −30·s dB, memory W²·|Y|² + W·λ; while
    /// flagged, γ spread over bins by (¼, ½, ¼) with the edge bin repeated and averaged by 0.9^(4 ms/10 ms) from
    /// the first flagged frame, unit gain where the average is ≥ 1 dB, otherwise at least −6 dB). In the
    /// flagged frames bin 0 (γ = 0.5) is held at −6 dB instead of the floor, bin 1 (γ = 1.2 then 0.6) passes on
    /// its neighbour and the average, bin 2 (γ = 3 then 0.5) on the average.
    @Test func matchesNumpyReferenceOverFiveFrames() {
        let rule = SuppressionGainRule(
            binCount: 3, hopSeconds: 0.004, strength: 0.7, alertDominanceDB: 1, alertSuppressionLimitDB: 6,
            tuning: Self.literature)
        expectGains(rule: rule, noise: [1, 1, 2], expected: [
            [0.08912509381337455, 0.8780390926982258, 0.998],
            [0.08912509381337455, 0.8770749637202656, 0.9979967754018509],
            [0.5011872336272722, 1.0, 1.0],
            [0.5011872336272722, 1.0, 1.0],
            [0.08912509381337455, 0.14104433871534738, 0.7924447215553704],
        ])
    }

    /// The same frames with the low-latency mode's constants (a = 0.95 at 10 ms, α up to 1 + 0.36·s), golden
    /// values from the same numpy transcription.
    @Test func lowLatencyTuningMatchesNumpyReference() {
        let rule = SuppressionGainRule(
            binCount: 3, hopSeconds: 0.004, strength: 0.7, alertDominanceDB: 1, alertSuppressionLimitDB: 6,
            tuning: .init(mode: .lowLatency))
        expectGains(rule: rule, noise: [1, 1, 2], expected: [
            [0.08912509381337455, 0.8894587644951484, 0.998],
            [0.08912509381337455, 0.8873092472893791, 0.9979918435634839],
            [0.5011872336272722, 1.0, 1.0],
            [0.5011872336272722, 1.0, 1.0],
            [0.08912509381337455, 0.321813646637513, 0.9103610690818948],
        ])
        #expect(SuppressionGainRule.Tuning(mode: .higherQuality) == Self.literature)
    }

    @Test func zeroStrengthPassesEverythingUnchanged() {
        let rule = SuppressionGainRule(
            binCount: 4, hopSeconds: 0.004, strength: 0, alertDominanceDB: 1, alertSuppressionLimitDB: 6,
            tuning: Self.literature)
        for power: [Float] in [[0, 0.5, 1, 100], [1, 1, 1, 1], [1e-9, 2, 3, 4]] {
            #expect(gains(rule: rule, power: power, noise: [1, 1, 1, 1]) == [1, 1, 1, 1])
        }
    }

    /// The shape of Berouti et al.'s (1979) α = α0 − (3/20)·SNR, held outside −5…20 dB: at full strength it
    /// runs from 1.75 at −5 dB to 1 at 20 dB, i.e. 1.75 − 0.03·(SNR + 5).
    @Test func overSubtractionFollowsBeroutisLine() {
        let rule = SuppressionGainRule(
            binCount: 1, hopSeconds: 0.01, strength: 1, alertDominanceDB: 1, alertSuppressionLimitDB: 6,
            tuning: Self.literature)
        for snrDB: Float in [-10, -5, 0, 7.5, 13, 20, 30] {
            let expected = 1.75 - 0.03 * (min(max(snrDB, -5), 20) + 5)
            let got = rule.overSubtraction(prioriSNR: pow(10, snrDB / 10))
            #expect(abs(got - expected) < 1e-4, "at \(snrDB) dB: \(got) vs \(expected)")
        }
    }

    @Test func steadyNoiseSinksToTheFloorAndLoudSpeechPasses() {
        let rule = SuppressionGainRule(
            binCount: 2, hopSeconds: 0.004, strength: 1, alertDominanceDB: 1, alertSuppressionLimitDB: 6,
            tuning: Self.literature)
        var last: [Float] = []
        for _ in 0..<200 { last = gains(rule: rule, power: [1, 1000], noise: [1, 1]) }
        #expect(abs(20 * log10(last[0]) - -30) < 0.01)
        #expect(last[1] > 0.99)
    }

    /// While flagged, a bin whose power falls from 3× the frozen noise to the noise itself keeps passing while
    /// the ~95 ms average decays: 1 + 2·s^n ≥ 1 dB with s = 0.9^(4 ms/10 ms), i.e. for n ≤ 48 frames (194 ms)
    /// after the drop, and is held at −6 dB from then on; a fresh flag starts the average anew.
    @Test func alertBinsHoldForTheAveragesMemoryThenRelease() {
        let rule = SuppressionGainRule(
            binCount: 3, hopSeconds: 0.004, strength: 0.7, alertDominanceDB: 1, alertSuppressionLimitDB: 6,
            tuning: Self.literature)
        let noise: [Float] = [1, 1, 1]
        let limit = Float(pow(10, -6.0 / 20))
        #expect(gains(rule: rule, power: [3, 3, 3], noise: noise, alertActive: true) == [1, 1, 1])
        let decay = (0..<60).map { _ in gains(rule: rule, power: noise, noise: noise, alertActive: true)[1] }
        let smoothing = pow(0.9, 0.4)
        let lastPassing = Int((log(pow(10, 0.1) - 1) - log(2.0)) / log(smoothing))   // 48
        #expect(decay[..<lastPassing].allSatisfy { $0 == 1 }, "\(decay)")
        #expect(decay[lastPassing...].allSatisfy { abs($0 - limit) < 1e-6 }, "\(decay)")
        _ = gains(rule: rule, power: noise, noise: noise, alertActive: false)
        #expect(gains(rule: rule, power: [3, 3, 3], noise: noise, alertActive: true) == [1, 1, 1])
    }
}
