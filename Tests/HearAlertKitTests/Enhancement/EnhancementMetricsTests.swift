import Foundation
import Testing
@testable import HearAlertKit

/// Golden values computed by an independent numpy implementation of the documented definitions:
/// ```
/// n = np.arange(2000)
/// s = (np.sin(2*np.pi*0.01*n) * np.where(n % 700 < 350, 1.0, 0.01)).astype(np.float32); s[1200:1700] = 0
/// e = (s + np.float32(0.1) * np.cos(2*np.pi*0.037*n + 0.3).astype(np.float32)).astype(np.float32)
/// snr = 10*log10(sum(s²)/sum((s-e)²)); segsnr: 480-sample frames every 120, clamp [-10, 35], silent → -10
/// a = (0.5*np.sin(2*np.pi*0.05*n)).astype(np.float32); y = (0.7*a + 0.2*np.cos(2*np.pi*0.011*n)).astype(np.float32)
/// retained = 20*log10(dot(y, a)/dot(a, a))
/// ```
struct EnhancementMetricsTests {
    let reference: [Float]
    let estimate: [Float]

    init() {
        var clean = (0..<2000).map { index -> Float in
            Float(sin(2 * Double.pi * 0.01 * Double(index)) * (index % 700 < 350 ? 1.0 : 0.01))
        }
        for index in 1200..<1700 { clean[index] = 0 }
        reference = clean
        estimate = clean.indices.map { index in
            clean[index] + Float(0.1) * Float(cos(2 * Double.pi * 0.037 * Double(index) + 0.3))
        }
    }

    @Test func snrMatchesNumpy() {
        let snr = EnhancementMetrics.signalToNoiseRatio(reference: reference, estimate: estimate)
        #expect(abs(snr - 15.74074688531315) < 1e-6)
    }

    @Test func segmentalSNRMatchesNumpy() throws {
        let segmental = try #require(
            EnhancementMetrics.segmentalSNR(reference: reference, estimate: estimate, frameLength: 480, hopLength: 120))
        #expect(abs(segmental - 11.401591461358475) < 1e-6)
        #expect(EnhancementMetrics.segmentalSNR(
            reference: [1, 2], estimate: [1, 2], frameLength: 3, hopLength: 1) == nil)
    }

    @Test func perfectReconstructionHitsTheClamp() throws {
        let segmental = try #require(
            EnhancementMetrics.segmentalSNR(reference: estimate, estimate: estimate, frameLength: 480, hopLength: 120))
        #expect(segmental <= 35)
        #expect(EnhancementMetrics.signalToNoiseRatio(reference: estimate, estimate: estimate) == .infinity)
    }

    @Test func alertRetainedMatchesNumpy() throws {
        let alert = (0..<2000).map { Float(0.5 * sin(2 * Double.pi * 0.05 * Double($0))) }
        let output = alert.indices.map { index in
            Float(0.7 * Double(alert[index]) + 0.2 * cos(2 * Double.pi * 0.011 * Double(index)))
        }
        let retained = try #require(EnhancementMetrics.alertEnergyRetained(alert: alert, output: output))
        #expect(abs(retained - -3.098039203718865) < 1e-6)
        #expect(EnhancementMetrics.alertEnergyRetained(alert: alert, output: alert.map { -$0 }) == nil)
    }
}
