"""``clawmem trust``: approve the workspace's clawmem.toml on this machine, so that its settings
that lead outside the workspace (read scopes, transcript folders, a model file) take effect (see
clawmem.config.trust)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from typing import Annotated

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, open_mem, print_json


def register(app: typer.Typer) -> None:
    @app.command("trust")
    def trust(
        revoke: Annotated[
            bool,
            typer.Option("--revoke", help="Forget the approval: those settings are ignored again."),
        ] = False,
        show: Annotated[
            bool,
            typer.Option(
                "--show",
                help="Only say whether it is approved and what it reaches; change nothing.",
            ),
        ] = False,
        workspace: WorkspaceOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Approve this workspace's clawmem.toml as it is now.

        A clawmem.toml is shared through git, so anyone who can commit to the repository can
        write it. Its settings that lead outside the workspace ([scopes], [sessions] paths, a
        model file elsewhere) are ignored until you approve the file on this machine; a changed
        file asks again. Read what it reaches first (--show). The approval is kept outside the
        repository ($CLAWMEM_TRUST_FILE, default: trusted.json in your config folder).
        """
        from clawmem.errors import UsageError

        if revoke and show:
            raise UsageError("--revoke and --show cannot be combined")
        mem = open_mem(workspace, quiet=True)
        state = mem.trust_state() if show else mem.trust(revoke=revoke)
        if as_json:
            print_json(state.to_dict())
            return
        if not state.exists:
            print(f"clawmem trust: {state.file}: no such file; nothing to approve")
            return
        if show:
            word = "approved" if state.approved else "not approved"
            if state.changed:
                word += " (changed since it was approved)"
            print(f"clawmem trust: {state.file}: {word}")
        elif revoke:
            print(f"clawmem trust: {state.file}: approval revoked")
        else:
            print(f"clawmem trust: approved {state.file} as it is now")
        for shown in state.reaches:
            ignored = " (ignored)" if shown in state.held_back else ""
            print(f"  reaches outside the workspace: {shown}{ignored}")
        if not state.reaches:
            print("  nothing in it leads outside the workspace")
