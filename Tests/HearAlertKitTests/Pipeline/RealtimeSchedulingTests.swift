import Foundation
import Synchronization
import Testing
@testable import HearAlertKit

/// Whatever the machine permits, the answer must match what the kernel then reports for the thread.
@Suite struct RealtimeSchedulingTests {
    @Test func theAnswerMatchesTheThreadsSchedulingAndNormalIsRestored() {
        let seen = Mutex<(granted: Bool, policy: Int32, priority: Int32, restored: Int32)?>(nil)
        let done = DispatchSemaphore(value: 0)
        Thread {
            let granted = RealtimeScheduling.requestForCurrentThread(priority: RealtimeScheduling.processingPriority)
            var policy: Int32 = -1
            var param = sched_param()
            pthread_getschedparam(pthread_self(), &policy, &param)
            RealtimeScheduling.returnCurrentThreadToNormal()
            var restored: Int32 = -1
            var after = sched_param()
            pthread_getschedparam(pthread_self(), &restored, &after)
            seen.withLock { $0 = (granted, policy, param.sched_priority, restored) }
            done.signal()
        }.start()
        #expect(done.wait(timeout: .now() + 30) == .success)
        let result = seen.withLock { $0 }
        if result?.granted == true {
            #expect(result?.policy == SCHED_FIFO && (1...10).contains(result?.priority ?? 0))
        } else {
            #expect(result?.policy == SCHED_OTHER)
        }
        #expect(result?.restored == SCHED_OTHER)
    }
}
