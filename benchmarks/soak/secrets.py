"""The secret-planting part of the soak (issue 31): a hundred credentials of forty-odd kinds, said
the ways people say them, are planted in every source clawmem reads (notes and Retain facts, text
given to ``retain``, a Claude Code transcript in a configured sessions folder); then every byte
under ``.memory/``, every page ``reflect`` writes (entity pages, opinions, proposals, episodes)
and every output (``recall``, ``get``, ``context``, ``status``, ``check``, ``reflect``, ``index``
and the MCP tools over stdio) is searched for each of them. Figures: ``secrets_found`` (must be
0), ``accepted_without_flag`` (``retain`` must refuse every one unless ``--allow-secret``), and
``false_positives`` on tricky text that holds none (a commit hash, a UUID, "password reset
email", …); with the evaluation data beside the repository, also how many of REALTALK's real chat
messages redaction changes (each a false positive: they hold no credential).

Every secret is made at run time from a seeded generator, so this file holds no credential that a
scanner would flag, and each planted value is unique: finding it anywhere is a leak.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Planted:
    kind: str  # a label for the report: what was planted, and how it was said
    text: str  # the sentence (or block) that holds it
    secret: str  # the part that must never be stored or shown


def _luhn_complete(prefix: str, length: int, rng: random.Random) -> str:
    body = prefix + "".join(rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    total = 0
    for i, ch in enumerate(reversed(body)):
        d = int(ch)
        if i % 2 == 0:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return body + str((10 - total % 10) % 10)


def _cn_id(rng: random.Random) -> str:
    body = "110105" + f"19{rng.randint(50, 99)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
    body += "".join(rng.choice(string.digits) for _ in range(3))
    w = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
    return body + "10X98765432"[sum(int(c) * k for c, k in zip(body, w, strict=True)) % 11]


def planted(seed: int = 31) -> list[Planted]:  # noqa: C901 - one branch per place a secret is planted
    """The planted credentials: the same for the same seed."""
    rng = random.Random(seed)

    def an(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
        # Always a digit and both cases in it, so it never reads as a word.
        core = "".join(rng.choice(alphabet) for _ in range(n - 3))
        return (
            core
            + rng.choice("ABCDEFGHJKMNPQRSTUVWXYZ")
            + rng.choice("abcdefghjkmnpqrstuvwxyz")
            + rng.choice("23456789")
        )

    def hx(n: int) -> str:
        return "".join(rng.choice("0123456789abcdef") for _ in range(n))

    def up(n: int) -> str:
        return "".join(rng.choice(string.ascii_uppercase + string.digits) for _ in range(n))

    def dg(n: int) -> str:
        return "".join(rng.choice("123456789") for _ in range(n))

    def word() -> str:
        return rng.choice(
            ["mango", "otter", "violet", "copper", "falcon", "juniper", "saffron", "walnut"]
        ) + dg(2)

    out: list[Planted] = []

    def add(kind: str, text: str, secret: str) -> None:
        assert secret in text, (kind, text)
        out.append(Planted(kind, text, secret))

    for _ in range(2):
        body = "\n".join(an(64, string.ascii_letters + string.digits + "+/") for _ in range(4))
        add(
            "PEM private key",
            "-----BEGIN RSA "
            + "PRIVATE KEY-----\n"
            + body
            + "\n-----END RSA "
            + "PRIVATE KEY-----",
            body,
        )
    body = "\n".join(an(70, string.ascii_letters + string.digits + "+/") for _ in range(3))
    add(
        "OpenSSH private key",
        "-----BEGIN OPENSSH "
        + "PRIVATE KEY-----\n"
        + body
        + "\n-----END OPENSSH "
        + "PRIVATE KEY-----",
        body,
    )
    for _ in range(2):
        priv = "\n".join(an(64, string.ascii_letters + string.digits + "+/") for _ in range(2))
        mac = hx(64)
        add(
            "PuTTY private key",
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: peter@laptop\n"
            f"Public-Lines: 1\n{an(60)}\nPrivate-Lines: 2\n{priv}\nPrivate-MAC: {mac}",
            priv,
        )
    for _ in range(3):
        key = "AKIA" + up(16)
        add("AWS access key", f"The deploy user's access key id is {key} in us-east-1.", key)
    for _ in range(2):
        s = an(40, string.ascii_letters + string.digits + "/+")
        add("AWS secret key", f"aws_secret_access_key = {s}", s)
    for _ in range(3):
        t = "ghp_" + an(36)
        add("GitHub token", f"Use {t} for the release workflow", t)
    t = "github_pat_11" + an(60, string.ascii_letters + string.digits + "_")
    add("GitHub fine-grained token", f"fine-grained PAT: {t}", t)
    t = "glpat-" + an(20)
    add("GitLab token", f"GitLab CI token {t} expires in March", t)
    for _ in range(2):
        t = "sk-ant-api03-" + an(40)
        add("Anthropic API key", f"ANTHROPIC_API_KEY was set to {t} on the box", t)
    t = "sk-proj-" + an(40)
    add("OpenAI API key", f"openai key {t}", t)
    t = "xoxb-" + dg(10) + "-" + dg(10) + "-" + an(24)
    add("Slack token", f"the bot posts with {t}", t)
    t = "https://hooks.slack.com/services/T0" + up(7) + "/B0" + up(9) + "/" + an(24)
    add("Slack webhook", f"alerts go to {t}", t)
    t = "AIza" + an(35)
    add("Google API key", f"maps key {t}", t)
    t = "sk_live_" + an(24)
    add("Stripe key", f"Stripe live secret {t} (do not share)", t)
    t = "hf_" + an(34)
    add("Hugging Face token", f"HF token {t}", t)
    t = "npm_" + an(36)
    add("npm token", f"publish with {t}", t)
    t = "SG." + an(22) + "." + an(43)
    add("SendGrid key", f"sendgrid: {t}", t)
    t = dg(10) + ":AA" + an(33)
    add("Telegram bot token", f"telegram bot {t}", t)
    t = "eyJhbGciOiJIUzI1NiJ9.eyJ" + an(30) + "." + an(30)
    add("JSON web token", f"the session cookie held {t}", t)
    for _ in range(2):
        t = "hvs." + an(28)
        add("Vault token", f"VAULT_TOKEN={t} vault kv get secret/app", t)
    t = "AGE-SECRET-KEY-1" + up(58)
    add("age secret key", f"backup key {t}", t)
    t = "tskey-auth-" + an(12) + "-" + an(30)
    add("Tailscale key", f"join the tailnet with {t}", t)
    t = "dapi" + hx(32)
    add("Databricks token", f"databricks PAT {t}", t)
    t = "shpat_" + hx(32)
    add("Shopify token", f"shop admin token {t}", t)
    for _ in range(2):
        pw = an(12, string.ascii_letters + string.digits + "!-_")
        add(
            "connection URL",
            f"DATABASE_URL points at postgres://billing:{pw}@db.internal:5432/payments",
            pw,
        )
    pw = an(14)
    add("connection URL without a user", f"cache is redis://:{pw}@cache.internal:6379/0", pw)
    pw = an(6) + "@" + an(6)
    add("connection URL with @ in the password", f"mongodb://admin:{pw}@mongo.internal/admin", pw)
    k = an(40, string.ascii_letters + string.digits + "+/") + "=="
    add(
        "Azure account key",
        f"DefaultEndpointsProtocol=https;AccountName=peterdata;AccountKey={k};EndpointSuffix=core.windows.net",
        k,
    )
    for _ in range(2):
        b = an(24, string.ascii_letters + string.digits + "+/") + "=="
        add(
            "Authorization: Basic", f"curl -H 'Authorization: Basic {b}' https://api.internal/v1", b
        )
    t = an(32, string.ascii_letters + string.digits + "-._")
    add("bearer token", f"Authorization: Bearer {t}", t)
    for _ in range(2):
        s = an(50, string.ascii_letters + string.digits + "!@#%^*(-_=+)")
        add("SECRET_KEY= line", f"SECRET_KEY={s}", s)
    pw = an(10)
    add("PGPASSWORD= line", f"PGPASSWORD={pw} psql -h db.internal -U billing", pw)
    pw = an(5)
    add("DB_PASS= line (short)", f"DB_PASS={pw}", pw)
    pw = an(11)
    add("JSON password field", f'{{"user": "deploy", "password": "{pw}"}}', pw)
    pw = "correct horse " + word() + " staple"
    add("quoted passphrase with spaces", f'password = "{pw}"', pw)
    for _ in range(2):
        pw = an(10)
        add("mysql -p", f"mysql -u root -p{pw} -h 10.0.0.5 shop", pw)
    pw = an(9)
    add("curl -u", f"curl -u deploy:{pw} https://ci.internal/api/json", pw)
    pw = an(9)
    add("sshpass -p", f"sshpass -p {pw} ssh pi@10.0.0.7", pw)
    pw = an(12)
    add("--password flag", f"docker login registry.internal --username ci --password {pw}", pw)
    pw = an(10)
    add("redis-cli -a", f"redis-cli -h cache -a {pw} ping", pw)
    for prefix in ("4", "51", "37"):
        n = _luhn_complete(prefix, 15 if prefix == "37" else 16, rng)
        spaced = " ".join(n[i : i + 4] for i in range(0, 16, 4)) if prefix != "37" else n
        add("card number", f"Card on file: {spaced}, exp 09/29", spaced)
    for _ in range(2):
        ssn = f"{rng.randint(100, 665)}-{rng.randint(10, 99)}-{rng.randint(1000, 9999)}"
        add("US social security number", f"Peter's SSN is {ssn}", ssn)
    cid = _cn_id(rng)
    add("Chinese resident id", f"身份证号码：{cid}", cid)
    p = "C" + dg(8)
    add("passport number", f"passport number: {p}", p)
    cccd = "0" + dg(11)
    add("Vietnamese citizen id", f"số CCCD của anh Minh là {cccd}", cccd)
    for _ in range(2):
        pw = word()
        add("wifi password in words", f"the wifi password is {pw}", pw)
    pw = rng.choice(["sunflower", "bluebird", "pancakes"])
    add("a plain-word password in words", f"The guest wifi password is {pw} now.", pw)
    for _ in range(2):
        pin = dg(4)
        add("PIN in words", f"my PIN is {pin}", pin)
    pin = dg(6)
    add("door code", f"The door code for the office is {pin}#", pin)
    for _ in range(2):
        phrase = (
            " ".join(
                rng.choice(
                    [
                        "correct",
                        "horse",
                        "battery",
                        "staple",
                        "orbit",
                        "lantern",
                        "pepper",
                        "quartz",
                    ]
                )
                for _ in range(4)
            )
            + " "
            + dg(2)
        )
        add("passphrase with spaces", f"passphrase: {phrase}", phrase)
    pw = an(8)
    add("login user / password", f"login: admin / {pw}", pw)
    pw = an(9)
    add("credentials user:password", f"credentials for the NAS are admin:{pw}", pw)
    pw = word()
    add("staging database password", f"the staging database password is {pw}", pw)
    pw = an(7)
    add("short password", f"pw: {pw}", pw)
    pw = an(10)
    add("password changed to", f"I changed the router password to {pw} yesterday", pw)
    pw = an(9)
    add("Vietnamese password", f"mật khẩu wifi nhà mình là {pw} nhé", pw)
    pw = an(9)
    add("Vietnamese password without diacritics", f"mat khau server la {pw}", pw)
    pw = an(10)
    add("Japanese password", f"Wi-Fiのパスワードは{pw}です", pw)
    pw = an(10)
    add("Chinese password", f"服务器的密码是{pw}，别告诉别人", pw)
    pw = an(10)
    add("Korean password", f"와이파이 비밀번호는 {pw} 입니다", pw)
    pw = an(10)
    add("Russian password", f"пароль от роутера: {pw}", pw)
    pw = an(10)
    add("Spanish password", f"la contraseña es {pw}", pw)
    pw = an(10)
    add("French password", f"le mot de passe est {pw}", pw)
    pw = an(10)
    add("German password", f"das Passwort lautet {pw}", pw)
    codes = " ".join(f"{hx(5)}-{hx(5)}" for _ in range(4))
    add("2FA recovery codes", f"GitHub recovery codes: {codes}", codes)
    codes2 = [f"{dg(4)}-{dg(4)}" for _ in range(3)]
    add(
        "2FA backup codes as a list",
        "Google backup codes:\n" + "\n".join(f"- {c}" for c in codes2),
        "\n".join(f"- {c}" for c in codes2),
    )
    bl = "-".join(dg(6) for _ in range(8))
    add("BitLocker recovery key", f"BitLocker: {bl}", bl)
    t = an(24)
    add("API key in words", f"the Mailchimp API key is {t}", t)
    pin = dg(6)
    add("Vietnamese OTP", f"mã OTP là {pin}", pin)
    pin = dg(4)
    add("Japanese PIN", f"暗証番号は{pin}です", pin)
    # Second instances, said otherwise.
    pw = an(9)
    add("password in words, quoted", f'Peter said the Synology password is "{pw}"', pw)
    pw = an(8)
    add("password for a named host", f"password for the staging db: {pw}", pw)
    pin = dg(6)
    add("Korean verification code", f"인증번호는 {pin}", pin)
    pw = an(10)
    add("Chinese password, colon", f"密码：{pw}", pw)
    pw = an(10)
    add("Japanese password, quoted", f"パスワードは「{pw}」です", pw)
    t = "ghs_" + an(36)
    add("GitHub token", f"GITHUB_TOKEN: {t}", t)
    pw = an(12)
    add("--password= flag", f"./deploy.sh --password={pw} --env prod", pw)
    pw = an(9)
    add("7z -p", f"7z x backup.7z -p{pw}", pw)
    pin = dg(4)
    add("PIN without a connector", f"card PIN {pin}", pin)
    s = an(32)
    add("client secret in words", f"the OAuth client secret is {s}", s)
    pw = an(10)
    add("app password", f"Gmail app password: {pw}", pw)
    n = _luhn_complete("4", 16, rng)
    add("card number, unspaced", f"visa {n}", n)
    return out


# Text that holds no credential, though it looks or sounds like one might.
NOT_SECRETS: tuple[str, ...] = (
    "Merged 3f9a1b2c4d5e6f708192a3b4c5d6e7f8091a2b3c into main.",
    "The request id was 123e4567-e89b-12d3-a456-426614174000.",
    "Order number 4000123456 shipped on Tuesday.",
    "Peter asked for a password reset email.",
    "The password policy requires 12 characters.",
    "The password is stored in 1Password.",
    "The wifi password is on the fridge.",
    "The password is too short; it must be 12 characters long.",
    "Password is required.",
    "We rotated the API key on Friday.",
    "The API key rotation is on Fridays; bearer of bad news.",
    "max_tokens = 4096 and the token budget is 1500",
    "TOKEN_LIMIT=4096",
    "password_min_length: 12",
    "see https://example.com/docs and postgres://db.internal:5432/payments",
    "ssh -p 2222 deploy@10.0.0.7",
    "mkdir -p build/out",
    "docker run -p 8080:80 nginx",
    "The key is to keep replies short.",
    "My pin for the map is the red one.",
    "What is the wifi password?",
    "I forgot my password again.",
    "Call me at +1 415 555 0132.",
    "Meeting on 2025-11-27 at 14:30.",
    "The invoice total was 1,234,567.89 USD.",
    "ISBN 978-3-16-148410-0",
    "The cannabinoid antagonist SR141716A reduced anxiety.",
    'Use `getenv("DB_PASSWORD")` instead of a literal.',
    "DB_PASSWORD=${DB_PASSWORD}",
    "password: <your password here>",
    "The secret to good sourdough is patience.",
    "token: the smallest unit the tokenizer produces",
    "mật khẩu phải có ít nhất 12 ký tự",
    "パスワードを忘れました",
    "密码太短了",
    "The passport office opens at 9.",
    "Her login is the same as her email.",
    "The door code changed last week.",
    "Recovery codes are in the safe.",
    "git log --oneline | head -5",
    "We use the PIN pad at the front desk.",
    'the secret "payments-tls" was not found',
    "clawmem get ../etc/passwd: outside the workspace",
    "Timestamp 1732576000000 in ms",
    "Authorization: see the wiki",
)


# ----------------------------------------------------------------------------- the run

# Runs ``clawmem ARGS`` for the part: returns (exit code, stdout, stderr).
Cli = Callable[[list[str]], tuple[int, str, str]]
QUERIES = (
    "password", "wifi password", "PIN code", "token", "API key", "secret key", "credentials",
    "login", "recovery codes", "passphrase", "card", "connection", "Peter", "mật khẩu",
    "パスワード", "密码", "비밀번호", "пароль", "contraseña", "staging database",
)  # fmt: skip


def _subprocess_cli(ws: Path) -> Cli:
    from .workspace import run

    def go(args: list[str]) -> tuple[int, str, str]:
        r = run(ws, *args)
        return r.returncode, r.stdout, r.stderr

    return go


def plant(ws: Path, folder: Path, items: list[Planted], cli: Cli) -> dict:
    """Write ``items`` into the workspace's sources, a third each: notes (Retain facts about
    @Peter, so reflect pages them; blocks that span lines as plain notes), ``retain`` (first
    without ``--allow-secret``, which must refuse), and a Claude Code transcript."""
    notes: list[Planted] = []
    retained: list[Planted] = []
    said: list[Planted] = []
    for i, p in enumerate(items):
        where = i % 3
        if where == 1 and "\n" in p.text:
            where = 0  # a fact is one line
        (notes, retained, said)[where].append(p)
    facts = [f"- W @Peter: {p.text}" for p in notes if "\n" not in p.text]
    blocks = [p.text for p in notes if "\n" in p.text]
    (ws / "memory").mkdir(parents=True, exist_ok=True)
    (ws / "bank" / "entities").mkdir(parents=True, exist_ok=True)
    (ws / "MEMORY.md").write_text("# Core\n\n- Peter prefers short replies.\n", encoding="utf-8")
    # A page the user wrote, holding a secret of theirs: reflect keeps it byte for byte and adds
    # its own section; a diff it shows (--dry-run) has these lines as context.
    own = next((p.text for p in notes if "\n" not in p.text), "")
    (ws / "bank" / "entities" / "Peter.md").write_text(f"# Peter\n\nA colleague. {own}\n")
    note = ["# 2025-12-01", "", "## Keys and passwords", ""]
    for b in blocks:
        note += ["```", b, "```", ""]
    note += ["## Retain", *facts, ""]
    (ws / "memory" / "2025-12-01.md").write_text("\n".join(note), encoding="utf-8")
    refused = accepted = 0
    for p in retained:
        args = ["retain", p.text, "--entity", "Peter", "--date", "2025-12-02"]
        code, _, _ = cli(args)
        if code == 7:
            refused += 1
        elif code == 0:
            accepted += 1  # stored without being told: a failure
        code, _, err = cli([*args, "--allow-secret"])
        if code != 0:
            raise RuntimeError(f"retain --allow-secret failed: {err.strip()}")
    lines = [
        {
            "type": "user" if i % 2 == 0 else "assistant",
            "sessionId": "5ec2e75e-0b1d-4c6f-9a3e-31a31a31a31a",
            "uuid": f"00000000-0000-4000-8000-{i:012d}",
            "timestamp": f"2025-12-03T09:{i // 60:02d}:{i % 60:02d}Z",
            "message": {
                "role": "user" if i % 2 == 0 else "assistant",
                "content": f"For the record, {p.text} - keep it between us.",
            },
        }
        for i, p in enumerate(said)
    ]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "5ec2e75e.jsonl").write_text(
        "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8"
    )
    return {
        "notes": len(notes),
        "retain": len(retained),
        "transcript": len(said),
        "retain_refused": refused,
        "accepted_without_flag": accepted,
    }


def _probes(p: Planted) -> list[str]:
    """What would show that ``p`` leaked: the secret, each line of one that spans lines, its
    lower case (the lexical index stores folded terms), and JSON's escaping of each. A short
    value (a PIN) is looked for with what preceded it, so that it is not found by chance."""
    parts = [p.secret] + [x.strip() for x in p.secret.split("\n") if len(x.strip()) >= 8]
    out = []
    for s in parts:
        if len(s) < 8:
            at = p.text.index(s)
            s = p.text[max(0, at - 4) : at] + s
        out += [s, s.lower(), json.dumps(s, ensure_ascii=False)[1:-1], json.dumps(s)[1:-1]]
    return list(dict.fromkeys(out))


def _mcp_outputs(ws: Path, files: list[str], env: dict[str, str], refused: str) -> dict:
    """Every MCP tool's answers over stdio, as an agent gets them; and memory_retain's refusal of
    a secret (its text, to check the hint)."""
    import sys

    import anyio
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "clawmem", "mcp", "-w", str(ws)], env=env
    )
    out: dict[str, str] = {}

    async def main() -> None:
        with open(ws.parent / "mcp-stderr.log", "w", encoding="utf-8") as err:
            async with stdio_client(params, errlog=err) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()

                    async def call(name: str, args: dict, key: str) -> None:
                        r = await s.call_tool(name, args)
                        out[key] = "".join(getattr(c, "text", "") for c in r.content)

                    for q in QUERIES:
                        await call("memory_search", {"query": q, "k": 50}, f"mcp search {q}")
                    for f in files:
                        await call("memory_get", {"path": f}, f"mcp get {f}")
                    await call("memory_status", {}, "mcp status")
                    await call("memory_entities", {}, "mcp entities")
                    await call("memory_retain", {"text": refused}, "mcp retain")

    anyio.run(main)
    return out


def run_secrets(
    work: Path,
    seed: int,
    log: Callable[[str], None],
    *,
    cli: Cli | None = None,
    mcp_env: dict[str, str] | None = None,
    real_messages: list[str] | None = None,
) -> dict:
    """Plant, index, reflect, read everything back; count what leaked. ``cli`` runs the CLI
    (default: a subprocess each time, lexical, as the rest of the soak)."""
    from clawmem.text.redact import redact

    ws, folder = work / "ws", work / "sessions"
    ws.mkdir(parents=True, exist_ok=True)
    run = cli or _subprocess_cli(ws)
    (ws / "clawmem.toml").write_text(
        f"[sessions]\npaths = [{json.dumps(str(folder))}]\nidle_minutes = 60\n", encoding="utf-8"
    )
    from clawmem.config import trust

    trust.approve(ws)  # the transcripts folder is outside the workspace: the soak's own setting
    items = planted(seed)
    fig: dict = {"planted": len(items), "kinds": len({p.kind for p in items})}
    fig.update(plant(ws, folder, items, run))
    users_own = {"bank/entities/Peter.md": (ws / "bank/entities/Peter.md").read_bytes()}
    outputs: dict[str, str] = {}

    def keep(name: str, args: list[str]) -> None:
        code, out, err = run(args)
        outputs[name] = out + err
        if code not in (0, 4):  # 4: status's "stale"/attention is not a failure here
            fig.setdefault("failures", []).append(f"{name}: exit {code}: {err.strip()[:200]}")

    keep("index", ["index"])
    keep("reflect --dry-run", ["reflect", "--dry-run"])
    keep("reflect", ["reflect"])
    keep("index again", ["index"])
    keep("status", ["status", "--json"])
    keep("check", ["check", "--json"])
    keep("entities", ["entities", "--json"])
    queries = work / "queries.txt"
    queries.write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    keep("recall --queries", ["recall", "--queries", str(queries), "-k", "50"])
    keep("recall --explain", ["recall", "password", "--json", "--explain", "-k", "50"])
    keep("context", ["context", "what is the wifi password and the PIN?", "--json"])
    files = sorted(
        path.relative_to(ws).as_posix()
        for path in ws.rglob("*.md")
        if ".memory" not in path.relative_to(ws).parts
    ) + [f"sessions/{t.name}" for t in sorted(folder.glob("*.jsonl"))]
    for f in files:
        keep(f"get {f}", ["get", f, "--json"])
    refused = next(p.text for p in items if "\n" not in p.text)
    from .workspace import child_env  # this checkout's clawmem, lexical

    env = child_env(mcp_env)
    outputs.update(_mcp_outputs(ws, files, env, refused))
    hint = outputs["mcp retain"]
    fig["mcp_refusal_names_the_real_flag"] = (
        "--allow-secret" in hint and "pass allow_secret" not in hint and "refusing" in hint
    )

    places: dict[str, bytes] = {k: v.encode("utf-8") for k, v in outputs.items()}
    for path in sorted((ws / ".memory").rglob("*")):
        if path.is_file():
            places[f".memory/{path.relative_to(ws / '.memory').as_posix()}"] = path.read_bytes()
    generated = [*(ws / "bank").rglob("*.md"), *(ws / "memory" / "episodes").rglob("*.md")]
    for path in generated:
        rel = path.relative_to(ws).as_posix()
        # What the user wrote there is theirs, kept as it was; what reflect added is searched.
        places[rel] = path.read_bytes().replace(users_own.get(rel, b"\0"), b"")
    fig["places_checked"] = len(places)
    fig["episode_pages"] = len(list((ws / "memory" / "episodes").rglob("*.md")))
    found = []
    for p in items:
        probes = [s.encode("utf-8") for s in _probes(p)]
        where = sorted(name for name, data in places.items() if any(s in data for s in probes))
        if where:
            found.append({"kind": p.kind, "where": where[:5]})
    fig["secrets_found"] = len(found)
    fig["found"] = found
    fig["non_secrets"] = len(NOT_SECRETS)
    fp = [t for t in NOT_SECRETS if redact(t) != t]
    fig["false_positives"] = len(fp)
    fig["false_positive_texts"] = fp
    if real_messages is not None:
        fig["real_messages"] = len(real_messages)
        fig["real_messages_redacted"] = sum(1 for t in real_messages if redact(t) != t)
    log(
        f"secrets: {fig['planted']} planted ({fig['kinds']} kinds), {fig['places_checked']} "
        f"places checked, {fig['secrets_found']} found; false positives {fig['false_positives']}"
    )
    return fig


def realtalk_messages() -> list[str] | None:
    """REALTALK's chat messages (../shared/eval), or None when the data is not there."""
    from benchmarks.common import EVAL

    folder = EVAL / "realtalk"
    if not folder.is_dir():
        return None
    out = []
    for f in sorted(folder.glob("Chat_*.json")):
        data = json.loads(f.read_text(encoding="utf-8"))
        for key, value in data.items():
            if key.startswith("session_") and isinstance(value, list):
                out += [m.get("clean_text", "") for m in value if isinstance(m, dict)]
    return out
