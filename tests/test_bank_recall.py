"""The bank-recall benchmark: one line a bank size, what each keeps, and its two pickers."""

from __future__ import annotations

from benchmarks.bank_recall import main

from conftest import SYNTHETIC


def _rows(printed: str) -> dict[str, list[float]]:
    lines = printed.splitlines()[3:]
    return {cells[0]: [float(c) for c in cells[1:]] for cells in (line.strip("| ").split(" | ") for line in lines)}


def test_a_stored_xl_file_gives_a_line_a_size_and_keeps_every_label_whole(mini_build, capsys):
    from cmi_inspect.causal_locomo.xl import STORE_FILE

    main(["--data-file", str(mini_build[0] / STORE_FILE), "--sizes", "4", "16", "--limit", "12"])
    printed = capsys.readouterr().out
    assert printed.splitlines()[0].endswith(": 12 examples, 11 answerable, seed 0")
    rows = _rows(printed)
    assert list(rows) == ["4", "16", "whole store"]
    assert rows["whole store"][:4] == [1.0, 1.0, 1.0, 1.0]  # the whole store keeps every label
    assert rows["4"][0] <= rows["16"][0] < 1.0  # a smaller bank keeps fewer useful memories
    assert all(0.0 <= f <= 1.0 for row in rows.values() for f in row)


def test_the_pickers_are_seeded(capsys):
    main(["--data-file", str(SYNTHETIC), "--sizes", "2", "--seed", "3"])
    first = capsys.readouterr().out
    main(["--data-file", str(SYNTHETIC), "--sizes", "2", "--seed", "3"])
    assert capsys.readouterr().out == first
