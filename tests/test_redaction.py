"""Credentials never reach the index, a page clawmem writes, or its output (issue 31).

A hundred credentials of forty-odd kinds (benchmarks/soak/secrets.py, made at run time so that this
repository holds none) are planted in notes, retained text and a Claude Code transcript; every byte
under .memory/, every page reflect writes and every output of the CLI and the MCP tools is searched
for them. Tricky text that holds none is left alone."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from benchmarks.soak.secrets import NOT_SECRETS, planted, run_secrets
from hypothesis import example, given
from hypothesis import strategies as st

from clawmem import open_workspace
from clawmem.ingest.retain import looks_like_secret
from clawmem.store import db, schema
from clawmem.text import secret_shapes
from clawmem.text.redact import REDACTED, find_secret, find_secrets, redact

from .conftest import cli


def test_every_planted_kind_is_recognised_and_redacted_in_place():
    """Forty seeds of the planting (4,040 credentials; each seed draws new values, so a rule that
    holds only for the values of one seed fails here), in a line of their own and inside a
    sentence of a conversation."""
    for seed in range(40):
        items = planted(seed)
        assert len(items) >= 100 and len({p.kind for p in items}) >= 40
        for p in items:
            assert find_secret(p.text) is not None, (seed, p.kind)
            assert looks_like_secret(f"note: {p.text}") is not None, p.kind  # retain refuses it
            # (A passphrase runs to the end of its clause: the next line is another.)
            out = redact(f"before {p.text}\nafter")
            assert p.secret not in out, (seed, p.kind, out)
            assert REDACTED in out and out.startswith("before ") and out.endswith("\nafter")
            assert out.count("\n") == p.text.count("\n") + 1, p.kind  # lines keep their numbers
            assert redact(out) == out, p.kind  # redacting again changes nothing
            said = redact(f"For the record, {p.text} - keep it between us.")
            assert p.secret not in said, (seed, p.kind, said)
            # Only a passphrase or a list of codes runs on to the end of its clause.
            runs_on = {f.kind for f in find_secrets(p.text)} & {
                "a passphrase",
                "2FA recovery codes",
            }
            assert runs_on or said.endswith(" - keep it between us."), (seed, p.kind, said)


def test_tricky_text_that_holds_no_secret_is_left_alone():
    for text in NOT_SECRETS:
        assert redact(text) == text and find_secret(text) is None, (text, find_secrets(text))


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        (
            "the wifi password is blue monkey 42 so ask me",
            "the wifi password is [redacted] so ask me",
        ),
        ("login: admin / Zq7-x9", "login: admin / [redacted]"),
        ("mysql -u root -pS3cr3t shop", "mysql -u root -p[redacted] shop"),
        ("cache at redis://:pw-Zq7@cache:6379", "cache at redis://:[redacted]@cache:6379"),
        ("密码是abc123，别告诉别人", "密码是[redacted]，别告诉别人"),
        ("PGPASSWORD=hunter2 psql", "PGPASSWORD=[redacted] psql"),
    ],
)
def test_what_stays_around_a_secret(text, kept):
    """The words that say what was there stay: a reader (and recall) still sees a password was
    said; only the value goes."""
    assert redact(text) == kept


def _r(*parts: str) -> str:
    return "".join(parts)  # a token's shape assembled at run time: this file holds none


# Written apart from the planted set and run only once the rules were done (37 of 40 at the first
# run; docs/reliability.md): (sentence, the secret in it).
SAID_OTHERWISE = [
    ("btw the password for the guest network is Kiwi2024!", "Kiwi2024!"),
    ("Router admin pass: zX81kLq", "zX81kLq"),
    ("new wifi pw is dolphin77", "dolphin77"),
    ("Mom's iPad passcode is 2580", "2580"),
    ("gate code 4417", "4417"),
    ("The alarm code is 9182, disarm within 30s", "9182"),
    ("Jira: user peter.n, password Fr0stbite#9", "Fr0stbite#9"),
    (_r("export OPENAI_API_KEY=sk-", "abcDEF1234567890ghijKLMN"), "abcDEF1234567890ghijKLMN"),
    ("SMTP_PASSWORD='m4il-S3nd'", "m4il-S3nd"),
    ("mysql -h db -uadmin -pQw3rty99 < dump.sql", "Qw3rty99"),
    ("psql postgresql://:s3cr3tpw@localhost/app", "s3cr3tpw"),
    ("my bank card is 4532 0151 1283 0366", "4532 0151 1283 0366"),
    ("SSN: 219-09-9999", "219-09-9999"),
    ("passphrase is purple elephant dancing slowly", "purple elephant dancing slowly"),
    ("seed phrase: abandon ability able about above absent absorb", "abandon ability able about"),
    ("mật khẩu email của em là hoa hong 99", "hoa hong 99"),
    ("Mật khẩu: Saigon@2024", "Saigon@2024"),
    ("ログインパスワードはtanuki55です", "tanuki55"),
    ("银行卡密码是 852963", "852963"),
    ("WiFi密碼：happy888home", "happy888home"),
    ("비밀번호: qwer1234!", "qwer1234!"),
    ("Пароль от почты — Medved2023", "Medved2023"),
    ("Mein Passwort ist Sonnenblume7", "Sonnenblume7"),
    ("A senha do wifi é cafe2024", "cafe2024"),
    ("token: 7f3e9a2b1c4d5e6f7a8b9c0d1e2f3a4b", "7f3e9a2b1c4d5e6f7a8b9c0d1e2f3a4b"),
    ("The recovery key is 1A2B-3C4D-5E6F-7G8H", "1A2B-3C4D-5E6F-7G8H"),
    ("license key: QWERT-12345-ASDFG-67890-ZXCVB", "QWERT-12345-ASDFG-67890-ZXCVB"),
    ("backup codes 8812 0043 9931 7720 6655", "8812 0043 9931 7720 6655"),
    ("the combination to the safe is 12-34-56", "12-34-56"),
    ("PIN: 0000", "0000"),
    ("Password - Tr1cky!", "Tr1cky!"),
    ("Netflix login is peter@example.com / Binge2023", "Binge2023"),
    ("wpa key = greenTea42", "greenTea42"),
    ("passport no. X12345678", "X12345678"),
    ("ssh key passphrase 'north wind 7'", "north wind 7"),
    ("set the admin password to Admin!234", "Admin!234"),
    ("PGPASSWORD=pg123 pg_dump app", "pg123"),
]


@pytest.mark.parametrize(("text", "secret"), SAID_OTHERWISE)
def test_secrets_said_otherwise(text, secret):
    assert secret not in redact(text) and find_secret(text) is not None


def test_needles_are_lower_case_and_in_every_match():
    """The one-pass needle search must never hide a secret: a shape runs only where one of its
    needles is, so every match of a shape in the planted texts holds one."""
    assert all(n == n.lower() for s in secret_shapes.SHAPES for n in s.needles)
    for p in planted(31):
        for shape in secret_shapes.SHAPES:
            for m in shape.pattern.finditer(p.text):
                if shape.check is not None and not shape.check(m):
                    continue
                assert any(n in m.group(0).lower() for n in shape.needles), (shape.kind, p.kind)


def test_a_hundred_secrets_reach_no_byte_no_page_and_no_output(ws, tmp_path, hash_model):
    """The soak's secret planting, in-process with vectors on (the test embedder): notes,
    `retain` and a transcript; index, reflect (entity pages and episodes), then every byte under
    .memory/ (index, WAL, cache), every generated page and every output (CLI and MCP)."""
    shutil.rmtree(ws)

    def run(args: list[str]) -> tuple[int, str, str]:
        r = cli("-w", str(tmp_path / "ws"), *args)
        return r.code, r.out, r.err

    fig = run_secrets(tmp_path, 31, lambda msg: None, cli=run)
    assert fig["planted"] >= 100 and fig["kinds"] >= 40
    assert fig["notes"] and fig["retain"] and fig["transcript"]
    assert fig.get("failures") is None, fig["failures"]
    assert fig["accepted_without_flag"] == 0 and fig["retain_refused"] == fig["retain"]
    assert fig["episode_pages"] >= 1 and fig["places_checked"] > 50
    assert fig["secrets_found"] == 0, fig["found"]
    assert fig["false_positives"] == 0, fig["false_positive_texts"]
    assert fig["mcp_refusal_names_the_real_flag"]
    # Reflect did page the facts (redacted), so the search above had something to search.
    page = (tmp_path / "ws" / "bank" / "entities" / "Peter.md").read_text(encoding="utf-8")
    assert page.count(REDACTED) >= 10
    episode = next((tmp_path / "ws" / "memory" / "episodes").glob("*.md")).read_text()
    assert REDACTED in episode


def test_get_of_part_of_a_key_block_shows_none_of_it(ws):
    """A block that spans lines is recognised as a whole even when `get` asks for its middle."""
    p = next(x for x in planted(31) if x.kind == "PEM private key")
    (ws / "memory" / "2025-12-06.md").write_text(f"# Keys\n\n{p.text}\n", encoding="utf-8")
    mem = open_workspace(ws, environ={})
    got = mem.get("memory/2025-12-06.md", from_line=5, lines=2)
    assert got.from_line == 5 and got.to_line == 6
    assert not any(line in got.text for line in p.secret.split("\n"))
    whole = mem.get("memory/2025-12-06.md").text
    assert whole.count("\n") == p.text.count("\n") + 2


def test_an_index_built_under_older_rules_is_rebuilt(ws, lexical):
    """Text indexed before redaction learned a kind stays in an index that is trusted: one
    recorded with another redaction version is rebuilt, and the secret leaves its bytes."""
    p = next(x for x in planted(31) if x.kind == "wifi password in words")
    (ws / "memory" / "2025-12-06.md").write_text(f"# Wifi\n\n- {p.text}\n", encoding="utf-8")
    assert cli("-w", str(ws), "index").code == 0
    path = ws / ".memory" / "index.sqlite"
    conn, _ = db.connect(path)
    with conn:
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'redaction_version'")
        # What an older clawmem would have stored: the text as it was.
        conn.execute("UPDATE chunks SET text = ? WHERE path = 'memory/2025-12-06.md'", (p.text,))
    conn.close()
    assert p.secret.encode() in path.read_bytes()
    r = cli("-w", str(ws), "index")
    assert r.code == 0, r.err
    conn, _ = db.connect(path, readonly=True)
    version = conn.execute("SELECT value FROM meta WHERE key = 'redaction_version'").fetchone()
    conn.close()
    assert version[0] == str(schema.REDACTION_VERSION)
    stored = b"".join(f.read_bytes() for f in (ws / ".memory").glob("index.sqlite*"))
    assert p.secret.encode() not in stored


def test_retain_refuses_and_names_the_flag_the_mcp_tool_names_the_person(ws, lexical):
    p = next(x for x in planted(31) if x.kind == "PIN in words")
    r = cli("-w", str(ws), "retain", p.text)
    assert r.code == 7 and "refusing to retain text that looks like a PIN" in r.err
    assert "--allow-secret" in r.err
    from clawmem.cli.mcp.dispatch import Tools

    tools = Tools(open_workspace(ws, environ={"CLAWMEM_VECTORS": "0"}))
    ok, said = tools.call("memory_retain", {"text": p.text})
    assert not ok and isinstance(said, str) and "refusing to retain" in said
    assert "pass allow_secret" not in said and "`clawmem retain --allow-secret`" in said
    assert re.search(r"hint: retain it without the credential", said)
    # With the flag, the line is written as given and what is shown of it is redacted.
    r = cli("-w", str(ws), "retain", p.text, "--allow-secret", "--json")
    assert r.code == 0 and p.secret not in r.out and REDACTED in json.loads(r.out)["line_text"]
    assert p.secret in Path(ws / json.loads(r.out)["path"]).read_text(encoding="utf-8")


def test_check_shows_a_malformed_fact_redacted(ws, lexical):
    """`check` prints the lines it cannot read, and the pre-commit hook runs it: redacted too."""
    p = next(x for x in planted(31) if x.kind == "wifi password in words")
    (ws / "memory" / "2025-12-06.md").write_text(
        f"# 2025-12-06\n\n## Retain\n- O(c=high) @Peter: {p.text}\n", encoding="utf-8"
    )
    r = cli("-w", str(ws), "check", "--json")
    problems = [x for x in json.loads(r.out) if x["path"] == "memory/2025-12-06.md"]
    assert problems and problems[0]["line"] == 4 and REDACTED in problems[0]["text"]
    assert p.secret not in r.out + r.err


_PIECES = st.sampled_from(
    ["password", "is", ":", "=", "PIN", "mật khẩu", "là", "パスワード", "は", "密码", "是", "login",
     "/", "admin", "abc123", "Xy7(", "$", "{{", "\n", " ", "--password", "mysql", "-p", "://",
     "@", "4111 1111 1111 1111", "recovery codes", "- 1234-5678", "\u2028", "İ", "'", '"', "「",
     "token", "sk-", "Bearer", "Authorization:", REDACTED]
)  # fmt: skip


@given(st.one_of(st.text(max_size=200), st.lists(_PIECES, max_size=40).map(" ".join)))
# Found by this test in CI: the second pass read "is [redacted]" as the cue's modifier.
@example("mật khẩu is PIN - 1234-5678")
# And in a second run: the first cue's value, once redacted, left the next cue to take "--password".
@example("mật khẩu password --password is login")
def test_redaction_keeps_lines_and_is_idempotent(text):
    out = redact(text)
    assert out.count("\n") == text.count("\n")
    assert redact(out) == out


@pytest.mark.parametrize(
    "unit",
    [
        "sk-",
        "ghp_",
        "-----BEGIN PRIVATE KEY-----\n",
        "aws_secret_key=",
        "TOKEN=x",
        "password=",
        "pwd=",
        "db://u:p@",
    ],
)
def test_a_run_of_needles_inside_one_secret_is_redacted_in_linear_time(unit):
    """Every needle inside a secret found already was matched again to the end of its run:
    "sk-" 30,000 times over (90 KB, one word of a page or a transcript line) took 10 s to
    redact and 33 s for twice the text; 3,000 BEGIN PRIVATE KEY lines with no END 8 s and
    36 s; "aws_secret_key=" 5,000 times over 6 s; "password=" 10,000 times over 10 s and 49 s
    (a connection string's Password=). The bound is loose on purpose: linear, it takes a
    fraction of a second. CPU time, so a loaded machine does not fail it."""
    import time

    text = unit * (90_000 // len(unit))
    t0 = time.process_time()
    out = redact("see " + text + " end")
    assert time.process_time() - t0 < 3.0
    if unit != "ghp_":  # not a GitHub token: "_" is no part of one
        assert REDACTED in out and len(out.replace("\n", "")) < 100, out[:100]  # all of it went
    # A name inside the value of the one before is still read as a name.
    assert redact("password: DB_PASSWORD = hunter2xyz and") == (
        f"password: {REDACTED} = {REDACTED} and"
    )


@pytest.mark.parametrize(
    "unit",
    ["?password=", "?code=", "7z ", "?combination=", "backup codes: ", "?accountkey={{", "db://u:"],
)
def test_a_run_of_needles_a_rule_refuses_is_redacted_in_linear_time(unit):
    """A match its check refused left every needle inside it to be tried again, each read to
    the end of the run: "?password=" 9,000 times over (a URL's query, one word) took 48 s to
    redact; "?code=", a command line's "7z " and the cue "combination" likewise. A try reads at
    most REACH characters past its needle now. CPU time, so a loaded machine does not fail it."""
    import time

    text = "see " + unit * (90_000 // len(unit)) + " end"
    t0 = time.process_time()
    redact(text)
    assert time.process_time() - t0 < 3.0


def test_a_secret_longer_than_the_window_is_redacted_whole():
    """A value judged on its first REACH characters is redacted to the end of its run."""
    from clawmem.text.secret_words import REACH

    long_token = "Ab1" * (REACH * 2)
    for text in (
        f"https://x.example/cb?access_token={long_token} done",
        f"API_TOKEN={long_token} done",
        f"the api key is {long_token} done",
        f"-----BEGIN PRIVATE KEY-----\n{long_token}\n{long_token}\n-----END PRIVATE KEY-----\ndone",
    ):
        out = redact(text)
        assert "Ab1Ab1" not in out and out.endswith("done") and REDACTED in out, out[:80]
        assert out.count("\n") == text.count("\n")


def test_a_url_password_longer_than_the_window_is_redacted():
    """A connection string's password runs to the last "@" before a host: tried within REACH of
    its "://", one of about 480 characters or more never reached its "@host" and was left as
    written. Read to the end of its run now, whatever its length; the user and the host stay."""
    from clawmem.text.secret_words import REACH

    for n in (REACH - 40, REACH + 88, 20 * REACH):
        password = ("Zq7-" * n)[:n]
        for text, shown in (
            (f"https://user:{password}@host/x ok", f"https://user:{REDACTED}@host/x ok"),
            (f"redis://:{password}@cache:6379", f"redis://:{REDACTED}@cache:6379"),
            (
                f"db: postgres://app:{password}@p@ss@db.example\n",
                f"db: postgres://app:{REDACTED}@db.example\n",
            ),
        ):
            assert redact(text) == shown, (n, text[:40])


def test_a_url_password_in_inline_code_or_bold_is_redacted():
    """A connection string in a note is often inline code (`` `postgres://app:pw@db` ``) or
    bold: its host ended at the backtick or the star, which the host's end did not allow, and
    the password was left as written (as before "!" ending a sentence)."""
    for text, shown in (
        ("use `postgres://app:Sup3rS3cret@db` here", f"use `postgres://app:{REDACTED}@db` here"),
        ("**redis://:Sup3rS3cret@cache**", f"**redis://:{REDACTED}@cache**"),
        ("it is postgres://app:Sup3rS3cret@db!", f"it is postgres://app:{REDACTED}@db!"),
        ("`mysql://root:Sup3rS3cret@localhost`.", f"`mysql://root:{REDACTED}@localhost`."),
    ):
        assert redact(text) == shown, text


def test_a_secret_said_in_bold_italics_or_struck_through_is_redacted():
    """Markdown's emphasis around a line or a value ("**card PIN 3322**", "~~my PIN is
    6364~~"): the closing marks were read as part of the value, which then was no PIN, and
    was left as written. They close what the line opened; a list's "* " opens nothing, so a
    password ending in "*" is redacted whole."""
    for text, shown in (
        ("**card PIN 3322**", f"**card PIN {REDACTED}**"),
        ("*card PIN 3322*", f"*card PIN {REDACTED}*"),
        ("~~my PIN is 6364~~ now 9012", f"~~my PIN is {REDACTED}~~ now 9012"),
        ("- the PIN is **4821**.", f"- the PIN is **{REDACTED}**."),
        ("the wifi password is **blue monkey 42** so", f"the wifi password is **{REDACTED}** so"),
        ("* password: hunter2x9*", f"* password: {REDACTED}"),
    ):
        assert redact(text) == shown, text


def test_a_secret_in_underscore_emphasis_is_redacted_and_the_marks_kept():
    """Markdown's "_…_" and "__…__" around a line or a value: "_" is a word's character, so the
    shapes' word boundaries did not hold before "__DB_PASS" or "_ghp_…", and a value ran into
    the closing marks ("6364_" is no PIN): some thirty kinds were left as written. The marks are
    kept; underscores inside a word or a value are no emphasis."""
    import time

    gh = "ghp_" + "Tp7ixGnIzeiAKQw9gB5BpEyo6zpPEz6LeJj7"
    for text, shown in (
        ("__DB_PASS=hunter2x9__", f"__DB_PASS={REDACTED}__"),
        ("_my PIN is 6364_", f"_my PIN is {REDACTED}_"),
        (f"use _{gh}_ here", f"use _{REDACTED}_ here"),
        (f"__{gh}__.", f"__{REDACTED}__."),
        ("_passphrase: lantern staple horse quartz 45_", f"_passphrase: {REDACTED}_"),
        ("_SECRET_KEY=r_!V@cr0IreXe1vT69!1DPS8_", f"_SECRET_KEY={REDACTED}_"),
        ("password: _hunter2x9", f"password: {REDACTED}"),
    ):
        assert redact(text) == shown, text
    for text in (
        "snake_case_word and __init__ _private_name_",
        "the _pin_code_ field is _required_",
    ):
        assert redact(text) == text
    t0 = time.process_time()
    redact("_my PIN is " * 10_000 + "_")
    redact("__DB_PASS=x__ " * 10_000)
    assert time.process_time() - t0 < 3.0


def test_an_assignment_in_bold_keeps_its_closing_marks():
    """ "**password: x**": the assignment's bare value took the closing "**", which went with
    it, and the bold never closed (the rest of the page rendered bold). A list's "* " opens
    nothing, so a value ending in "*" there is the value's."""
    for text, shown in (
        ("**password: hunter2x9**", f"**password: {REDACTED}**"),
        ("**DB_PASS=hunter2x9** and more", f"**DB_PASS={REDACTED}** and more"),
        ("~~token: abcd1234xyz~~", f"~~token: {REDACTED}~~"),
        ("DB_PASS=**hunter2x9**", f"DB_PASS=**{REDACTED}**"),
        ("* password: hunter2x9*", f"* password: {REDACTED}"),
        ("a *b* DB_PASS=hunter2x9*", f"a *b* DB_PASS={REDACTED}"),
    ):
        assert redact(text) == shown, text
    # A cue whose token is only brackets: no token left to read emphasis around (IndexError).
    assert redact("password {{") == "password {{"


def test_a_bold_label_before_its_secret_is_redacted():
    """ "**Password:** hunter2x9", "**password**: …": a note's bold label, the most common way a
    Markdown page writes a field, was left as written: the marks between the name and its
    colon (or after the colon) broke the assignment. Paired emphasis marks are read as spaces,
    as underscores are; the text around the secret is kept. Linear in a run of them."""
    import time

    for text, shown in (
        ("**Password:** hunter2x9", f"**Password:** {REDACTED}"),
        ("**password**: hunter2x9 and more", f"**password**: {REDACTED} and more"),
        ("*token*: abcd1234xyz", f"*token*: {REDACTED}"),
        ("~~password~~: hunter2x9", f"~~password~~: {REDACTED}"),
    ):
        assert redact(text) == shown, text
    for text in ("password **policy** is strict", "a*b*c and *emphasis* here", "* item *one*"):
        assert redact(text) == text
    t0 = time.process_time()
    redact("**password**: hunter2x9 " * 10_000)
    redact("*a* " * 20_000)
    assert time.process_time() - t0 < 3.0


def test_emphasis_over_two_lines_a_bold_name_and_a_mark_before_a_hash_are_redacted():
    """Emphasis that spans the line breaks of one paragraph ("_see\nghp_…_") was paired on one
    line only, so its closing "_" ran into the value and 184 of the soak's 808 planted secrets
    wrapped so were left as written (a GitHub token among them); so was an assignment whose
    name is emphasised ("**DB_PASS**=…": the mark before "=" closed nothing) and a PIN whose
    closing mark comes before a "#" ("_928843_#"). Marks pair within a paragraph, never past a
    blank line or a line that starts another block (a list's later item), and prose with marks
    and "=" or "#" is left as it is."""
    import time

    gh = "ghp_" + "Tp7ixGnIzeiAKQw9gB5BpEyo6zpPEz6LeJj7"
    for text, shown in (
        (f"_see\n{gh}_", f"_see\n{REDACTED}_"),
        ("_password: hunter2x9 and\nthat is it_", f"_password: {REDACTED} and\nthat is it_"),
        ("__DB_PASS=hunter2x9\nnext__", f"__DB_PASS={REDACTED}\nnext__"),
        (f"**note\nthe key {gh}** ok", f"**note\nthe key {REDACTED}** ok"),
        ("**DB_PASS**=hunter2x9", f"**DB_PASS**={REDACTED}"),
        ("__API_KEY__=abcd1234xyz9", f"__API_KEY__={REDACTED}"),
        ("my PIN is _928843_#", f"my PIN is _{REDACTED}_#"),
    ):
        assert redact(text) == shown, text
    for text in (
        "**x**=5 and *a*=b, so _n_=3",
        "**Password policy**=strict",
        "issue _#42_# and *see*#3",
        "- see _config\n- DB_PASS_ is the name of the variable",
        "a _b\n# heading_ c",
    ):
        assert redact(text) == text, text
    # A bold opened in one paragraph or item and one closed in a later one are no pair: the
    # marks around a value between them stay the text's (paired, the value took them).
    for sep in ("\n\n", "\n- c\n- "):
        text = f"`the PIN is **4821**`{sep}`**password**: in the vault`"
        shown = f"`the PIN is **{REDACTED}**`{sep}`**password**: in the vault`"
        assert redact(text) == shown, text
    t0 = time.process_time()
    redact("_a\n" * 20_000 + "b_")
    redact(("**x\n" * 10 + "\n") * 2_000)
    assert time.process_time() - t0 < 3.0


def test_a_value_before_a_closing_mark_nothing_opened_is_redacted():
    """A closing mark that nothing opened (a literal "_" to Markdown: the emphasis was opened in
    an earlier list item or paragraph) is a word's character to a shape's boundary: 72 of the
    soak's 808 planted secrets followed by one ("ghp_…_", "my PIN is 4821_") and 40 followed
    by "~~" were left as written. Such a mark after what may be a value (four or more of a
    token's characters, a digit among them) is read as a space once more; what the first
    reading found is kept as it was, and words of prose before one are left alone."""
    import time

    gh = "ghp_" + "Tp7ixGnIzeiAKQw9gB5BpEyo6zpPEz6LeJj7"
    for text, shown in (
        (f"{gh}_", f"{REDACTED}_"),
        (f"- a _b\n- the key {gh}_ c", f"- a _b\n- the key {REDACTED}_ c"),
        ("my PIN is 4821_", f"my PIN is {REDACTED}_"),
        ("my PIN is 4821~~ now", f"my PIN is {REDACTED}~~ now"),
        (f"_one\n\n{gh}__ and _b_", f"_one\n\n{REDACTED}__ and _b_"),
    ):
        assert redact(text) == shown, text
    for text in (
        "word_ word_ word_ abandon_ ability_ able_ about_ above_ absent_ absorb_ abstract_",
        "snake_case_ and a*b* and x1_ y",
        "the password_ field is required",
        "version v2_ and 12_ items",
    ):
        assert redact(text) == text, text
    t0 = time.process_time()
    redact("word1_ " * 50_000)
    redact(f"{gh}_ " * 5_000)
    assert time.process_time() - t0 < 3.0


def test_digit_and_letter_tests_agree_with_str_methods():
    """has_digit and has_letter search in C (a class per character in Python was most of
    redaction's time on long values); they must say what str.isdigit and str.isalpha say."""
    import sys

    from clawmem.text.secret_shapes import has_digit, has_letter

    for c in map(chr, range(sys.maxunicode + 1)):
        assert has_digit(c) == c.isdigit(), hex(ord(c))
        assert has_letter(c) >= c.isalpha(), hex(ord(c))  # a few numbers count as letters
        assert not c.isascii() or has_letter(c) == c.isalpha()


def test_a_json_web_token_longer_than_the_window_is_redacted():
    """A try read at most REACH (512) characters past its needle: a JSON web token whose header
    and payload ran over that (an identity provider's, 1-3 KB) never reached its signature, and
    was left as written where no cue word came before it. Still linear in a run of needles."""
    import base64
    import json
    import time

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).decode().rstrip("=")

    header = b64(json.dumps({"alg": "RS256", "typ": "JWT", "kid": "k1"}).encode())
    payload = b64(json.dumps({"sub": "1234567890", "groups": ["staff-read"] * 60}).encode())
    jwt = f"{header}.{payload}.{b64(bytes(range(256)))}"
    assert len(jwt) > 1500
    assert redact(f"send it: {jwt} ok") == f"send it: {REDACTED} ok"
    t0 = time.process_time()
    redact("see " + "-eyJ" * 22_500 + " end")
    assert time.process_time() - t0 < 3.0


# What redact() makes of one fixed corpus (forty-odd kinds of planted credentials of eight seeds,
# the tricky text that holds none, URL passwords around the old window's reach), under each
# REDACTION_VERSION: rules that catch more change it, and an index built under the old rules
# then holds what the new ones catch; only a new version has it rebuilt.
_CORPUS_SHA256 = "277c8d67a95656fc524e685244b91c3a63e0c23793ef966cef0df1a1753f9bcb"
_REDACTED_SHA256 = {
    3: "76b8d2795b23e64935f5383bd8657b799c61c3626d86a2c12aafd7bb69ff70df",
    4: "c90f7b69e058257cdee8dca6fd975646102d066ff1099865273ea11c2022bc14",  # long URL passwords
    5: "82eb7525b8416f1fe88605d42b6ee2361b97f0aa4c5e7da97360b950836940fb",  # a host before ` * !
    6: "10c22486090100216b324e7c5f9b33999a7323eca8c71aa3c25b04e4f7e5ff23",  # emphasis closed
    7: "f2f365e2b2a1b7a7adeda4fbb255bf7a346e53e7ef12b7fa34d395a8f32df87c",  # _…_ and __…__
    8: "cb5176ddf9ed91b82f515e1ee48d82dbe8e6a13f77ea8425f9076b0d954ac5f6",  # **NAME: x** keeps **
    9: "22816cdf3f8a94584cf7dd59851b1d1fed0fea30038df90454c75fd10110b2eb",  # **Password:** x
    10: "102e192a6b66db0ff6c34a4c9e7d33a479ca7e9e9f5e496c48296e70b613def2",  # _…\n…_, **N**=
    11: "f8a56b5892f6a1f791c1a177a49660164547788e8162dd85d286d10a6fc0497a",  # a lone closer: …_
}


def _redaction_corpus() -> list[str]:
    texts = [p.text for seed in range(8) for p in planted(seed)] + list(NOT_SECRETS)
    password = "".join("Zq7-"[i % 4] for i in range(2000))
    for n in (60, 300, 479, 480, 600, 2000):
        texts += [
            f"https://user:{password[:n]}@host/x ok",
            f"redis://:{password[:n]}@cache:6379",
            f"db: postgres://app:{password[:n]}@p@ss@db.example",
            f"use `postgres://app:{password[:n]}@db` or **redis://:{password[:n]}@cache**!",
        ]
    texts += ["**card PIN 3322**", "~~my PIN is 6364~~ now 9012", "* password: hunter2x9*"]
    texts += [f"_{p.text}_" for p in planted(0)] + [f"__{p.text}__" for p in planted(1)]
    texts += ["**password: hunter2x9**", "~~DB_PASS=hunter2x9~~ now", "DB_PASS=**hunter2x9**"]
    texts += ["**Password:** hunter2x9", "**password**: hunter2x9 and more", "*token*: abcd1234xyz"]
    texts += [f"_see\n{p.text}_" for p in planted(2)] + [f"**note\n{p.text}**" for p in planted(3)]
    texts += ["**DB_PASS**=hunter2x9", "__API_KEY__=abcd1234xyz9", "my PIN is _928843_#"]
    texts += [f"- a _b\n- {p.text}_ c" for p in planted(4)] + [f"{p.text}~~" for p in planted(5)]
    texts += ["word_ word_ word_ abandon_", "snake_case_ and a*b* and x1_ y"]
    return texts


def test_rules_that_redact_otherwise_come_with_a_new_redaction_version():
    """URL passwords of 480 characters and more were redacted (874888d) under REDACTION_VERSION
    3, the version of the rules that left them: an index built before kept them, and was
    trusted. What the rules make of a fixed corpus is pinned per version."""
    import hashlib

    corpus = _redaction_corpus()
    digest = hashlib.sha256("\n\0".join(corpus).encode()).hexdigest()
    assert digest == _CORPUS_SHA256, "the corpus changed (benchmarks/soak/secrets.py): repin"
    out = hashlib.sha256("\n\0".join(redact(t) for t in corpus).encode()).hexdigest()
    assert out == _REDACTED_SHA256.get(schema.REDACTION_VERSION), (
        f"redact() gives {out} under REDACTION_VERSION {schema.REDACTION_VERSION}, pinned "
        f"{_REDACTED_SHA256.get(schema.REDACTION_VERSION)}: rules that catch more bump it "
        "(store/schema.py, docs/storage.md), then pin the new digest here"
    )
