import Dispatch
import Foundation
import Synchronization

/// Turns SIGINT (Ctrl-C) and SIGTERM into a graceful stop: the first one calls `onStop` (which closes open
/// events and flushes), a second one exits at once with status 130 for a person who has lost patience.
///
/// The signals are delivered through dispatch sources, not a raw handler, so `onStop` may do ordinary work.
public final class StopSignals {
    private let sources: [any DispatchSourceSignal]

    /// Takes over SIGINT and SIGTERM for this object's lifetime; keep it alive while listening.
    public init(onStop: @escaping @Sendable () -> Void) {
        let received = Mutex(false)
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                let again = received.withLock { seen in
                    defer { seen = true }
                    return seen
                }
                if again { exit(130) }
                onStop()
            }
            source.resume()
            return source
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }
}
