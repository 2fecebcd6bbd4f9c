"""``clawmem doctor``: check the install and the workspace's setup, and name each fix (see
clawmem.ingest.doctor)."""

# No `from __future__ import annotations`: typer reads these annotations at run time.

from typing import Annotated

import typer

from clawmem.cli.commands import JsonOpt, WorkspaceOpt, current_workspace, print_json


def register(app: typer.Typer) -> None:
    @app.command()
    def doctor(
        no_model: Annotated[
            bool,
            typer.Option(
                "--no-model", help="Do not load the model to see that it loads (saves 1-2 s)."
            ),
        ] = False,
        as_json: JsonOpt = False,
        workspace: WorkspaceOpt = None,
    ) -> None:
        """Something is wrong? Check the install, the model, the index, the git hooks and merge
        driver, the resident embedder and the configuration, and say how to fix each problem;
        exits 11 if something is broken (warnings alone exit 0)."""
        from clawmem.errors import SetupBroken
        from clawmem.ingest.doctor import diagnose

        found = diagnose(current_workspace(workspace), load_model=not no_model)
        if as_json:
            print_json(found.to_dict())
        else:
            from clawmem.cli.render import doctor_human

            doctor_human(found.to_dict())
        if found.broken:
            first = found.broken[0]
            raise SetupBroken(
                f"{found.summary()}; first: {first.area} {first.check}: {first.detail}",
                hint=first.fix,
            )
