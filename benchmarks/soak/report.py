"""The figures of a soak run (its ``--json`` file) as the tables of ``docs/reliability.md``.

``python -m benchmarks.soak --render soak.json``: the tables are generated, never typed, so the
page shows exactly what the run measured; the prose around them is written by hand.
"""

from __future__ import annotations

from .victim import PHASES


def _table(rows: list[tuple[str, object]]) -> str:
    lines = ["| Figure | Value |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines) + "\n"


def _q(values: list[float]) -> str:
    """Quartiles of the kills' moments, as fractions of the measured running time."""
    if not values:
        return "-"
    v = sorted(values)
    pick = [v[int((len(v) - 1) * q)] for q in (0.0, 0.25, 0.5, 0.75, 1.0)]
    return " / ".join(f"{x:.2f}" for x in pick)


def _loads(out: dict) -> str:
    before, after = out["load_before"][0], out["load_after"][0]
    samples = out.get("load_1min_every_30s") or []
    if not samples:
        return f"{before:.1f} before, {after:.1f} after"
    s = sorted(samples)
    return (
        f"{before:.1f} before, {after:.1f} after; during the run (every 30 s) min {s[0]:.1f}, "
        f"median {s[len(s) // 2]:.1f}, max {s[-1]:.1f}"
    )


def render(out: dict) -> str:
    parts = [
        f"`{out['command']}` at commit `{out['commit']}`, {out['machine']}; load average (1 min) "
        f"{_loads(out)}. Total {out['seconds'] / 60:.1f} min.\n"
    ]
    if "kills" in out:
        k = out["kills"]
        parts.append("\n### Kills\n\n")
        parts.append(
            _table(
                [
                    (
                        "SIGKILLs (rounds)",
                        f"{k['kills']} ({k['rounds']}; {k['exited_before_kill']} finished "
                        "before the kill)",
                    ),
                    ("by target", ", ".join(f"{t} {n}" for t, n in k["by_target"].items())),
                    (
                        "aimed at a phase / anywhere",
                        f"{k['aimed_at_a_phase']} / {k['kills'] - k['aimed_at_a_phase']}",
                    ),  # fmt: skip
                    ("corruptions (integrity_check not ok)", k["corruptions"]),
                    ("index answered no recall", k["no_answer"]),
                    ("Markdown damaged (not old or new bytes)", k["markdown_damaged"]),
                    ("not converged (index != disk or != clean rebuild)", k["not_converged"]),
                    ("comparisons with a clean rebuild", k["rebuild_comparisons"]),
                    ("temporary files left after the next run", k["leftover_temp_files"]),
                    (
                        "facts retained / lost / duplicated",
                        f"{k['facts_retained']} / {k['lost_facts']} / {k['duplicated_facts']}",
                    ),
                    ("kills that left a half-built rebuild file", k["kills_mid_rebuild"]),
                    (
                        "running time at the start / at the end (s, median of the last 3 timed "
                        "runs)",
                        ", ".join(
                            f"{t} {k['durations_s'][t]} / {k['durations_last_s'][t]}"
                            for t in k["durations_s"]
                        )
                        + f"; clawmem's code starts at {k['startup_s']}",
                    ),
                ]
            )
        )
        parts.append(
            "\nWhere the kills landed: the phase each victim had marked last (`victim.py`), per "
            "target; and when, as a fraction of the target's running time measured last "
            "(min / quartiles / max).\n\n"
        )
        seen = [ph for ph in PHASES if any(ph in pts for pts in k["kill_points"].values())]
        parts.append("| Phase | " + " | ".join(k["kill_points"]) + " |\n")
        parts.append("| --- |" + " ---: |" * len(k["kill_points"]) + "\n")
        for ph in seen:
            row = [str(pts.get(ph, 0)) for pts in k["kill_points"].values()]
            parts.append(f"| {ph} | " + " | ".join(row) + " |\n")
        fr = k.get("kill_fractions", {})
        parts.append("| moment (fraction) | " + " | ".join(_q(fr.get(t, [])) for t in
                                                         k["kill_points"]) + " |\n")  # fmt: skip
    if "concurrency" in out:
        c = out["concurrency"]
        parts.append("\n### Concurrency\n\n")
        parts.append(
            _table(
                [
                    ("duration (s)", c["seconds"]),
                    ("operations", ", ".join(f"{k} {v}" for k, v in c["ops"].items())),
                    ("watcher syncs", c["watcher_syncs"]),
                    ("reader errors (recall loops + MCP)", c["reader_errors"]),
                    ("writer errors", c["writer_errors"]),
                    ("write-lock waits timed (retain)", c["lock_waits"]),
                    (
                        "lock wait p50 / p95 / max (s)",
                        f"{c['lock_wait_p50_s']} / {c['lock_wait_p95_s']} / {c['lock_wait_max_s']}",
                    ),
                    (
                        "facts retained / found exactly once afterwards",
                        f"{c['facts_retained']} / {c['facts_found']}",
                    ),
                    ("missing / duplicated", f"{c['facts_missing']} / {c['facts_duplicated']}"),
                    (
                        "lines another program appended to those logs / lost",
                        f"{c.get('foreign_lines_appended', '-')} / "
                        f"{c.get('foreign_lines_lost', '-')}",
                    ),
                    (
                        "lines of a logger holding one log open (20/s) / lost",
                        f"{c.get('held_open_lines', '-')} / {c.get('held_open_lines_lost', '-')}",
                    ),
                ]
            )
        )
        if c.get("lock_holders"):
            parts.append(
                "\nWho held the write lock (its owner file sampled every 5 ms; holds shorter "
                "than that are missed):\n\n| Holder | holds | total (s) | p50 / p95 / max (s) |\n"
                "| --- | ---: | ---: | --- |\n"
            )
            for who, h in c["lock_holders"].items():
                parts.append(
                    f"| {who} | {h['holds']} | {h['total_s']} | "
                    f"{h['p50_s']} / {h['p95_s']} / {h['max_s']} |\n"
                )
    if "fuzz" in out:
        f = out["fuzz"]
        parts.append("\n### Bad input\n\n")
        parts.append(
            _table(
                [
                    ("inputs tried", f["inputs"]),
                    ("by target", ", ".join(f"{k} {v}" for k, v in f["by_target"].items())),
                    ("rejected with a one-line error", f["rejected_with_a_clear_error"]),
                    ("crashes (traceback, exit 70)", f["crashes"]),
                    ("rejections not one line", f["bad_rejections"]),
                    ("Markdown changed by a read", f["markdown_changed"]),
                    (
                        "real-model path: failures",
                        f"{f['model_path_failures']}"
                        + (f" ({f['model_path_skipped']})" if f.get("model_path_skipped") else ""),
                    ),
                ]
            )
        )
    if "resources" in out:
        r = out["resources"]
        parts.append("\n### Resources\n\n")
        parts.append(
            _table(
                [
                    ("checks / failed", f"{r['checks']} / {r['failures']}"),
                    ("disk full by", r["disk_full_method"]),
                    ("hold (s)", r["hold_seconds"]),
                    ("recall while the write lock is held (s)", r["recall_under_write_lock_s"]),
                    (
                        "retain started while the lock was held: its wall time (s)",
                        r["retain_waited_s"],
                    ),
                    (
                        "recall while the database is held exclusively (s)",
                        r["recall_under_exclusive_s"],
                    ),
                    (
                        "index while the database is held exclusively (s, from the hold's start)",
                        r["index_under_exclusive_s"],
                    ),
                ]
            )
        )
    if "secrets" in out:
        s = out["secrets"]
        real = (
            f"{s['real_messages_redacted']} of {s['real_messages']:,}"
            if "real_messages" in s
            else "not measured (no ../shared/eval)"
        )
        parts.append("\n### Secrets\n\n")
        parts.append(
            _table(
                [
                    ("secrets planted (kinds)", f"{s['planted']} ({s['kinds']})"),
                    (
                        "in notes / retain / a transcript",
                        f"{s['notes']} / {s['retain']} / {s['transcript']}",
                    ),
                    ("places searched (outputs, files under .memory/, pages)", s["places_checked"]),
                    ("episode pages written", s["episode_pages"]),
                    ("**secrets found**", s["secrets_found"]),
                    ("retain accepted a secret without --allow-secret", s["accepted_without_flag"]),
                    ("MCP refusal names the real flag", s["mcp_refusal_names_the_real_flag"]),
                    (
                        "false positives: tricky non-secrets redacted",
                        f"{s['false_positives']} of {s['non_secrets']}",
                    ),
                    ("false positives: REALTALK chat messages changed", real),
                ]
            )
        )
    if "hostile" in out:
        h = out["hostile"]
        parts.append("\n### A hostile clone\n\n")
        parts.append(
            _table(
                [
                    ("clones (each committing links out of the workspace)", h["clones"]),
                    ("commands run in them", h["commands"]),
                    ("**entries outside the workspace changed**", h["outside_entries_changed"]),
                    ("crashes (a traceback, or an exit without the one-line error)", h["crashes"]),
                ]
            )
        )
    return "".join(parts)
