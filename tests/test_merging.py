"""The merge rules for what clawmem owns (daily logs, generated sections), on git's line merge."""

from __future__ import annotations

import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clawmem.files.gitmerge import merge_file
from clawmem.markdown.facts import extract_facts
from clawmem.markdown.markers import find_section, splice
from clawmem.markdown.merging import is_daily_log, is_merged, merge, merge_log, merge_page

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

BASE = "# 2025-11-27\n\nMorning stand-up.\n\n## Retain\n- W @Peter: Lives in Vienna.\n"


def facts(text: str) -> list[str]:
    return [f.content for f in extract_facts(text)[0]]


def test_which_rule_a_path_gets():
    assert is_daily_log("memory/2025-11-27.md")
    assert is_daily_log("notes/memory/2025/11/2025-11-27.md")
    assert not is_daily_log("memory/projects.md")
    assert not is_daily_log("bank/entities/2025-11-27.md")


def test_facts_retained_on_both_sides_are_all_kept_without_conflict():
    ours = BASE + "- W @Peter: Prefers tea.\n"
    theirs = BASE + "- B: Fixed the build.\n"
    m = merge_log(BASE, ours, theirs, merge_file)
    assert m.conflicts == 0
    assert facts(m.text) == ["Lives in Vienna.", "Prefers tea.", "Fixed the build."]
    # git's own merge conflicts on the same input: the rule is what makes it clean
    assert merge_file(BASE, ours, theirs)[1] == 1


def test_the_same_fact_retained_on_both_sides_is_kept_once():
    ours = BASE + "- W @Peter: Prefers tea.\n- W @Ann: Likes chess.\n"
    theirs = BASE + "- W @Peter: Prefers tea.\n"
    m = merge_log(BASE, ours, theirs, merge_file)
    assert facts(m.text) == ["Lives in Vienna.", "Prefers tea.", "Likes chess."]
    # in either order
    m2 = merge_log(BASE, theirs, ours, merge_file)
    assert sorted(facts(m2.text)) == sorted(facts(m.text))


def test_a_duplicate_the_person_wrote_on_purpose_stays():
    base = BASE + "- W @Peter: Lives in Vienna.\n"  # twice in the base already
    ours = base + "- W: One.\n"
    theirs = base + "- W: Two.\n"
    m = merge_log(base, ours, theirs, merge_file)
    assert facts(m.text).count("Lives in Vienna.") == 2


def test_narrative_appended_on_one_side_and_a_fact_on_the_other():
    ours = BASE + "\n## Evening\n\nDinner with Ann.\n"
    theirs = BASE + "- W @Ann: Moved to Graz.\n"
    for a, b in ((ours, theirs), (theirs, ours)):
        m = merge_log(BASE, a, b, merge_file)
        assert m.conflicts == 0
        assert facts(m.text) == ["Lives in Vienna.", "Moved to Graz."], m.text
        assert "Dinner with Ann." in m.text and "## Evening" in m.text
        assert m.text.count("Moved to Graz.") == 1


def test_an_edit_on_one_side_and_an_append_on_the_other_both_apply():
    ours = BASE.replace("Morning stand-up.", "Morning stand-up, moved to 10:00.")
    theirs = BASE + "- W: New fact.\n"
    m = merge_log(BASE, ours, theirs, merge_file)
    assert "moved to 10:00" in m.text and "New fact." in m.text
    assert "Morning stand-up.\n" not in m.text


def test_both_sides_edit_the_same_line_keeps_both_lines():
    ours = BASE.replace("Vienna", "Graz")
    theirs = BASE.replace("Vienna", "Linz")
    m = merge_log(BASE, ours, theirs, merge_file)
    assert m.conflicts == 0 and "<<<<<<<" not in m.text
    assert set(facts(m.text)) == {"Lives in Graz.", "Lives in Linz."}


def test_a_log_created_on_both_sides():
    ours = "# 2025-11-28\n\n## Retain\n- W: A.\n"
    theirs = "# 2025-11-28\n\n## Retain\n- W: B.\n"
    m = merge_log("", ours, theirs, merge_file)
    assert facts(m.text) == ["A.", "B."]
    assert m.text.count("## Retain") == 1


def test_crlf_logs_keep_their_line_endings():
    base = BASE.replace("\n", "\r\n")
    ours = base + "- W: A.\r\n"
    theirs = base + "- W: B.\r\n"
    m = merge_log(base, ours, theirs, merge_file)
    assert "\n" not in m.text.replace("\r\n", "")
    assert facts(m.text)[-2:] == ["A.", "B."]


# ------------------------------------------------------------------------- generated sections


def page(hand_top: str, body: list[str], hand_bottom: str = "") -> str:
    text = splice(hand_top or None, body, title="Peter") if hand_top else None
    if text is None:
        text = splice(None, body, title="Peter")
    return text + hand_bottom


def test_generated_section_rewritten_on_both_sides_never_conflicts():
    base = page("# Peter\n\nMy notes.\n", ["- a (memory/x.md#L1)"])
    ours = page("# Peter\n\nMy notes, edited.\n", ["- a (memory/x.md#L1)", "- b"])
    theirs = page("# Peter\n\nMy notes.\n", ["- a (memory/x.md#L1)", "- c"], "\nBelow.\n")
    m = merge_page(base, ours, theirs, merge_file)
    assert m.conflicts == 0 and m.regenerate
    assert "My notes, edited." in m.text and "Below." in m.text
    sec = find_section(m.text)
    assert sec is not None and not sec.edited and is_merged(sec)
    assert sec.body.splitlines() == ["- a (memory/x.md#L1)", "- b", "- c"]


def test_generated_section_changed_on_one_side_takes_that_side():
    base = page("# Peter\n\nMy notes.\n", ["- a"])
    ours = page("# Peter\n\nMy notes.\n", ["- a", "- b"])
    theirs = page("# Peter\n\nMy notes, edited.\n", ["- a"])
    m = merge_page(base, ours, theirs, merge_file)
    assert m.conflicts == 0 and not m.regenerate
    sec = find_section(m.text)
    assert sec is not None and sec.body == "- a\n- b\n" and not is_merged(sec)
    assert "My notes, edited." in m.text


def test_hand_written_text_conflicts_like_any_text():
    base = page("# Peter\n\nMy notes.\n", ["- a"])
    ours = page("# Peter\n\nMine.\n", ["- a"])
    theirs = page("# Peter\n\nTheirs.\n", ["- a", "- b"])
    m = merge_page(base, ours, theirs, merge_file)
    assert m.conflicts == 1 and "<<<<<<< ours" in m.text
    conflict = "<<<<<<< ours\nMine.\n=======\nTheirs.\n>>>>>>> theirs\n"
    assert conflict in m.text  # the hand-written lines, as git shows any conflict
    assert find_section(m.text.replace(conflict, "")).body == "- a\n- b\n"  # the section merged


def test_a_hand_edited_section_stays_marked_edited():
    base = page("# Peter\n\n", ["- a"])
    ours = page("# Peter\n\n", ["- a", "- b"]).replace("- a\n", "- a (my correction)\n")
    theirs = page("# Peter\n\n", ["- a", "- c"])
    m = merge_page(base, ours, theirs, merge_file)
    sec = find_section(m.text)
    assert sec is not None and sec.edited and not m.regenerate


def test_a_page_created_on_both_sides():
    ours = page("", ["- a"])
    theirs = page("", ["- b"])
    m = merge("bank/entities/Peter.md", "", ours, theirs, merge_file)
    assert m.conflicts == 0 and m.how == "page"
    assert m.text.count("# Peter") == 1
    assert find_section(m.text).body == "- a\n- b\n"


def test_other_files_merge_as_text():
    m = merge("bank/world.md", "a\n", "b\n", "c\n", merge_file)
    assert m.how == "plain" and m.conflicts == 1


# ------------------------------------------------------------------------- any concurrent appends

_FACT = st.sampled_from([f"Fact number {n} about the heron survey." for n in range(12)])


def _retained(text: str, statements: list[str]) -> str:
    """Each statement appended as `clawmem retain` appends it (place_fact)."""
    from datetime import date

    from clawmem.ingest.retain import place_fact
    from clawmem.markdown.facts import make_fact

    for s in statements:
        text = place_fact(text or None, make_fact("W", s, ["Ann"]), date(2025, 12, 1)).text
    return text


@settings(max_examples=60, deadline=None)
@given(
    base=st.lists(_FACT, max_size=4, unique=True),
    ours_add=st.lists(_FACT, max_size=4, unique=True),
    theirs_add=st.lists(_FACT, max_size=4, unique=True),
    ours_note=st.booleans(),
    theirs_note=st.booleans(),
)
def test_any_concurrent_appends_keep_every_fact_once_and_every_line(
    base, ours_add, theirs_add, ours_note, theirs_note
):
    # retain never appends a fact the log has already: the sides add only new ones
    ours_add = [f for f in ours_add if f not in base]
    theirs_add = [f for f in theirs_add if f not in base]
    b = _retained("", base)
    o = _retained(b, ours_add) + ("\n## Evening\n\nOur note.\n" if ours_note else "")
    t = _retained(b, theirs_add) + ("\n## Night\n\nTheir note.\n" if theirs_note else "")
    for first, second in ((o, t), (t, o)):
        m = merge_log(b, first, second, merge_file)
        assert m.conflicts == 0 and "<<<<<<<" not in m.text
        assert sorted(facts(m.text)) == sorted(set(base) | set(ours_add) | set(theirs_add))
        assert m.text.count("Our note.") == int(ours_note)
        assert m.text.count("Their note.") == int(theirs_note)
        assert m.text.startswith("# 2025-12-01\n") or not base  # the header stays on top
