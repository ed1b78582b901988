"""The logs of a folder: links to logs and to folders followed, each file once, loops cut."""

from __future__ import annotations

from pathlib import Path

from cmi_inspect.eval_logs import log_files


def test_links_to_logs_and_folders_are_followed_and_each_log_counted_once(tmp_path):
    runs = tmp_path / "runs"
    runs.mkdir()
    for name in ("2026-12-03T07-00-00-00-00_causal-locomo_a.eval", "2026-12-03T07-00-01-00-00_causal-locomo_b.json"):
        (runs / name).write_text("")
    (runs / "logs.json").write_text("{}")  # eval_set's listing, not a log
    (runs / "eval-set.json").write_text("{}")
    picked = tmp_path / "picked"
    picked.mkdir()
    (picked / "a.eval").symlink_to(runs / "2026-12-03T07-00-00-00-00_causal-locomo_a.eval")
    (picked / "all").symlink_to(runs, target_is_directory=True)  # a again, and b
    (picked / "loop").symlink_to(picked, target_is_directory=True)  # a link back up the tree
    (picked / "gone.eval").symlink_to(tmp_path / "missing.eval")  # a broken link is no log
    found = log_files(str(picked))
    assert sorted(Path(p).resolve().name for p in found) == [
        "2026-12-03T07-00-00-00-00_causal-locomo_a.eval",
        "2026-12-03T07-00-01-00-00_causal-locomo_b.json",
    ]
    assert str(picked / "a.eval") in found  # by the first path that leads to it
