"""A LoCoMo answer as XL reads it: stems, parts, aliases and values that would read as it."""

from __future__ import annotations

from cmi_inspect.causal_locomo.xl.answers import answer_aliases, must_not_include, same_value, stems


def test_stems_match_word_forms():
    assert stems("Priya's two sunflowers") == stems("priya s 2 sunflower") == {"priya", "s", "2", "sunfl"}


def test_aliases_spell_full_dates_and_resolve_a_weekday():
    aliases = answer_aliases("The Friday before 27 February 2022")
    assert "The Friday before February 27, 2022" in aliases and "The Friday before 2022-02-27" in aliases
    assert {"25 February 2022", "February 25, 2022", "2022-02-25"} <= set(aliases)
    assert answer_aliases("May 2023") == ["May 2023"]  # only full dates have other spellings


def test_a_false_value_that_reads_as_the_answer_is_not_forbidden():
    assert same_value("March 3, 2023", "3 March 2023") and not same_value("Porto", "Lisbon")
    assert must_not_include(["Porto", None, "lisbon", "Porto"], "Lisbon") == ["Porto"]
