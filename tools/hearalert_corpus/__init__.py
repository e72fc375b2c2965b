"""Synthesis of labelled noisy-speech corpora for HearAlert (format: shared/docs/CORPUS.md).

Modules, one concern each:
  signals    small DSP building blocks (tones, envelopes, filters, struck partials)
  alerts     the six alert labels, synthesised with wide random variation
  negatives  hard negatives that are not alerts (music, whistling, chirps, clicks, TV-like speech)
  speech     espeak-ng speech and researcher-provided speech recordings
  noise      coloured, babble, traffic-like and recorded noise
  rooms      image-source room impulse responses (pyroomacoustics)
  sources    stable assignment of external recordings to splits
  mixing     one clip: speech + noise + alerts + negatives at drawn SNRs, with its events
  writer     the corpus on disk: audio/, clean/, alerts/, files.tsv, annotations.tsv, corpus.json
"""

LABELS = ("siren", "car_horn", "smoke_alarm", "alarm_clock", "doorbell", "phone_ring")
SAMPLE_RATE = 16000
SPLITS = ("train", "val", "test")
GENERATOR_VERSION = 1
