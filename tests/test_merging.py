"""The merge rules for what clawmem owns (daily logs, generated sections), on git's line merge."""

from __future__ import annotations

import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clawmem.files.gitmerge import conflict_hunks, merge_file
from clawmem.markdown.facts import extract_facts
from clawmem.markdown.markers import find_section, splice
from clawmem.markdown.merging import (
    is_core,
    is_daily_log,
    is_merged,
    merge,
    merge_log,
    merge_page,
    union_by_heading,
)

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
    m = merge_log(BASE, ours, theirs, merge_file, conflict_hunks)
    assert m.conflicts == 0
    assert facts(m.text) == ["Lives in Vienna.", "Prefers tea.", "Fixed the build."]
    # git's own merge conflicts on the same input: the rule is what makes it clean
    assert merge_file(BASE, ours, theirs)[1] == 1


def test_the_same_fact_retained_on_both_sides_is_kept_once():
    ours = BASE + "- W @Peter: Prefers tea.\n- W @Ann: Likes chess.\n"
    theirs = BASE + "- W @Peter: Prefers tea.\n"
    m = merge_log(BASE, ours, theirs, merge_file, conflict_hunks)
    assert facts(m.text) == ["Lives in Vienna.", "Prefers tea.", "Likes chess."]
    # in either order
    m2 = merge_log(BASE, theirs, ours, merge_file, conflict_hunks)
    assert sorted(facts(m2.text)) == sorted(facts(m.text))


def test_a_duplicate_the_person_wrote_on_purpose_stays():
    base = BASE + "- W @Peter: Lives in Vienna.\n"  # twice in the base already
    ours = base + "- W: One.\n"
    theirs = base + "- W: Two.\n"
    m = merge_log(base, ours, theirs, merge_file, conflict_hunks)
    assert facts(m.text).count("Lives in Vienna.") == 2


def test_narrative_appended_on_one_side_and_a_fact_on_the_other():
    ours = BASE + "\n## Evening\n\nDinner with Ann.\n"
    theirs = BASE + "- W @Ann: Moved to Graz.\n"
    for a, b in ((ours, theirs), (theirs, ours)):
        m = merge_log(BASE, a, b, merge_file, conflict_hunks)
        assert m.conflicts == 0
        assert facts(m.text) == ["Lives in Vienna.", "Moved to Graz."], m.text
        assert "Dinner with Ann." in m.text and "## Evening" in m.text
        assert m.text.count("Moved to Graz.") == 1


def test_an_edit_on_one_side_and_an_append_on_the_other_both_apply():
    ours = BASE.replace("Morning stand-up.", "Morning stand-up, moved to 10:00.")
    theirs = BASE + "- W: New fact.\n"
    m = merge_log(BASE, ours, theirs, merge_file, conflict_hunks)
    assert "moved to 10:00" in m.text and "New fact." in m.text
    assert "Morning stand-up.\n" not in m.text


def test_both_sides_edit_the_same_line_keeps_both_lines():
    ours = BASE.replace("Vienna", "Graz")
    theirs = BASE.replace("Vienna", "Linz")
    m = merge_log(BASE, ours, theirs, merge_file, conflict_hunks)
    assert m.conflicts == 0 and "<<<<<<<" not in m.text
    assert set(facts(m.text)) == {"Lives in Graz.", "Lives in Linz."}


def test_a_log_created_on_both_sides():
    ours = "# 2025-11-28\n\n## Retain\n- W: A.\n"
    theirs = "# 2025-11-28\n\n## Retain\n- W: B.\n"
    m = merge_log("", ours, theirs, merge_file, conflict_hunks)
    assert facts(m.text) == ["A.", "B."]
    assert m.text.count("## Retain") == 1


def test_crlf_logs_keep_their_line_endings():
    base = BASE.replace("\n", "\r\n")
    ours = base + "- W: A.\r\n"
    theirs = base + "- W: B.\r\n"
    m = merge_log(base, ours, theirs, merge_file, conflict_hunks)
    assert "\n" not in m.text.replace("\r\n", "")
    assert facts(m.text)[-2:] == ["A.", "B."]


LOG = "# 2025-11-27\n\nWifi at the cabin:\npassword hunter2xyz\nAsk Ann for the key.\n\n## Retain\n"


def test_a_line_deleted_on_one_side_next_to_an_edit_on_the_other_conflicts():
    scrubbed = LOG.replace("password hunter2xyz\n", "")
    edited = LOG.replace("Ask Ann for the key.", "Ask Ann for the key (she is back Friday).")
    assert merge_file(LOG, scrubbed, edited)[1] == 1  # plain git: a conflict
    for ours, theirs in ((scrubbed, edited), (edited, scrubbed)):
        m = merge("memory/2025-11-27.md", LOG, ours, theirs, merge_file, conflict_hunks)
        # never silently back: a conflict with git's markers, as plain git shows it
        assert m.conflicts >= 1 and "<<<<<<< ours" in m.text and ">>>>>>> theirs" in m.text
        assert "(she is back Friday)" in m.text


def test_a_line_rewritten_on_one_side_next_to_an_edit_on_the_other_conflicts():
    redacted = LOG.replace("password hunter2xyz", "password: see the vault")
    edited = LOG.replace("Wifi at the cabin:", "Wifi at the cabin (new router):")
    m = merge_log(LOG, redacted, edited, merge_file, conflict_hunks)
    assert m.conflicts >= 1 and "<<<<<<<" in m.text


def test_a_fact_changed_next_to_an_append_is_settled_by_the_fact_rules():
    # A fact one side rewrote and the other kept is counted, not brought back: no conflict.
    ours = BASE.replace("Lives in Vienna.", "Lives in Graz.") + "- W: A.\n"
    theirs = BASE + "- W: B.\n"
    m = merge_log(BASE, ours, theirs, merge_file, conflict_hunks)
    assert m.conflicts == 0 and facts(m.text) == ["Lives in Graz.", "A.", "B."]


def test_crlf_against_lf_never_doubles_the_file():
    converted = BASE.replace("\n", "\r\n") + "- W: A.\r\n"  # an editor saved it with CRLF
    appended = BASE + "- W: B.\n"
    for ours, theirs in ((converted, appended), (appended, converted)):
        m = merge("memory/2025-11-27.md", BASE, ours, theirs, merge_file, conflict_hunks)
        assert m.conflicts == 0
        assert m.text.count("Morning stand-up.") == 1 and m.text.count("## Retain") == 1
        assert sorted(facts(m.text)) == ["A.", "B.", "Lives in Vienna."]
        assert "\n" not in m.text.replace("\r\n", "")  # the converting side's endings
    page_ = "# Peter\n\nNotes.\n"
    m = merge(
        "bank/world.md",
        page_,
        page_.replace("\n", "\r\n"),
        page_ + "More.\n",
        merge_file,
        conflict_hunks,
    )
    assert m.conflicts == 0 and m.text == "# Peter\r\n\r\nNotes.\r\nMore.\r\n"


CORE = "# Memory\n\nDurable facts and preferences.\n\n- Prefers tea.\n"


def test_memory_md_lines_appended_on_both_sides_are_both_kept():
    assert is_core("MEMORY.md") and is_core("notes/memory.md") and not is_core("bank/world.md")
    ours, theirs = CORE + "- Lives in Vienna.\n", CORE + "- Works at Kestrel.\n"
    assert merge_file(CORE, ours, theirs)[1] == 1  # plain git: a conflict
    m = merge("MEMORY.md", CORE, ours, theirs, merge_file, conflict_hunks)
    assert m.conflicts == 0 and m.text == CORE + "- Lives in Vienna.\n- Works at Kestrel.\n"
    # without a final newline in the base
    base = CORE.rstrip("\n")
    m = merge("MEMORY.md", base, base + "\nA\n", base + "\nB\n", merge_file, conflict_hunks)
    assert m.conflicts == 0 and m.text == base + "\nA\nB\n"


def test_memory_md_edited_on_both_sides_conflicts_as_any_text():
    ours = CORE.replace("Prefers tea.", "Prefers green tea.")
    theirs = CORE.replace("Prefers tea.", "Prefers coffee.")
    m = merge("MEMORY.md", CORE, ours, theirs, merge_file, conflict_hunks)
    assert m.conflicts == 1 and "<<<<<<< ours" in m.text
    # a line deleted on one side and appended after on the other: a conflict, not a union
    deleted = CORE.replace("- Prefers tea.\n", "")
    m = merge("MEMORY.md", CORE, deleted, CORE + "- New.\n", merge_file, conflict_hunks)
    assert m.conflicts == 1


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


def test_a_union_keeps_each_line_under_its_own_heading():
    base = "## Facts from the log\n\n### World\n- w0 (memory/a.md#L5)\n"
    ours = (
        "## Facts from the log\n\n### World\n- w1 (memory/a.md#L6)\n- w0 (memory/a.md#L5)\n"
        "\n### Opinions\n- o1 (memory/a.md#L7)\n"
    )
    theirs = (
        "## Facts from the log\n\n### World\n- w2 (memory/a.md#L6)\n- w0 (memory/a.md#L5)\n"
        "\n### Opinions\n- o2 (memory/a.md#L7)\n\n### Observations\n- s2\n"
    )
    body = union_by_heading(base, ours, theirs, merge_file)
    assert body.count("### Opinions") == 1 and body.count("### World") == 1
    world, opinions, observations = body.split("### ")[1:]
    assert world.splitlines()[1:4] == [
        "- w1 (memory/a.md#L6)",
        "- w2 (memory/a.md#L6)",
        "- w0 (memory/a.md#L5)",
    ]
    assert opinions.split("\n")[1:3] == ["- o1 (memory/a.md#L7)", "- o2 (memory/a.md#L7)"]
    assert observations == "Observations\n- s2\n"


def test_a_block_one_side_dropped_and_the_other_left_is_dropped():
    base = "## F\n\n### World\n- w\n\n### Opinions\n- o\n"
    ours = "## F\n\n### World\n- w\n- w1\n"  # the opinion is gone (superseded, hidden)
    theirs = "## F\n\n### World\n- w\n- w2\n\n### Opinions\n- o\n"
    body = union_by_heading(base, ours, theirs, merge_file)
    assert "### Opinions" not in body and "- w1" in body and "- w2" in body


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
    m = merge("bank/entities/Peter.md", "", ours, theirs, merge_file, conflict_hunks)
    assert m.conflicts == 0 and m.how == "page"
    assert m.text.count("# Peter") == 1
    assert find_section(m.text).body == "- a\n- b\n"


def test_other_files_merge_as_text():
    m = merge("bank/world.md", "a\n", "b\n", "c\n", merge_file, conflict_hunks)
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
        m = merge_log(b, first, second, merge_file, conflict_hunks)
        assert m.conflicts == 0 and "<<<<<<<" not in m.text
        assert sorted(facts(m.text)) == sorted(set(base) | set(ours_add) | set(theirs_add))
        assert m.text.count("Our note.") == int(ours_note)
        assert m.text.count("Their note.") == int(theirs_note)
        assert m.text.startswith("# 2025-12-01\n") or not base  # the header stays on top


# ------------------------------------------------------------------ unions of generated sections

_KINDS = {"World": "W", "Experience": "B", "Opinions": "O", "Observations": "S"}


def _entity_body(blocks: dict[str, list[str]]) -> str:
    """An entity page's section as reflect writes it: a heading per kind, its facts below."""
    out = ["## Facts from the log", ""]
    for kind in _KINDS:
        if blocks.get(kind):
            out += [f"### {kind}", *(f"- {_KINDS[kind]} {x}" for x in blocks[kind]), ""]
    while out and not out[-1]:
        out.pop()
    return "\n".join(out) + "\n"


def _misplaced(text: str) -> str | None:
    heads = [line for line in text.splitlines() if line.startswith("### ")]
    if len(heads) != len(set(heads)):
        return "a heading twice"
    under = None
    for line in text.splitlines():
        if line.startswith("### "):
            under = _KINDS[line[4:]]
        elif line.startswith("- ") and line[2] != under:
            return f"{line!r} under {under!r}"
    return None


def test_unions_of_rewritten_sections_never_put_a_fact_under_another_heading():
    """Both clones rewrote an entity page (new facts on top of a kind, a fact struck through):
    the union keeps every line of both, each under its kind's heading, each heading once. A
    line-by-line union of the same sections does not (counted, so this test can fail)."""
    import random

    rng = random.Random(5)
    flat_wrong = 0
    for _ in range(200):
        base = {k: [str(j) for j in range(rng.randint(0, 2))] for k in _KINDS}

        def side(tag: str, base: dict = base) -> dict[str, list[str]]:
            d = {k: list(v) for k, v in base.items()}
            for k in _KINDS:
                if rng.random() < 0.5:
                    d[k] = [f"{tag}{j}" for j in range(rng.randint(1, 2))] + d[k]
                if d[k] and rng.random() < 0.2:
                    d[k][-1] = f"~~{d[k][-1]}~~"
            return d

        b, o, t = _entity_body(base), _entity_body(side("o")), _entity_body(side("t"))
        merged = union_by_heading(b, o, t, merge_file)
        assert _misplaced(merged) is None, (b, o, t, merged)
        lines = set(merged.splitlines())
        changed = (set(o.splitlines()) ^ set(b.splitlines())) | (
            set(t.splitlines()) ^ set(b.splitlines())
        )
        kept = set(o.splitlines()) & set(t.splitlines())
        assert {x for x in changed if x.startswith("- ") and x not in b.splitlines()} <= lines
        assert {x for x in kept if x.startswith("- ")} <= lines
        flat_wrong += _misplaced(merge_file(b, o, t, union=True)[0]) is not None
    assert flat_wrong > 20
