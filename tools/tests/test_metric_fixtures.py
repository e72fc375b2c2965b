"""The committed metric fixture must be exactly what tools/fixtures/make_metric_fixtures.py writes from sed_eval."""

import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "Tests/HearAlertKitTests/Fixtures/metrics/sed_eval_cases.json"


def test_committed_fixture_is_regenerated_identically(tmp_path):
    out = tmp_path / "cases.json"
    subprocess.run([sys.executable, str(ROOT / "tools/fixtures/make_metric_fixtures.py"), "--seed", "20261121",
                    "--random-cases", "40", "--out", str(out)], check=True, capture_output=True,
                   env=dict(os.environ, PYTHONPATH=str(ROOT / "tools")))
    assert json.loads(out.read_text()) == json.loads(FIXTURE.read_text())


def test_fixture_exercises_substitutions_unknown_labels_and_empty_output():
    cases = {case["name"]: case for case in json.loads(FIXTURE.read_text())["cases"]}
    unknown = cases["unknown_labels_in_estimate"]["expected"]["event_based"]["overall"]["counts"]
    assert unknown["substitutions"] == 1
    assert cases["no_events"]["expected"]["event_based"]["overall"]["precision"] is None
    chosen = cases["matching_choice_decides_substitution"]["expected"]["event_based"]["overall"]["counts"]
    assert (chosen["true_positives"], chosen["substitutions"], chosen["deletions"]) == (1, 0, 1)
