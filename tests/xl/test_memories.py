"""Memory drafts: one style for every label, relative dates written out, the soundness check."""

from __future__ import annotations

from cmi_inspect.xl.memories import irrelevant_drafts, is_sound, mentions_answer, render_memory, useful_drafts


def test_a_memory_keeps_the_statements_resolves_relative_dates_and_is_phrased(mini_contexts):
    ctx = mini_contexts["mini-1_qa_0000"]
    text = "Wow! Yesterday I made my first bowl, and last week a vase. Do you like it?"
    content = render_memory(ctx, "Priya", text, ctx.session(1))
    assert "Wow" not in content and "like it" not in content
    assert "[3 March 2023]" in content and "[the week before 4 March 2023]" in content
    assert render_memory(ctx, "Priya", text, ctx.session(1)) == content  # the same draw every time


def test_phrasings_are_drawn_from_the_text_not_the_label(mini_contexts):
    ctx = mini_contexts["mini-1_qa_0000"]
    frames = {
        render_memory(ctx, "Priya", f"I planted {n} tulips in the garden.", ctx.session(1))[:12] for n in range(40)
    }
    assert len(frames) >= 4  # several phrasings, drawn per memory


def test_useful_drafts_are_the_evidence_turns(mini_contexts):
    ctx = mini_contexts["mini-1_qa_0001"]  # evidence D1:5, D1:6
    drafts = useful_drafts(ctx)
    assert [d.dia_ids for d in drafts] == [["D1:5"], ["D1:6"]] and {d.label for d in drafts} == {"useful"}
    assert "Priya" in drafts[0].content and "sell it" in drafts[0].content


def test_irrelevant_drafts_avoid_the_evidence_and_the_answer(mini_contexts):
    ctx = mini_contexts["mini-1_qa_0002"]  # "Biscuit", evidence D1:7
    drafts = irrelevant_drafts(ctx, {"D1:7"})
    assert len(drafts) == 5 and len({d.dia_ids[0] for d in drafts}) == 5
    assert all(d.dia_ids != ["D1:7"] and "Biscuit" not in d.content for d in drafts)


def test_soundness_compares_dates_at_the_answer_granularity():
    memory = 'On 4 March 2023, Priya told Tomas: "Yesterday [3 March 2023] I made a bowl."'
    assert is_sound([memory], "3 March 2023") and is_sound([memory], "March 2023")
    assert not is_sound([memory], "5 March 2023")


def test_soundness_needs_most_of_the_answer_words():
    memory = 'On 4 March 2023, Tomas told Priya: "We grow tomatoes and beans."'
    assert is_sound([memory], "tomatoes and beans")
    assert not is_sound([memory], "tomatoes, beans and sunflowers")  # 2 of 3 words
    assert not is_sound([memory], "water polo")


def test_mentions_answer_by_date_or_words():
    assert mentions_answer("we met on 3 March 2023", "March 2023")
    assert mentions_answer("the spring fair in Lisbon", "the fair, Lisbon")
    assert not mentions_answer("the spring fair", "Lisbon")
