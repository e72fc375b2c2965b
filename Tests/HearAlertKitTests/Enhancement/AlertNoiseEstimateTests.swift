import Testing
@testable import HearAlertKit

/// Values chosen by hand: the estimate during an alert is the running minimum of the tracker's values, starting
/// from the value before the alert.
struct AlertNoiseEstimateTests {
    private func follow(_ estimate: AlertNoiseEstimate, _ noise: [Float]) {
        noise.withUnsafeBufferPointer { estimate.follow($0) }
    }

    @Test func fallsWithTheTrackerButNeverRises() {
        let estimate = AlertNoiseEstimate(binCount: 3)
        [Float(4), 4, 4].withUnsafeBufferPointer { estimate.hold(from: $0) }
        #expect(estimate.isHolding)
        follow(estimate, [2, 8, 4])
        #expect(Array(estimate.noisePower) == [2, 4, 4])
        follow(estimate, [3, 1, 5])
        #expect(Array(estimate.noisePower) == [2, 1, 4])
        estimate.release()
        #expect(!estimate.isHolding)
    }

    /// After an alert the tracker, which ran on and may have begun to learn the alert, is lowered to the
    /// estimate used during it; bins already lower keep their value.
    @Test func trackerIsLoweredToTheEstimateAfterTheAlert() {
        let tracker = NoisePowerTracker(binCount: 3, hopSeconds: 0.004)
        [Float(5), 1, 2].withUnsafeBufferPointer { tracker.update(power: $0) }
        [Float(3), 3, 3].withUnsafeBufferPointer { tracker.lower(to: $0) }
        #expect(Array(tracker.noisePower) == [3, 1, 2])
    }
}
