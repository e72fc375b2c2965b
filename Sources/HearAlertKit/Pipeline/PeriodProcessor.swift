/// What the processing thread does with one period of capture audio, written once for every way audio is run:
/// `LiveListener` on the microphone, `FileRun` on a file, and the real-time probe.
///
/// The period goes to the detector first (restarting its stream wherever the capture broke, through
/// `CaptureStreamFollower`), then to the headphone feed, told whether an alert may be sounding after that period
/// (`AlertDetector.isAlertPossible`), so the enhancer keeps alert bands from its next hop on. Sharing this code is
/// what makes a file enhanced offline sound as it would have live. Allocates nothing.
package struct PeriodProcessor {
    /// The detection core every period goes through.
    package let detector: AlertDetector
    private var follower: CaptureStreamFollower
    private let feed: HeadphoneFeed?

    /// - Parameters:
    ///   - restarts: where the capture audio breaks; a file, which never breaks, passes a queue nobody fills.
    ///   - feed: the headphone path, or nil when nothing is played.
    package init(detector: AlertDetector, restarts: CaptureRestarts = CaptureRestarts(), feed: HeadphoneFeed?) {
        self.detector = detector
        follower = CaptureStreamFollower(restarts: restarts)
        self.feed = feed
    }

    /// Processes one period and returns whether the feed was told an alert may be sounding. `alertKnown` adds an
    /// alert the caller knows of (listed intervals of a file) to the detector's.
    @discardableResult
    package mutating func process(
        _ period: UnsafeBufferPointer<Float>, alertKnown: Bool = false, emit: (AlertMessage) -> Void
    ) throws -> Bool {
        try follower.deliver(period, to: detector, emit: emit)
        let alertSounding = alertKnown || detector.isAlertPossible
        feed?.play(period, alertSounding: alertSounding)
        return alertSounding
    }

    /// While no audio comes: ends the alerts of a capture device that was lost (see `CaptureStreamFollower`).
    package mutating func waitForAudio(emit: (AlertMessage) -> Void) {
        follower.catchUp(detector: detector, emit: emit)
    }
}
