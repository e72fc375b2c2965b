import Foundation
import Synchronization
import Testing
@testable import HearAlertKit

/// An alert line that cannot be written must be reported, never dropped in silence.
@Suite struct StreamSinkTests {
    @Test func aLineThatCannotBeWrittenIsReportedOnceAndCountedAtTheEnd() throws {
        // /dev/null opened for reading: every write fails (EBADF), as a full disk or a closed pipe would.
        let unwritable = try #require(FileHandle(forReadingAtPath: "/dev/null"))
        let lines = Mutex<[String]>([])
        let sink = StreamSink(handle: unwritable, format: .jsonl,
                              diagnostics: Diagnostics { line in lines.withLock { $0.append(line) } })
        for _ in 0..<3 { sink.deliver(AlertLineFormatterTests.start) }
        #expect(lines.withLock { $0.count } == 1)
        #expect(lines.withLock { $0.first?.hasPrefix("cannot write alerts to the output") } == true)
        sink.finish()
        #expect(lines.withLock { $0.last } == "3 alert lines could not be written to the output")
    }

    @Test func writtenLinesReportNothing() throws {
        let pipe = Pipe()
        let lines = Mutex<[String]>([])
        let sink = StreamSink(handle: pipe.fileHandleForWriting, format: .jsonl,
                              diagnostics: Diagnostics { line in lines.withLock { $0.append(line) } })
        sink.deliver(AlertLineFormatterTests.start)
        sink.finish()
        try pipe.fileHandleForWriting.close()
        let written = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(written == AlertLineFormatter.jsonLine(AlertLineFormatterTests.start) + "\n")
        #expect(lines.withLock { $0.isEmpty })
    }
}
