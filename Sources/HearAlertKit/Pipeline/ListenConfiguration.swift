/// Everything `hearalert listen` decides before audio starts, as one value.
public struct ListenConfiguration: Sendable, Equatable {
    /// ALSA capture PCM (`default` unless the person names one; `hearalert devices` lists them).
    public var captureDevice: String
    /// ALSA playback PCM for the (enhanced) audio, e.g. headphones; nil plays nothing.
    public var playbackDevice: String?
    /// Period length in seconds (ALSA wakes us this often); nil picks `effectivePeriodSeconds`.
    public var periodSeconds: Double?
    /// Stop after this many seconds of audio (like `arecord -d`); nil listens until stopped.
    public var maxDuration: Double?
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
