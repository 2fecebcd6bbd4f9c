"""``clawmem mcp``: the workspace's memory as Model Context Protocol tools, on stdio or HTTP.

One module per part, from the data up:

- ``catalogue``: the tools (name, JSON schema, description, handler) and the server's instructions;
- ``arguments``: a call's arguments checked against its tool's schema (``jsonschema``), in words;
- ``dispatch``: ``Tools``, a tool call on the workspace that never raises (errors as the CLI's text);
- ``protocol``: the SDK's low-level server wired to ``Tools``, shared by both transports;
- ``stdio``: ``serve``, for the agent that started the process;
- ``http``: ``serve_http``, streamable HTTP for remote agents;
- ``gate``: the token gate in front of the HTTP endpoint;
- ``tokens``: the access tokens (created, revoked, stored hashed, verified).

One ``Memory`` serves the whole process, so the embedding model loads once (warmed up in the
background at start); each call opens the index, syncs what changed on disk (the same lazy sync as
the CLI) and closes it, so other clawmem processes and a watcher can run beside it. The SDK is
imported only by ``protocol``, ``stdio`` and ``http``, inside their functions: the catalogue and
the argument check load without it.
"""
