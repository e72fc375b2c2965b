/// Everything `hearalert listen` decides before audio starts, as one value.
public struct ListenConfiguration: Sendable, Equatable {
    /// ALSA capture PCM (`default` unless the person names one; `hearalert devices` lists them).
    public var captureDevice: String
    /// ALSA playback PCM for the (enhanced) audio, e.g. headphones; nil plays nothing.
    public var playbackDevice: String?
    /// Period length in seconds: ALSA wakes us this often. 10 ms keeps latency low without waking too much.
    public var periodSeconds: Double
    /// Stop after this many seconds of audio (like `arecord -d`); nil listens until stopped.
    public var maxDuration: Double?

    public init(captureDevice: String = "default", playbackDevice: String? = nil, periodSeconds: Double = 0.01,
                maxDuration: Double? = nil) {
        self.captureDevice = captureDevice
        self.playbackDevice = playbackDevice
        self.periodSeconds = periodSeconds
        self.maxDuration = maxDuration
    }
}
