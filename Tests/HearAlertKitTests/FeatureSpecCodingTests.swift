import Foundation
import Testing
@testable import HearAlertKit

/// The JSON keys are the contract with model files and tools/features.py (CSources/alertnet/FORMAT.md).
@Test func featureSpecDecodesTheDocumentedJSON() throws {
    let json = """
        {"sample_rate": 16000, "n_fft": 512, "win_length": 400, "hop_length": 160, "window": "hann",
         "kind": "log_mel", "n_mels": 64, "fmin": 50.0, "fmax": 8000.0, "mel_scale": "slaney",
         "mel_norm": "slaney", "power": 2.0, "log_base": 10.0, "log_multiplier": 10.0, "log_floor": 1e-10,
         "normalization": null}
        """
    let spec = try JSONDecoder().decode(FeatureSpec.self, from: Data(json.utf8))
    #expect(spec.nFFT == 512)
    #expect(spec.melScale == .slaney)
    #expect(spec.binCount == 64)
    #expect(FeatureSpec(kind: .logPower).binCount == 257)
}
