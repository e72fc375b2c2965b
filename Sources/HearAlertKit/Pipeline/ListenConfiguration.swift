/// Everything `hearalert listen` decides before audio starts, as one value.
public struct ListenConfiguration: Sendable, Equatable {
    /// ALSA capture PCM (`default` unless the person names one; `hearalert devices` lists them).
    public var captureDevice: String
    /// ALSA playback PCM for the (enhanced) audio, e.g. headphones; nil plays nothing.
    public var playbackDevice: String?
    /// Period length in seconds (ALSA wakes us this often); nil picks `effectivePeriodSeconds`.
    public var periodSeconds: Double?
    /// Stop after this many seconds of audio (like `arecord -d`), at most `longestDuration`; nil listens until
    /// stopped.
    public var maxDuration: Double?

    /// The longest `maxDuration` (a billion seconds, about 32 years): far beyond any run, yet its sample count
    /// at any rate stays far inside `Int`, so no conversion can trap. Longer means "until stopped": leave it nil.
    public static let longestDuration = 1e9
    /// Ask for real-time (`SCHED_FIFO`) priority for the audio threads where permitted (see `RealtimeScheduling`);
    /// always on for listening, off only for tests that run listeners inside the test process.
    package var realtimeScheduling = true

    /// The defaults listen on ALSA's `default` device, play nothing, run until stopped and ask for real-time
    /// priority.
    public init(captureDevice: String = "default", playbackDevice: String? = nil, periodSeconds: Double? = nil,
                maxDuration: Double? = nil) {
        self.captureDevice = captureDevice
        self.playbackDevice = playbackDevice
        self.periodSeconds = periodSeconds
        self.maxDuration = maxDuration
    }

    /// As the public `init`, choosing whether to ask for real-time priority (tests turn it off).
    package init(captureDevice: String = "default", playbackDevice: String? = nil, periodSeconds: Double? = nil,
                 maxDuration: Double? = nil, realtimeScheduling: Bool) {
        self.init(captureDevice: captureDevice, playbackDevice: playbackDevice, periodSeconds: periodSeconds,
                  maxDuration: maxDuration)
        self.realtimeScheduling = realtimeScheduling
    }

    /// The number of samples at `sampleRate` after which to stop: `maxDuration` rounded to whole samples, or
    /// `Int.max` (until stopped) for none, or for a value beyond `longestDuration` or not a number.
    public func sampleLimit(sampleRate: Int) -> Int {
        guard let maxDuration, maxDuration <= Self.longestDuration else { return .max }
        return max(0, Int((maxDuration * Double(sampleRate)).rounded()))
    }

    /// The period used: 10 ms when only detecting (alerts need no finer timing, and fewer wake-ups cost less),
    /// 2 ms when playing to headphones, because every period of capture and of queued playback adds to the delay
    /// a hearing-aid wearer hears (see `LiveListener`).
    public var effectivePeriodSeconds: Double {
        periodSeconds ?? (playbackDevice == nil ? 0.01 : Self.headphonePeriodSeconds)
    }

    /// The period with headphones, which `FileRun` also uses so that files are enhanced as they would be live.
    public static let headphonePeriodSeconds = 0.002

    /// Samples in one period of `seconds` at `sampleRate` (at least 16, where ALSA stops being practical).
    public static func periodFrames(seconds: Double, sampleRate: Int) -> Int {
        max(16, Int((seconds * Double(sampleRate)).rounded()))
    }
}
