import CFFTW3f

/// FFTW's planner keeps global tables and is not thread-safe; `fftwf_make_planner_thread_safe()` (from
/// libfftw3f_threads) puts a lock around planning and plan destruction. It must run once, before the first
/// plan, so every planning call goes through `FFTWPlanner`, whose first use runs the global initialiser
/// (Swift runs global initialisers exactly once, thread-safely).
enum FFTWPlanner {
    private static let madeThreadSafe: Void = fftwf_make_planner_thread_safe()

    /// Makes a plan with the planner made thread-safe first; `nil` only if FFTW cannot plan the transform.
    static func plan(_ make: () -> fftwf_plan?) -> fftwf_plan? {
        _ = madeThreadSafe
        return make()
    }

    /// Destroys a plan under the same lock as planning.
    static func destroy(_ plan: fftwf_plan) {
        _ = madeThreadSafe
        fftwf_destroy_plan(plan)
    }
}
