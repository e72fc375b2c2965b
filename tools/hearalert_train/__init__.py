"""Training the HearAlert detector: data sampling and targets, the event tracker, evaluation and tuning."""
