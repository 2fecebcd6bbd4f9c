"""rrf-v16 (recall/answer_match.py): the messages among the first hits re-ordered by whether each
line can answer what the question asks, and who did it; what the question asks for is read from
its form. Every other hit (a fact, a page, a note no one said) keeps its place."""

from __future__ import annotations

from datetime import date

import pytest

from clawmem import open_workspace
from clawmem.recall import answer_match
from clawmem.recall.fusion import Ranking
from clawmem.text.query import Query, asks_for

TODAY = date(2025, 11, 30)


@pytest.mark.parametrize(
    ("question", "form"),
    [
        ("When did Kate move to Lisbon?", "when"),
        ("In what year did Peter start the band?", "when"),
        ("How long ago did Kate adopt the cat?", "when"),
        ("How many cats does Peter have?", "count"),
        ("How long was the flight?", "count"),
        ("Where does Kate live now?", "where"),
        ("In which city did Linh study?", "where"),
        ("Who won the 1998 world cup?", "who"),
        ("Why did Peter quit his job?", "why"),
        ("What made Kate change teams?", "why"),
        ("What is Kate's job?", None),
        ("Did Kate enjoy the concert?", None),
        ("", None),
    ],
)
def test_what_a_question_asks_for_is_read_from_its_form(question, form):
    assert asks_for(question) == form
    assert Query.parse(question, None).asks == form  # read once, with the rest of it


def _line(question: str, text: str) -> dict[str, float]:
    return answer_match.line_features(answer_match.asked(Query.parse(question, TODAY)), text)


def test_a_line_that_says_when_answers_a_when_question():
    f = _line("When did Kate start the pottery class?", "- Kate: I started pottery last week!")
    assert f["time"] == f["answers_form"] == f["said_by_asked"] == f["first_person"] == 1.0
    # the asked event's words without the name: "start", "pottery", "class"; she wrote two
    assert f["content_share"] == pytest.approx(2 / 3)
    g = _line("Where does Kate live?", "- Kate: I started pottery last week!")
    assert g["time"] == 1.0 and g["answers_form"] == 0.0  # a time is no place


def test_who_said_it_and_to_whom():
    asked = "What did Kate cook on Sunday?"
    hers = _line(asked, "- Kate: I cooked a big pot of pho for my parents")
    put_to_her = _line(asked, "- Elise: What did you cook this weekend, Kate?")
    assert hers["said_by_asked"] == 1.0 and hers["said_by_other"] == 0.0
    assert put_to_her["said_by_other"] == 1.0 and put_to_her["names_asked"] == 1.0
    assert put_to_her["second_person"] == 1.0 and put_to_her["asks"] == 1.0
    assert put_to_her["only_asks"] == 1.0
    # A note that no one said has no speaker, whoever the question names.
    note = _line(asked, "Simmer the pho bones for six hours.")
    assert note["said_by_asked"] == note["said_by_other"] == 0.0
    assert note["number"] == 1.0  # "six"


def test_a_number_a_place_a_name_and_a_cause():
    assert _line("How many books did Tim read?", "- Tim: I read 12 books")["answers_form"] == 1.0
    assert _line("Where did Tim go?", "- Tim: we flew to Lisbon")["answers_form"] == 1.0
    assert _line("Where did Tim go?", "- Tim: we stayed at home")["answers_form"] == 1.0
    assert _line("Who called Tim?", "- Tim: my sister Anna called")["answers_form"] == 1.0
    # The name asked about is no answer to "who"
    assert _line("Who called Tim?", "- Anna: I called Tim")["person"] == 0.0
    assert _line("Why did Tim quit?", "- Tim: I quit because of the commute")["cause"] == 1.0


def _hit(text: str, score: float, kind: str | None = None, path: str = "memory/2025-11-29.md"):
    from clawmem.recall.results import Hit

    return Hit(
        path=path, start_line=1, end_line=1, heading="", text=text,
        snippet=text, score=score, kind=kind, day=None, entities=(), confidence=None,
        valid_from=None, valid_to=None,
    )  # fmt: skip


def test_a_message_is_a_line_someone_said():
    assert answer_match.is_message(_hit("- Kate: I started pottery last week", 0.1))
    assert answer_match.is_message(_hit("Kate: I started pottery last week", 0.1))
    assert answer_match.is_message(_hit("User: what did we decide?", 0.1))
    assert answer_match.is_message(_hit("- John Zhang: the build is green", 0.1))
    # A fact, a page's line, a note no one said, a page's field or a note's label are not.
    assert not answer_match.is_message(_hit("- Kate: moved to Lisbon", 0.1, kind="W"))
    assert not answer_match.is_message(
        _hit("- Kate: prefers tea", 0.1, path="bank/entities/Kate.md")
    )
    assert not answer_match.is_message(_hit("Simmer the pho bones for six hours.", 0.1))
    assert not answer_match.is_message(_hit("last_updated: 2025-11-20", 0.1))
    assert not answer_match.is_message(_hit("- payments-service: v2.3.1 runs on ECS", 0.1))
    assert not answer_match.is_message(_hit("He wants errors explained as follows: short", 0.1))
    # Two people's lines in one unit: an exchange kept as a paragraph, or a joined pair.
    assert not answer_match.is_message(_hit("Jack: I like rock.\nAssistant: I like jazz.", 0.1))
    assert not answer_match.is_message(_hit("- Elise: Since when?\n- Kate: Last week", 0.1))
    assert answer_match.is_message(_hit("- Kate: I started pottery\n  last week", 0.1))


def test_only_messages_trade_places():
    """A fact and a note hold their places; the messages move among the places they hold."""
    q = Query.parse("When did Kate start the pottery class?", TODAY)
    hits = [
        _hit("- Elise: Kate, how is the pottery class going? When does it start?", 0.10),
        _hit("- W @Kate: Kate takes a pottery class.", 0.099, kind="W"),
        _hit("Pottery class: Tuesdays at the community centre.", 0.098),
        _hit("- Kate: I started the pottery class last Tuesday, it was lovely", 0.097),
        _hit("- Kate: I love my cat", 0.04),
    ]
    moved = answer_match.reorder(q, hits, depth=5)
    assert moved[1:3] == hits[1:3]
    assert moved[0] == hits[3] and moved[3] == hits[0]
    assert sorted(h.text for h in moved) == sorted(h.text for h in hits)


def test_only_the_first_hits_move_and_a_kept_lead_stays():
    q = Query.parse("When did Kate start the pottery class?", TODAY)
    hits = [
        _hit("- Elise: Kate, how is the pottery class going? When does it start?", 0.10),
        _hit("- Kate: I started the pottery class last Tuesday, it was lovely", 0.099),
        _hit("- Elise: pottery is fun", 0.05),
        _hit("- Kate: I love my cat", 0.04),
    ]
    moved = answer_match.reorder(q, hits, depth=2)
    assert [h.text for h in moved] == [hits[1].text, hits[0].text, hits[2].text, hits[3].text]
    assert answer_match.reorder(q, hits, depth=2, keep=1) == hits  # one hit to move: none moves
    assert answer_match.reorder(q, hits, depth=0) == hits
    assert answer_match.reorder(q, hits[:1], depth=5) == hits[:1]


CHAT = """# 2025-11-20

## Session 4

- Elise: Hi Kate! How are you today? Did you go to the pottery class?
- Kate: Hi Elise, I'm fine. The weather is cold here.
- Elise: Pottery sounds like so much fun, Kate. When did you start the pottery class?
- Kate: I started the pottery class last Tuesday with my neighbour, and I loved it.
- Elise: I tried a pottery class once, years ago, and my bowl collapsed.
- Kate: My cat Miso sleeps on the doormat all day.
- Elise: My brother Tom moved to Lisbon in March.
- Kate: I will bake a cake for the pottery group.
"""


def test_on_real_files_with_the_real_model(tmp_path, shared_model):
    """The first hits are the same units in another order; everything after them is as before;
    and the line saying when Kate started the class, in her own words, comes first."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2025-11-20.md").write_text(CHAT, "utf-8")
    mem = open_workspace(ws, environ={"CLAWMEM_MIN_RELEVANCE": "0"})
    mem.index()
    today_order = Ranking(answer_depth=0)
    for question in (
        "When did Kate start the pottery class?",
        "Where did Tom move?",
        "What did Kate bake?",
        "Who sleeps on the doormat?",
    ):
        before = mem.recall(question, k=8, today=TODAY, sync=False, ranking=today_order).hits
        after = mem.recall(question, k=8, today=TODAY, sync=False).hits
        assert after[0].score >= 0.0 and len(before) == len(after)
        assert sorted(h.citation for h in before[:5]) == sorted(h.citation for h in after[:5])
        assert [h.citation for h in before[5:]] == [h.citation for h in after[5:]]
    when = mem.recall("When did Kate start the pottery class?", k=3, today=TODAY, sync=False)
    assert "last Tuesday" in when.hits[0].text
    assert when.ranking == "rrf-v20"


DAYS = {
    "2025-11-18": "- Elise: Your pottery class sounds so great, Kate, I want to join a pottery class"
    " too. When did the pottery class start?\n\n- Kate: The weather is cold here today.\n",
    "2025-11-19": "- Elise: My brother Tom moved to Lisbon in March.\n\n"
    "- Kate: I will bake a cake for the pottery group.\n",
    "2025-11-20": "- Kate: I started going to pottery last Tuesday with my neighbour, and I loved"
    " it.\n\n- Elise: I tried a pottery class once, years ago, and my bowl collapsed.\n",
    "2025-11-21": "- Kate: My cat Miso sleeps on the doormat all day.\n\n"
    "- Elise: We went hiking in the mountains near Sintra.\n",
}


def test_a_message_on_the_asked_event_comes_before_small_talk(tmp_path, shared_model):
    """Messages on four days (none next to another, so none is joined): asked when Kate started
    the pottery class, her remark on the weather (a first-person line saying "today", ranked
    second by the legs) comes after every message on pottery among the first five. rrf-v15
    showed it second."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    for day, text in DAYS.items():
        (ws / "memory" / f"{day}.md").write_text(f"# {day}\n\n{text}", "utf-8")
    mem = open_workspace(ws, environ={"CLAWMEM_MIN_RELEVANCE": "0"})
    mem.index()
    question = "When did Kate start the pottery class?"
    before = mem.recall(question, k=5, today=TODAY, sync=False, ranking=Ranking(answer_depth=0))
    after = mem.recall(question, k=5, today=TODAY, sync=False)
    assert {h.citation for h in before.hits} == {h.citation for h in after.hits}
    assert "last Tuesday" in after.hits[0].text
    texts = [h.text for h in after.hits]
    weather = next(i for i, t in enumerate(texts) if "weather" in t)
    assert all(i < weather for i, t in enumerate(texts) if "pottery" in t), texts


def test_a_fact_or_note_holding_the_asked_time_comes_before_those_that_do_not():
    """rrf-v19 (``form_first``): among the units no one said, those holding a time (for "when")
    and some of the question's words or names move before those that do not, in the places they
    hold; a message keeps its place, and a question asking for what or for all of something
    leaves the order alone."""
    q = Query.parse("When is the throughput report due?", TODAY)
    hits = [
        _hit("- Blocked on staging access; Henrike will ping infra.", 0.10),
        _hit("- Henrike: the throughput report is going fine", 0.099),
        _hit("- Friday we eat cake.", 0.098),  # a time, none of the question's words
        _hit("wants the throughput report by Friday 2026-11-27.", 0.097, kind="W"),
        _hit("- The report generator crashed on Tuesday.", 0.05),  # beyond the depth
    ]
    moved = answer_match.form_first(q, hits, depth=4)
    assert moved == [hits[i] for i in (3, 1, 0, 2, 4)]
    assert answer_match.form_first(q, hits, depth=4, keep=1)[0] == hits[0]
    assert answer_match.form_first(q, hits, depth=0) == hits
    for other in ("What is the throughput report?", "What reports did Henrike write?"):
        assert answer_match.form_first(Query.parse(other, TODAY), hits, depth=4) == hits
    # a number for "how long" ("how many" asks for all of something: its spread is kept)
    count = Query.parse("How long was the outage?", TODAY)
    regions = [
        _hit("- The outage report needs work.", 0.1),
        _hit("- The outage lasted forty minutes.", 0.09),
    ]
    assert answer_match.form_first(count, regions, depth=5) == regions[::-1]
    # A day the line does not state outright ("today", "last week": the log's own day, shared
    # by every line of the log) is no answer to "when": those lines keep their places.
    relative = [
        _hit("- The throughput report is on my list.", 0.1),
        _hit("- Sent the throughput report today.", 0.09),
        _hit("- Finished the throughput report last week.", 0.08),
        _hit("- The throughput report went out on the 14th.", 0.07),
    ]
    assert answer_match.form_first(q, relative, depth=4) == [relative[i] for i in (3, 0, 1, 2)]


# Hand-written notes (names made up for this test): a section every line of which the question's
# words reach through its heading, a list of actions, a standup, and the Retain fact stating the
# date asked for.
STANDUP = """# 2026-11-24

## Throughput report
- Draft is half written, the graphs are still missing.
- Blocked on staging access; Henrike will ping infra.
- Wojciech wants the numbers split per region.

## Actions
- Action: Benedikt writes the migration runbook.
- Action: Henrike reviews the dashboard changes.
- Action: Benedikt moves the backups back to the old bucket.

## Standup
- Henrike fixed the flaky login test.
- Benedikt is out until Thursday.

## Retain
- W @Wojciech: wants the throughput report by Friday 2026-11-27.
- B @Henrike: prefers async reviews over meetings.
"""

INFRA = """# 2026-11-20

## Lunch
- Tried the new ramen place near the office, too salty.
- Henrike recommended a podcast about databases.

## Infra
- Benedikt rotated the deploy keys.
- The report generator crashed twice on large inputs.
"""


def test_the_fact_or_line_saying_when_comes_first_in_hand_written_notes(tmp_path, shared_model):
    """rrf-v19 on real files with the real model: "when is the throughput report due?" gets the
    Retain fact giving the date first (third before: two lines of the report's section, which
    the heading and the neighbour boost lift, came first), and "When is Benedikt back?" the
    line saying he is out until Thursday (second before, behind the actions holding his name
    and "back"). With ``form_depth`` 0 the order is rrf-v18's."""
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    (ws / "memory" / "2026-11-24.md").write_text(STANDUP, "utf-8")
    (ws / "memory" / "2026-11-20.md").write_text(INFRA, "utf-8")
    mem = open_workspace(ws, environ={"CLAWMEM_MIN_RELEVANCE": "0"})
    mem.index()
    today = date(2026, 11, 25)
    off = Ranking(form_depth=0)
    due = "when is the throughput report due?"
    back = "When is Benedikt back?"
    hits = mem.recall(due, k=5, today=today, sync=False).hits
    assert hits[0].kind == "W" and "2026-11-27" in hits[0].text, [h.text for h in hits]
    hits = mem.recall(back, k=5, today=today, sync=False).hits
    assert "out until Thursday" in hits[0].text, [h.text for h in hits]
    # the same units among the first five, in another order
    for question in (due, back):
        before = mem.recall(question, k=5, today=today, sync=False, ranking=off).hits
        after = mem.recall(question, k=5, today=today, sync=False).hits
        assert {h.citation for h in before} == {h.citation for h in after}
    mem.close()
