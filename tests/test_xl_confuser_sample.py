"""The outside reader's sample of XL's confusers: shuffled among useful and never-labelled
turns, its key, and a reading scored against the key."""

from __future__ import annotations

import json

from benchmarks.xl_confuser_sample import main, sample, score


def test_the_sample_mixes_confusers_with_other_turns_and_keys_them(mini_records):
    rows = sample(mini_records, 4, seed=0)
    kinds = [r["kind"] for r in rows]
    assert kinds.count("harmful") == min(4, sum(len(r.model_extra["metadata"]["confusers"]) for r in mini_records))  # type: ignore[index]
    assert {"useful", "unlabelled"} <= set(kinds)
    assert [r["item"] for r in rows] == [str(i) for i in range(1, len(rows) + 1)]
    again = sample(mini_records, 4, seed=0)
    assert again == rows  # seeded


def test_a_reading_is_scored_by_kind(tmp_path):
    key = {"1": "harmful", "2": "harmful", "3": "useful", "4": "unlabelled"}
    reading = {
        "1": {"turn": "misleading", "gold": "yes"},
        "2": {"turn": "supports", "gold": "no"},
        "3": {"turn": "supports", "gold": "yes"},
        "4": {"turn": "neither", "gold": "partly"},
    }
    result = score(key, reading)
    assert result["harmful_misleading_share"] == 0.5 and result["harmful_supports_share"] == 0.5
    assert result["gold_supported_share"] == 0.75
    path, key_path = tmp_path / "r.jsonl", tmp_path / "k.json"
    path.write_text("".join(json.dumps({"item": i, **r}) + "\n" for i, r in reading.items()))
    key_path.write_text(json.dumps(key))
    assert main(["--score", str(path), "--key", str(key_path)]) == 0


def test_the_printed_sheet_shows_no_kind(mini_build, capsys, tmp_path):
    from cmi_inspect.causal_locomo.xl import STORE_FILE

    assert main(["--n", "3", "--data-file", str(mini_build[0] / STORE_FILE), "--key", str(tmp_path / "k.json")]) == 0
    sheet = capsys.readouterr().out
    assert "## item 1" in sheet and not any(k in sheet for k in ("harmful", "unlabelled", "confuser"))
