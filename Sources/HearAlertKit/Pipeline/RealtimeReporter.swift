import Dispatch
import Foundation
import Synchronization

/// One kind of event that audio threads count, and how to put a batch of them into words.
struct CountedFact: Sendable {
    /// The running count, read without waiting.
    let total: @Sendable () -> Int
    /// A line for `count` new occurrences over the last `seconds` (nil: the first line about this fact).
    let describe: @Sendable (_ count: Int, _ seconds: Double?) -> String
}

/// Standard error on behalf of the audio threads, which never write there themselves: it turns their counts into
/// rate-limited lines (`ReportRateLimiter`, one line per fact per 10 s at most) and passes on the notes of other
/// threads. If standard error stalls, this thread stalls with it and nothing else does.
final class RealtimeReporter: Sendable {
    private let diagnostics: Diagnostics
    private let facts: [CountedFact]
    private let interval: Double
    private let notes = Mutex<[String]>([])
    private let stopFlag = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)

    /// `interval`: the shortest time between two lines about the same fact.
    init(diagnostics: Diagnostics, facts: [CountedFact], interval: Double = 10) {
        self.diagnostics = diagnostics
        self.facts = facts
        self.interval = interval
    }

    /// Starts the reporting thread; it looks at the counts ten times a second.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "hearalert-reporter"
        thread.start()
    }

    /// Queues one line from a thread that is not real-time (start-up messages); never blocks on output.
    func note(_ line: String) {
        notes.withLock { $0.append(line) }
    }

    /// Writes the last counts and notes, waiting at most `seconds` for standard error to take them; returns
    /// false if it did not (the lines are then abandoned with the stalled thread, and the caller goes on).
    @discardableResult
    func stop(waitingAtMost seconds: Double) -> Bool {
        stopFlag.store(true, ordering: .releasing)
        return finished.wait(timeout: .now() + seconds) == .success
    }

    private func run() {
        var limiters = facts.map { _ in ReportRateLimiter(interval: interval) }
        let start = DispatchTime.now().uptimeNanoseconds
        while true {
            let stopping = stopFlag.load(ordering: .acquiring)
            for line in notes.withLock({ lines in defer { lines = [] }; return lines }) {
                diagnostics.report(line)
            }
            let now = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            for (index, fact) in facts.enumerated() {
                if let due = limiters[index].due(total: fact.total(), now: now, force: stopping) {
                    diagnostics.report(fact.describe(due.count, due.seconds))
                }
            }
            if stopping { break }
            usleep(100_000)
        }
        finished.signal()
    }
}
