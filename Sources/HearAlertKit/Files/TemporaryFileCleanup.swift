import Dispatch
import Foundation
import Synchronization

/// Removes the temporary files of outputs still being written when SIGINT, SIGTERM or SIGHUP ends the process,
/// then lets the signal end it as it would have (the shell sees 128 + the signal's number).
///
/// It takes over those signals the first time a temporary file is registered, through dispatch sources on a
/// queue of its own (a busy pool of workers cannot delay it). A command that handles them itself (`listen`, with
/// `StopSignals`) writes no result files, so the two never meet.
final class TemporaryFileCleanup: Sendable {
    static let shared = TemporaryFileCleanup()

    private let paths = Mutex<Set<String>>([])
    private let sources = Mutex<[any DispatchSourceSignal]>([])
    private let queue = DispatchQueue(label: "hearalert.temporary-file-cleanup")

    func register(_ path: String) {
        paths.withLock { _ = $0.insert(path) }
        sources.withLock { sources in
            guard sources.isEmpty else { return }
            sources = [SIGINT, SIGTERM, SIGHUP].map(makeSource)
        }
    }

    func unregister(_ path: String) {
        paths.withLock { _ = $0.remove(path) }
    }

    private func makeSource(_ number: Int32) -> any DispatchSourceSignal {
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
        source.setEventHandler { [self] in
            for path in paths.withLock({ $0 }) { unlink(path) }
            // Die of the signal, as without this handler: default action, unblocked on this thread, raised.
            signal(number, SIG_DFL)
            var mask = sigset_t()
            sigemptyset(&mask)
            sigaddset(&mask, number)
            pthread_sigmask(SIG_UNBLOCK, &mask, nil)
            raise(number)
            _exit(128 + number)
        }
        source.resume()
        return source
    }
}
