import Foundation

// hearalert-realtime-probe: the real-time path's allocation-freedom, for a heap profiler to judge. It checks (a
// stage whose frames did no work fails) and reads test fixtures, so it is a test tool, apart from the benchmarks
// that only print figures. RealtimeProbe.swift says how to run it; tools/tests/test_realtime_allocations.py does.

do {
    try RealtimeProbe.run()
} catch {
    FileHandle.standardError.write(Data("hearalert-realtime-probe: \(error)\n".utf8))
    exit(1)
}
