/// One decision of an `AlertDetector`, as the model made it, before the tracker smooths and thresholds it.
///
/// Why it exists: to see the raw decisions (a score trace while tuning a model, the research mirror's schedule in
/// tests) without the detector keeping copies for anyone to read; an observer given at init receives each one.
package struct DetectorDecision {
    /// The stream time (seconds) the scores describe: the centre of the model's input window (negative for a
    /// start-padded window that reaches before the stream).
    package let decisionTime: Double
    /// The stream time (seconds) when the decision became possible: the end of the window (the `detectedAt` of
    /// an alert it starts).
    package let streamTime: Double
    /// One score per label, in the model's label order. The detector reuses this memory for the next decision:
    /// copy what you keep, during the call.
    package let scores: UnsafeBufferPointer<Float>
}
