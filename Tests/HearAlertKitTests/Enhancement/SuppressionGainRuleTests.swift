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

    private func expectGains(
        rule: SuppressionGainRule, noise: [Float], frames: [(power: [Float], alert: Bool, expected: [Float])]
    ) {
        for frame in frames {
            let result = gains(rule: rule, power: frame.power, noise: noise, alertActive: frame.alert)
            for (got, expected) in zip(result, frame.expected) {
                #expect(abs(got - expected) < 1e-5, "got \(result), expected \(frame.expected)")
            }
        }
    }

    /// Golden gains from an independent numpy transcription of the documented rule (a = 0.98^(4 ms/10 ms),
    /// ξmin = −25 dB, α from 1 + 0.75·s at −5 dB to 1 at 20 dB, floor −30·s dB, alert bins with γ ≥ 3 dB at 1,
    /// memory W²·|Y|² + W·λ): three frames over noise [1, 1, 2], the last with the alert flag on.
    @Test func matchesNumpyReferenceOverThreeFrames() {
        let rule = SuppressionGainRule(
            binCount: 3, hopSeconds: 0.004, strength: 0.7, alertDominanceDB: 3, tuning: Self.literature)
        expectGains(rule: rule, noise: [1, 1, 2], frames: [
            ([1, 10, 1000], false, [0.08912509679794312, 0.8780391216278076, 0.9980000257492065]),
            ([2, 0.5, 800], false, [0.08912509679794312, 0.8770749568939209, 0.9979967474937439]),
            ([1, 30, 0.2], true, [0.08912509679794312, 1.0, 0.9974822402000427]),
        ])
    }

    /// The same frames with the low-latency mode's constants (a = 0.95 at 10 ms, α up to 1 + 0.36·s), golden
    /// values from the same numpy transcription.
    @Test func lowLatencyTuningMatchesNumpyReference() {
        let rule = SuppressionGainRule(
            binCount: 3, hopSeconds: 0.004, strength: 0.7, alertDominanceDB: 3, tuning: .init(mode: .lowLatency))
        expectGains(rule: rule, noise: [1, 1, 2], frames: [
            ([1, 10, 1000], false, [0.08912509381337455, 0.8894587644951484, 0.998]),
            ([2, 0.5, 800], false, [0.08912509381337455, 0.8873092472893791, 0.9979918435634839]),
            ([1, 30, 0.2], true, [0.08912509381337455, 1.0, 0.9974508140782224]),
        ])
        #expect(SuppressionGainRule.Tuning(mode: .higherQuality) == Self.literature)
    }

    @Test func zeroStrengthPassesEverythingUnchanged() {
        let rule = SuppressionGainRule(
            binCount: 4, hopSeconds: 0.004, strength: 0, alertDominanceDB: 3, tuning: Self.literature)
        for power: [Float] in [[0, 0.5, 1, 100], [1, 1, 1, 1], [1e-9, 2, 3, 4]] {
            #expect(gains(rule: rule, power: power, noise: [1, 1, 1, 1]) == [1, 1, 1, 1])
        }
    }

    /// The shape of Berouti et al.'s (1979) α = α0 − (3/20)·SNR, held outside −5…20 dB: at full strength it
    /// runs from 1.75 at −5 dB to 1 at 20 dB, i.e. 1.75 − 0.03·(SNR + 5).
    @Test func overSubtractionFollowsBeroutisLine() {
        let rule = SuppressionGainRule(
            binCount: 1, hopSeconds: 0.01, strength: 1, alertDominanceDB: 3, tuning: Self.literature)
        for snrDB: Float in [-10, -5, 0, 7.5, 13, 20, 30] {
            let expected = 1.75 - 0.03 * (min(max(snrDB, -5), 20) + 5)
            let got = rule.overSubtraction(prioriSNR: pow(10, snrDB / 10))
            #expect(abs(got - expected) < 1e-4, "at \(snrDB) dB: \(got) vs \(expected)")
        }
    }

    @Test func steadyNoiseSinksToTheFloorAndLoudSpeechPasses() {
        let rule = SuppressionGainRule(
            binCount: 2, hopSeconds: 0.004, strength: 1, alertDominanceDB: 3, tuning: Self.literature)
        var last: [Float] = []
        for _ in 0..<200 { last = gains(rule: rule, power: [1, 1000], noise: [1, 1]) }
        #expect(abs(20 * log10(last[0]) - -30) < 0.01)
        #expect(last[1] > 0.99)
    }
}
