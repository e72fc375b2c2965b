import Foundation

/// Real-time scheduling for the audio threads on Linux (`SCHED_FIFO`), so that a busy desktop (a compiler, a
/// browser) cannot make capture overrun or the headphones stutter. Foundation's `qualityOfService` does nothing
/// on Linux, hence pthreads directly.
///
/// Granted when the process may (root with CAP_SYS_NICE, or an RLIMIT_RTPRIO from limits.conf, as audio
/// groups usually get); otherwise the thread keeps normal scheduling and listening works the same, only with
/// less protection against load.
enum RealtimeScheduling {
    /// Capture and playback move audio to and from the device: they come first.
    static let devicePriority: Int32 = 15
    /// Processing (features, CNN, enhancer) runs just below the device threads.
    static let processingPriority: Int32 = 10

    /// Asks for `SCHED_FIFO` at `priority` (lowered to RLIMIT_RTPRIO when that limit is smaller) for the calling
    /// thread; true if granted.
    @discardableResult
    static func requestForCurrentThread(priority: Int32) -> Bool {
        var param = sched_param()
        param.sched_priority = min(priority, priorityLimit ?? priority)
        return param.sched_priority > 0 && pthread_setschedparam(pthread_self(), SCHED_FIFO, &param) == 0
    }

    /// Returns the calling thread to normal scheduling (the processing thread, when listening stops).
    static func returnCurrentThreadToNormal() {
        var param = sched_param()
        param.sched_priority = 0
        _ = pthread_setschedparam(pthread_self(), SCHED_OTHER, &param)
    }

    /// The soft RLIMIT_RTPRIO when it is positive; nil when it is 0 (then only a privileged process gets any).
    private static var priorityLimit: Int32? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(__RLIMIT_RTPRIO.rawValue), &limit) == 0, limit.rlim_cur > 0 else { return nil }
        return Int32(clamping: limit.rlim_cur)
    }

    /// The start-up line telling the person which scheduling the audio threads got.
    static func description(granted: Bool) -> String {
        granted
            ? "audio threads run with real-time priority (SCHED_FIFO)"
            : "real-time scheduling not permitted (no RLIMIT_RTPRIO or CAP_SYS_NICE); audio threads use normal "
                + "scheduling"
    }
}
