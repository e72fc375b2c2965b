import CALSA
import Foundation

/// One open ALSA PCM stream of mono samples, owned by the single thread that reads or writes it.
///
/// Wraps `snd_pcm_t`: opening negotiates a short period and buffer (low latency), reading and writing repair
/// overruns and underruns with `snd_pcm_recover` so the stream never stops for them, and `deinit` closes the
/// handle. The device is asked for 16-bit mono at the model's rate — the format nearly every microphone and
/// headset delivers natively — and converted to and from Float here, in preallocated scratch memory; when the
/// device cannot do that, the stream is reopened through ALSA's `plug` layer, which converts format, rate and
/// channel count.
public final class ALSAPCM {
    /// Whether samples come from the device (a microphone) or go to it (headphones).
    public enum Direction: Sendable {
        case capture
        case playback

        var alsaStream: snd_pcm_stream_t {
            self == .capture ? SND_PCM_STREAM_CAPTURE : SND_PCM_STREAM_PLAYBACK
        }
    }

    /// The ALSA PCM name actually opened (the requested one, or `plug:` around it).
    public let device: String
    /// Fixed at open: ALSA streams go one way; `read` and `write` check it.
    public let direction: Direction
    /// Samples per second delivered or expected; always the requested rate (ALSA converts).
    public let sampleRate: Int
    /// Frames ALSA moves per interrupt: the granularity of blocking reads and writes.
    public let periodFrames: Int
    /// Frames the device buffer holds: the most audio that can queue up before an overrun or underrun.
    public let bufferFrames: Int
    /// Playback is started (`start()`) once this many periods are queued. One would underrun at the first late
    /// wake-up: the device takes a period at each of its interrupts, and the next period arrives with the
    /// capture interrupt. Two leave one period of margin for scheduling jitter, and no more delay than that.
    public static let playbackStartPeriods = 2

    /// Playback: true while the stream is prepared but not running (at first, and after an underrun was
    /// repaired), waiting for `start()`.
    public var isWaitingForStart: Bool { snd_pcm_state(handle) == SND_PCM_STATE_PREPARED }

    /// Playback: starts the device on what is queued.
    public func start() throws(ALSAError) {
        let status = snd_pcm_start(handle)
        if status < 0 { try recover(from: status) }
    }

    /// Overruns (capture) or underruns (playback) repaired so far; each lost a little audio.
    public private(set) var recoveredXruns = 0

    private let handle: OpaquePointer
    /// 16-bit samples as the device moves them; one buffer's worth, so no transfer ever needs more.
    private let scratch: UnsafeMutableBufferPointer<Int16>

    /// Opens `device` at `sampleRate`, 16-bit mono (delivered as Float), with periods near `periodFrames` and
    /// `periodsPerBuffer` of them.
    public init(
        device: String, direction: Direction, sampleRate: Int, periodFrames: Int, periodsPerBuffer: Int = 4
    ) throws(ALSAError) {
        let attempt: (handle: OpaquePointer, period: Int, buffer: Int, name: String)
        do {
            attempt = try Self.open(device, direction, sampleRate, periodFrames, periodsPerBuffer)
        } catch .cannotConfigure where !device.hasPrefix("plug") {
            // The hardware cannot do 16-bit mono at this rate: let ALSA's plug layer convert for us.
            attempt = try Self.open("plug:'\(device)'", direction, sampleRate, periodFrames, periodsPerBuffer)
        }
        handle = attempt.handle
        self.device = attempt.name
        self.direction = direction
        self.sampleRate = sampleRate
        self.periodFrames = attempt.period
        self.bufferFrames = attempt.buffer
        scratch = .allocate(capacity: attempt.buffer)
        scratch.initialize(repeating: 0)
    }

    deinit {
        snd_pcm_close(handle)
        scratch.deallocate()
    }

    /// Blocks until some frames arrive and returns how many were stored (at most `destination.count`), as
    /// floats in [-1, 1).
    ///
    /// An overrun (the reader was late and the device overwrote audio) is repaired and counted, and the read is
    /// retried: the caller sees a continuous stream with a short gap rather than an error.
    public func read(into destination: UnsafeMutableBufferPointer<Float>) throws(ALSAError) -> Int {
        precondition(direction == .capture, "read from a playback stream")
        let wanted = min(destination.count, scratch.count)
        while true {
            let result = snd_pcm_readi(handle, scratch.baseAddress, snd_pcm_uframes_t(wanted))
            if result >= 0 {
                for index in 0..<Int(result) { destination[index] = Float(scratch[index]) / 32768 }
                return Int(result)
            }
            try recover(from: Int32(result))
        }
    }

    /// Blocks until the device has room, then queues as many of `samples` as fit and returns that count.
    public func write(_ samples: UnsafeBufferPointer<Float>) throws(ALSAError) -> Int {
        precondition(direction == .playback, "write to a capture stream")
        let count = min(samples.count, scratch.count)
        for index in 0..<count {
            scratch[index] = Int16(max(-32768, min(32767, (samples[index] * 32768).rounded())))
        }
        while true {
            let result = snd_pcm_writei(handle, scratch.baseAddress, snd_pcm_uframes_t(count))
            if result >= 0 { return Int(result) }
            try recover(from: Int32(result))
        }
    }

    /// `snd_pcm_delay`: frames between the application and the converters. Capture: frames the microphone has
    /// delivered that `read` has not yet returned. Playback: frames queued before a frame written now is heard.
    /// Nil where the device cannot say (it is stopped, or in an xrun); allocates nothing.
    public func delayFrames() -> Int? {
        var frames = snd_pcm_sframes_t(0)
        guard snd_pcm_delay(handle, &frames) >= 0 else { return nil }
        return Int(frames)
    }

    /// Playback: frames written and not yet taken by the hardware (the buffer's fill, `snd_pcm_avail`), which,
    /// unlike `delayFrames`, leaves out what the card holds beyond its buffer (a USB card's packets in flight).
    /// Nil in an xrun; allocates nothing.
    public func bufferedFrames() -> Int? {
        let available = snd_pcm_avail(handle)
        guard available >= 0 else { return nil }
        return max(0, bufferFrames - Int(available))
    }

    /// `snd_pcm_recover` repairs xruns (-EPIPE) and suspends (-ESTRPIPE); anything else means the device is gone.
    private func recover(from code: Int32) throws(ALSAError) {
        if code == -EINTR { return }
        let status = snd_pcm_recover(handle, code, 1)
        guard status >= 0 else {
            throw .deviceLost(device: device, reason: ALSAError.message(code))
        }
        recoveredXruns += 1
    }

    private static func open(
        _ name: String, _ direction: Direction, _ sampleRate: Int, _ periodFrames: Int, _ periodsPerBuffer: Int
    ) throws(ALSAError) -> (handle: OpaquePointer, period: Int, buffer: Int, name: String) {
        var opened: OpaquePointer?
        let status = snd_pcm_open(&opened, name, direction.alsaStream, 0)
        guard status >= 0, let handle = opened else {
            throw .cannotOpen(device: name, direction: direction, reason: ALSAError.message(status))
        }
        do {
            let (period, buffer) = try configureHardware(handle, name, sampleRate, periodFrames, periodsPerBuffer)
            try configureSoftware(handle, name, direction, period: period)
            return (handle, period, buffer, name)
        } catch {
            snd_pcm_close(handle)
            throw error
        }
    }

    private static func check(_ status: Int32, _ device: String, _ step: String) throws(ALSAError) {
        if status < 0 { throw .cannotConfigure(device: device, step: step, reason: ALSAError.message(status)) }
    }

    private static func configureHardware(
        _ handle: OpaquePointer, _ name: String, _ sampleRate: Int, _ periodFrames: Int, _ periodsPerBuffer: Int
    ) throws(ALSAError) -> (period: Int, buffer: Int) {
        var allocated: OpaquePointer?
        guard snd_pcm_hw_params_malloc(&allocated) >= 0, let params = allocated else {
            throw .cannotConfigure(device: name, step: "hardware parameters", reason: "out of memory")
        }
        defer { snd_pcm_hw_params_free(params) }
        func check(_ status: Int32, _ step: String) throws(ALSAError) { try Self.check(status, name, step) }
        try check(snd_pcm_hw_params_any(handle, params), "any configuration")
        try check(snd_pcm_hw_params_set_access(handle, params, SND_PCM_ACCESS_RW_INTERLEAVED), "interleaved access")
        try check(snd_pcm_hw_params_set_format(handle, params, SND_PCM_FORMAT_S16_LE), "16-bit samples")
        try check(snd_pcm_hw_params_set_channels(handle, params, 1), "mono")
        try check(snd_pcm_hw_params_set_rate(handle, params, UInt32(sampleRate), 0), "\(sampleRate) Hz")
        var period = snd_pcm_uframes_t(periodFrames)
        var direction: Int32 = 0
        try check(snd_pcm_hw_params_set_period_size_near(handle, params, &period, &direction), "period size")
        var buffer = period * snd_pcm_uframes_t(max(2, periodsPerBuffer))
        try check(snd_pcm_hw_params_set_buffer_size_near(handle, params, &buffer), "buffer size")
        try check(snd_pcm_hw_params(handle, params), "the negotiated configuration")
        snd_pcm_hw_params_get_period_size(params, &period, &direction)
        snd_pcm_hw_params_get_buffer_size(params, &buffer)
        return (Int(period), Int(buffer))
    }

    private static func configureSoftware(
        _ handle: OpaquePointer, _ name: String, _ direction: Direction, period: Int
    ) throws(ALSAError) {
        var allocated: OpaquePointer?
        guard snd_pcm_sw_params_malloc(&allocated) >= 0, let params = allocated else {
            throw .cannotConfigure(device: name, step: "software parameters", reason: "out of memory")
        }
        defer { snd_pcm_sw_params_free(params) }
        func check(_ status: Int32, _ step: String) throws(ALSAError) { try Self.check(status, name, step) }
        try check(snd_pcm_sw_params_current(handle, params), "current software parameters")
        try check(snd_pcm_sw_params_set_avail_min(handle, params, snd_pcm_uframes_t(period)), "wake-up size")
        // Capture starts at the first read; playback only when `start()` is called (a threshold above the
        // boundary is never reached), so that its owner chooses the phase of its interrupts.
        var boundary = snd_pcm_uframes_t(0)
        try check(snd_pcm_sw_params_get_boundary(params, &boundary), "boundary")
        let start = direction == .playback ? boundary : 1
        try check(snd_pcm_sw_params_set_start_threshold(handle, params, start), "start threshold")
        try check(snd_pcm_sw_params(handle, params), "the software configuration")
    }
}
