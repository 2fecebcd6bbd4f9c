"""``clawmem context``: the auto-inject memory block for an agent's turn (see clawmem.recall.context)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from typing import Annotated

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json


def _hook_message(text: str) -> tuple[str | None, str]:
    """A hook's stdin: JSON with a "prompt" (Claude Code's UserPromptSubmit), else plain text.
    (None, why) for a hook event that carries no prompt (SessionStart, Stop, …): its JSON is
    not a question, and searching it injected unrelated lines."""
    from clawmem.text import untrusted_json

    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            data = untrusted_json.loads(stripped)
        except ValueError:
            return text, ""
        if isinstance(data, dict):
            if isinstance(data.get("prompt"), str):
                return data["prompt"], ""
            event = data.get("hook_event_name")
            return (
                None,
                f"the hook event{f' {event}' if isinstance(event, str) else ''} has no prompt",
            )
    return text, ""


def register(app: typer.Typer) -> None:
    @app.command("context")
    def context(
        message: Annotated[
            str | None,
            typer.Argument(help="The user's message; '-' reads it from stdin."),
        ] = None,
        budget: Annotated[
            int, typer.Option("--budget", help="Token budget of the whole block.")
        ] = 200,
        min_score: Annotated[
            float,
            typer.Option("--min-score", help="Relevance a line needs, 0-1 (see docs/agents.md)."),
        ] = 0.3,
        k: Annotated[int, typer.Option("-k", help="Recall candidates to draw lines from.")] = 8,
        min_relevance: Annotated[
            float | None,
            typer.Option(
                "--min-relevance",
                help="Inject nothing unless a recalled hit reaches this relevance, 0-1 "
                "(default: config min_relevance, else the fitted model's threshold: 0.03 "
                "hybrid, 0.01 lexical; 0 turns it off).",
            ),
        ] = None,
        mode: Annotated[
            str,
            typer.Option(
                "--mode", help="hybrid | lexical (no model to load: faster cold start) | vector"
            ),
        ] = "hybrid",
        hook: Annotated[
            bool,
            typer.Option(
                "--hook",
                help="Run as an agent hook: read the prompt from stdin (Claude Code's hook JSON or "
                "plain text); on an error print it on stderr and exit 1, never 2 (which would "
                "block the prompt).",
            ),
        ] = False,
        as_json: JsonOpt = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Print the memory to inject at the start of an agent's turn: relevant lines, each cited,
        within a small token budget, MEMORY.md first. Prints nothing for a trivial message or when
        nothing is relevant (exit 0)."""
        import sys

        from clawmem.errors import ClawmemError, UsageError

        try:
            if hook or message in (None, "-"):
                if message is None and not hook and sys.stdin.isatty():
                    raise UsageError(
                        "give a MESSAGE, or pipe one on stdin",
                        hint='e.g. clawmem context "what did we decide about payments?"',
                    )
                text = sys.stdin.read() if message in (None, "-") else message
                message, no_prompt = _hook_message(text) if hook else (text, "")
            from clawmem.recall.context import ContextResult, build_context

            if message is None:  # nothing asked: nothing searched, nothing injected
                res = ContextResult(message="", skipped=no_prompt)
            else:
                res = build_context(
                    open_mem(workspace).indexer,
                    message,
                    budget=budget,
                    min_score=min_score,
                    candidates=k,
                    mode=mode,
                    min_relevance=min_relevance,
                )
        except ClawmemError as exc:
            if not hook:
                raise
            sys.stderr.write(f"clawmem: error: {exc.message}\n")
            if exc.hint:
                sys.stderr.write(f"  hint: {exc.hint}\n")
            raise typer.Exit(1) from None
        if as_json:
            print_json(res.to_dict())
        elif res.lines:
            sys.stdout.write(res.render() + "\n")
