import Dispatch
import Foundation
import Synchronization

/// Live listening: microphone → detection (and the headphone feed) → alert sinks, until stopped.
///
/// Threads, so that nothing slow ever touches audio:
/// ```
/// ALSA capture thread ─► ring ─► processing thread (the caller of `run`): AlertDetector, headphone feed
///                                      │                                   └─► ring ─► ALSA playback thread
///                                      └─► AlertDispatcher (sink thread): stdout, hooks, notifications
/// ```
/// The processing thread allocates nothing per period; it hands messages to the sink thread without waiting.
/// None of the three audio threads writes to standard error: they count what happened (`DeviceEvents`) and a
/// reporter thread (`RealtimeReporter`) writes rate-limited lines, so a stalled terminal or journal only stalls
/// it. They ask for real-time priority where the system permits (`RealtimeScheduling`).
/// With a playback device, the headphone feed is the speech enhancer's output (told whenever an alert is rising
/// or sounding, so it keeps the alert audible), or the microphone signal unchanged without an enhancer.
///
/// Headphone delay, microphone to ear, with the default 2 ms periods and the lowest-latency enhancer (what
/// `listen --output` plays): the capture period (2 ms; the 2 ms hop is collected in the same time), the
/// enhancer's algorithmic delay (2 ms), and what is queued for playback — the device is started with two
/// periods queued, half a period after a write (see `AudioDeviceThread`), and no more than
/// `playbackQueueLimit` is ever kept. Measured on a sound card simulated in ALSA whose pointer moves a period
/// at a time (`ListenDelayTests`): 7.2–7.8 ms, 4.6–5.6 ms with `--no-enhance`, plus the card's converters.
/// `HeadphoneDelayMeter` measures the delay while listening and it is said when listening ends.
public final class LiveListener: Sendable {
    /// Devices, periods and duration, fixed for the listener's life.
    public let configuration: ListenConfiguration
    private let diagnostics: Diagnostics
    private let stopFlag = Atomic<Bool>(false)

    /// Opens nothing yet: devices open in `run`, so a listener can be made before the signal handlers that stop it.
    public init(configuration: ListenConfiguration, diagnostics: Diagnostics = .standardError) {
        self.configuration = configuration
        self.diagnostics = diagnostics
    }

    /// Asks `run` to finish: it closes open events (emitting their `alert_end`), flushes the sinks and returns.
    /// Safe from any thread, e.g. a SIGINT handler's dispatch source.
    public func stop() {
        stopFlag.store(true, ordering: .releasing)
    }

    /// True once `stop()` was called (or `maxDuration` reached and `run` is finishing).
    public var isStopRequested: Bool { stopFlag.load(ordering: .acquiring) }

    /// Listens on the calling thread, which becomes the processing thread, until `stop()` or `maxDuration`.
    ///
    /// Throws if a device cannot be opened at the start (a lost device is retried instead), if the model fails,
    /// or if the sinks could not deliver the last alerts within `flushTimeLimit` (a reader of standard output
    /// that is stuck): shutdown never hangs on output.
    public func run(detector: AlertDetector, enhancer: SpeechEnhancer? = nil, dispatcher: AlertDispatcher) throws {
        let sampleRate = detector.expectedSampleRate
        let periodFrames = ListenConfiguration.periodFrames(seconds: configuration.effectivePeriodSeconds,
                                                            sampleRate: sampleRate)
        let captureEvents = DeviceEvents(role: "capture", device: configuration.captureDevice)
        let playbackEvents = configuration.playbackDevice.map { DeviceEvents(role: "playback", device: $0) }
        let reporter = RealtimeReporter(diagnostics: diagnostics,
                                        facts: captureEvents.facts + (playbackEvents?.facts ?? []))
        reporter.start()
        let outcome = Result {
            try listen(detector: detector, enhancer: enhancer, dispatcher: dispatcher, periodFrames: periodFrames,
                       captureEvents: captureEvents, playbackEvents: playbackEvents, reporter: reporter)
        }
        stop()
        let flushed = dispatcher.finish(waitingAtMost: Self.flushTimeLimit)
        reporter.stop(waitingAtMost: 1)
        try outcome.get()
        guard flushed else { throw LiveListenerError.outputNotFlushed(seconds: Self.flushTimeLimit) }
    }

    /// The most audio the playback side may hold (device buffer and ring) before writing a period; beyond it,
    /// the oldest is dropped (and the person told, as `DeviceEvents` says), so a backlog left by a stall or by
    /// clock drift does not stay as delay. The device
    /// is started with `ALSAPCM.playbackStartPeriods` queued, half a period after a write, and the next write
    /// comes before its first interrupt: in the steady state it holds that many periods plus the one just
    /// written — the slack that lets a write come 1.5 periods late — while the ring holds the next period.
    /// Where the enhancer's hop is longer than a period, the rest of the hop arrives at once and is allowed for.
    static func playbackQueueLimit(periodFrames: Int, hop: Int) -> Int {
        let hopPeriods = (hop + periodFrames - 1) / periodFrames
        return (ALSAPCM.playbackStartPeriods + hopPeriods) * periodFrames
    }

    /// Seconds shutdown waits for the sinks (stdout, hooks) to take the last alerts before giving up on them.
    public static let flushTimeLimit = 3.0

    private func listen(detector: AlertDetector, enhancer: SpeechEnhancer?, dispatcher: AlertDispatcher,
                        periodFrames: Int, captureEvents: DeviceEvents, playbackEvents: DeviceEvents?,
                        reporter: RealtimeReporter) throws {
        let sampleRate = detector.expectedSampleRate
        let stopRequested: @Sendable () -> Bool = { [self] in isStopRequested }
        let devicePriority = configuration.realtimeScheduling ? RealtimeScheduling.devicePriority : nil
        let delayMeter = configuration.playbackDevice.map { _ in
            HeadphoneDelayMeter(sampleRate: sampleRate, enhancerLatency: enhancer?.latencySamples ?? 0)
        }
        // Said when listening ends, however it ends: the delay the person actually had.
        defer { if let summary = delayMeter?.summary { reporter.note(summary) } }
        // A second of slack between capture and processing absorbs a model hiccup without losing audio.
        let capture = AudioDeviceThread(device: configuration.captureDevice, direction: .capture,
                                        sampleRate: sampleRate, periodFrames: periodFrames, ringCapacity: sampleRate,
                                        events: captureEvents, realtimePriority: devicePriority,
                                        delayMeter: delayMeter, stopRequested: stopRequested)
        let captureName = try capture.start()
        var playback: AudioDeviceThread?
        if let output = configuration.playbackDevice, let playbackEvents {
            // The playback ring is small on purpose: audio waiting there is latency.
            let thread = AudioDeviceThread(device: output, direction: .playback, sampleRate: sampleRate,
                                           periodFrames: periodFrames, ringCapacity: 8 * periodFrames,
                                           events: playbackEvents, realtimePriority: devicePriority,
                                           delayMeter: delayMeter,
                                           queueLimit: Self.playbackQueueLimit(periodFrames: periodFrames,
                                                                               hop: enhancer?.hopLength ?? 1),
                                           stopRequested: stopRequested)
            let playbackName = try thread.start()
            reporter.note("playing to '\(playbackName)'")
            playback = thread
        }
        reporter.note("listening on '\(captureName)' at \(sampleRate) Hz (stop with Ctrl-C)")
        if configuration.realtimeScheduling {
            let granted = RealtimeScheduling.requestForCurrentThread(priority: RealtimeScheduling.processingPriority)
            reporter.note(RealtimeScheduling.description(granted: granted))
        }
        defer { if configuration.realtimeScheduling { RealtimeScheduling.returnCurrentThreadToNormal() } }
        let feed = playback.map { HeadphoneFeed(ring: $0.ring, wake: $0.ringSignal, enhancer: enhancer,
                                                     delayMeter: delayMeter) }
        try process(detector: detector, capture: capture, feed: feed, dispatcher: dispatcher,
                    periodFrames: periodFrames)
    }

    /// The processing loop: each period read from the capture ring goes through `PeriodProcessor`, the code
    /// `FileRun` runs files through. It reports nothing itself: capture counts the audio it had to drop when this
    /// loop fell behind, and the reporter thread says so. Where the capture device was lost, the detector restarts
    /// its stream (`CaptureStreamFollower`): alerts sounding at the loss end there, as soon as the audio before it
    /// is processed, and the audio of the reopened device is judged on its own, with the model's start padding, as
    /// when listening starts.
    private func process(detector: AlertDetector, capture: AudioDeviceThread, feed: HeadphoneFeed?,
                         dispatcher: AlertDispatcher, periodFrames: Int) throws {
        let block = UnsafeMutableBufferPointer<Float>.allocate(capacity: periodFrames)
        block.initialize(repeating: 0)
        defer { block.deallocate() }
        let sampleLimit = configuration.sampleLimit(sampleRate: detector.expectedSampleRate)
        var samplesTaken = 0
        var processor = PeriodProcessor(detector: detector, restarts: capture.restarts, feed: feed)
        while !isStopRequested && samplesTaken < sampleLimit {
            let wanted = min(periodFrames, sampleLimit - samplesTaken)
            let count = capture.ring.read(into: UnsafeMutableBufferPointer(rebasing: block[0..<wanted]))
            guard count > 0 else {
                processor.waitForAudio { dispatcher.post($0) }
                _ = capture.ringSignal.wait(timeout: .now() + .milliseconds(50))
                continue
            }
            try processor.process(UnsafeBufferPointer(rebasing: block[0..<count])) { dispatcher.post($0) }
            samplesTaken += count
        }
        detector.finish { dispatcher.post($0) }
    }
}
