"""The test house in a real Home Assistant, over its HTTP and WebSocket APIs.

Run with the Home Assistant venv's python (it has aiohttp); crates/hearth-testkit/src/
homeassistant.rs writes this file and house.json (the house, beside it) into the config
directory and runs it; scripts/ha-registries runs it from the checkout.

  house.py config DIR PORT          write DIR/configuration.yaml: the demo on 127.0.0.1:PORT
  house.py setup URL DIR            wait until URL answers, onboard (the first user), write a
                                    long-lived token to DIR/token (mode 0600), wait until Home
                                    Assistant runs and the house's entities exist, set up the house
  house.py ws URL TOKEN_FILE        one WebSocket command (JSON on stdin, without id): its
                                    `result` as JSON on stdout; exit 1 with the error on stderr
  house.py registries URL TOKEN_FILE OUT
                                    the registries' raw results in one JSON file (the corpus of
                                    crates/hearth-house/tests/corpus/homeassistant/)
  house.py requirements [--missing]
                                    the Python packages the integrations this configuration
                                    loads require (from Home Assistant's own manifests), one per
                                    line as pip takes them; --missing: only those not installed
                                    at that version. scripts/setup installs them: the tests run
                                    Home Assistant with --skip-pip, which installs nothing.

Errors go to stderr, one line, with exit status 1.
"""

import asyncio
import json
import os
import sys
import time

import aiohttp

HERE = os.path.dirname(os.path.abspath(__file__))

# Home Assistant's configuration: only what the tests use (no default_config: no recorder, no
# discovery). `demo:` brings the lights, switches, covers, climate, fans, locks and media
# players the house is made of; `conversation:` the exposure settings.
CONFIGURATION = """\
http:
  server_host: 127.0.0.1
  server_port: {port}
api:
config:
conversation:
demo:
"""

# The onboarding user (loopback only, a throwaway config directory).
USER = {"name": "Hearth Test", "username": "hearth", "password": "hearth-test-password"}

# The commands scripts/ha-registries records, in this order (get_entries is asked for every
# entity exposed to the conversation agent).
REGISTRIES = [
    "get_states",
    "config/entity_registry/list",
    "config/entity_registry/get_entries",
    "config/device_registry/list",
    "config/area_registry/list",
    "config/floor_registry/list",
    "homeassistant/expose_entity/list",
]


class Failed(Exception):
    """What went wrong, said once to stderr."""


# What Home Assistant loads besides CONFIGURATION's domains, with the manifests' dependencies
# and after-dependencies: what its bootstrap always sets up, the demo's platforms, and `stream`,
# which `camera` (a demo platform) imports without naming it in its manifest.
ALSO_LOADED = {"stream"}


def requirements(missing_only):
    import homeassistant
    from homeassistant import bootstrap
    from homeassistant.components import demo
    from importlib.metadata import PackageNotFoundError, version
    from packaging.requirements import Requirement

    components = os.path.join(os.path.dirname(homeassistant.__file__), "components")
    configured = {line.split(":")[0] for line in CONFIGURATION.splitlines() if line[:1].isalpha()}
    platforms = demo.COMPONENTS_WITH_CONFIG_ENTRY_DEMO_PLATFORM + demo.COMPONENTS_WITH_DEMO_PLATFORM
    todo = [
        *configured,
        *bootstrap.CORE_INTEGRATIONS,
        *bootstrap.LOGGING_INTEGRATIONS,
        *bootstrap.FRONTEND_INTEGRATIONS,
        *bootstrap.DEFAULT_INTEGRATIONS,
        *(str(p) for p in platforms),
        *ALSO_LOADED,
    ]
    seen, wanted = set(), set()
    while todo:
        domain = todo.pop()
        if domain in seen:
            continue
        seen.add(domain)
        path = os.path.join(components, domain, "manifest.json")
        try:
            with open(path, encoding="utf-8") as f:
                manifest = json.load(f)
        except FileNotFoundError:
            raise Failed(f"{path} is missing: is the venv's homeassistant whole?") from None
        wanted.update(manifest.get("requirements", []))
        todo += manifest.get("dependencies", []) + manifest.get("after_dependencies", [])
    for line in sorted(wanted, key=str.lower):
        if missing_only:
            r = Requirement(line)
            try:
                if r.specifier.contains(version(r.name), prereleases=True):
                    continue
            except PackageNotFoundError:
                pass
        print(line)


def house():
    with open(os.path.join(HERE, "house.json"), encoding="utf-8") as f:
        return json.load(f)


class Ws:
    """One authenticated WebSocket connection; `call` sends a command and returns its result."""

    def __init__(self, session, url, token):
        self.session, self.url, self.token, self.id = session, url, token, 0

    async def __aenter__(self):
        self.ws = await self.session.ws_connect(self.url + "/api/websocket", max_msg_size=0)
        hello = await self.receive()
        if hello.get("type") != "auth_required":
            raise Failed(f"{self.url}/api/websocket opened with {hello}, not auth_required")
        await self.ws.send_json({"type": "auth", "access_token": self.token})
        answer = await self.receive()
        if answer.get("type") != "auth_ok":
            raise Failed(f"{self.url}/api/websocket refused the token: {answer}")
        return self

    async def __aexit__(self, *exc):
        await self.ws.close()

    async def receive(self):
        m = await self.ws.receive()
        if m.type != aiohttp.WSMsgType.TEXT:
            raise Failed(f"{self.url}/api/websocket closed ({m.type.name} {m.data} {m.extra})")
        return json.loads(m.data)

    async def call(self, command):
        self.id += 1
        await self.ws.send_json({**command, "id": self.id})
        while True:
            m = await self.receive()
            if m.get("id") == self.id and m.get("type") == "result":
                break
        if not m.get("success"):
            e = m.get("error") or {}
            raise Failed(f"{command.get('type')} failed: {e.get('code')}: {e.get('message')}")
        return m.get("result")


def read_token(path):
    with open(path, encoding="utf-8") as f:
        return f.read().strip()


def write_token(path, token):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(token + "\n")
    os.chmod(path, 0o600)


async def answers(session, url, timeout):
    """Wait until GET /api/onboarding answers 200."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            async with session.get(url + "/api/onboarding") as r:
                if r.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        if time.monotonic() > deadline:
            raise Failed(f"{url}/api/onboarding did not answer within {timeout} s")
        await asyncio.sleep(0.5)


async def onboard(session, url):
    """The first user, then its tokens: the authorization code, an access token, a long-lived
    token (what a user makes in their profile), returned."""
    client_id = url + "/"
    async with session.post(
        url + "/api/onboarding/users", json={"client_id": client_id, "language": "en", **USER}
    ) as r:
        body = await r.text()
        if r.status != 200:
            raise Failed(f"POST /api/onboarding/users: {r.status} {body}")
        code = json.loads(body)["auth_code"]
    form = {"grant_type": "authorization_code", "code": code, "client_id": client_id}
    async with session.post(url + "/auth/token", data=form) as r:
        body = await r.text()
        if r.status != 200:
            raise Failed(f"POST /auth/token: {r.status} {body}")
        access = json.loads(body)["access_token"]
    async with Ws(session, url, access) as ws:
        return await ws.call(
            {"type": "auth/long_lived_access_token", "client_name": "hearth-test", "lifespan": 3650}
        )


async def running(ws, entity_ids, timeout):
    """Wait until Home Assistant says it runs and every one of `entity_ids` has a state (the
    demo's platforms come up after the HTTP API)."""
    deadline = time.monotonic() + timeout
    while True:
        state = (await ws.call({"type": "get_config"})).get("state")
        have = {s["entity_id"] for s in await ws.call({"type": "get_states"})}
        missing = sorted(set(entity_ids) - have)
        if state == "RUNNING" and not missing:
            return
        if time.monotonic() > deadline:
            raise Failed(f"after {timeout} s Home Assistant is {state}, without {missing}")
        await asyncio.sleep(0.5)


async def set_up(ws, h):
    """The areas (the demo's own updated, the others created), the entities' areas and aliases,
    and what is exposed to the conversation agent."""
    areas = {a["name"]: a for a in await ws.call({"type": "config/area_registry/list"})}
    for a in h["areas"]:
        if a["name"] in areas:
            got = await ws.call(
                {
                    "type": "config/area_registry/update",
                    "area_id": areas[a["name"]]["area_id"],
                    "aliases": a["aliases"],
                }
            )
        else:
            got = await ws.call(
                {"type": "config/area_registry/create", "name": a["name"], "aliases": a["aliases"]}
            )
        if got["area_id"] != a["id"]:
            raise Failed(f"area {a['name']!r} has the id {got['area_id']!r}, not {a['id']!r}")
    for e in h["entities"]:
        await ws.call(
            {
                "type": "config/entity_registry/update",
                "entity_id": e["entity_id"],
                "area_id": e["area"],
                "aliases": e["aliases"],
            }
        )
    for should_expose in (True, False):
        ids = [e["entity_id"] for e in h["entities"] if e["exposed"] == should_expose]
        if should_expose:
            ids += h["exposed_by_id"]
        await ws.call(
            {
                "type": "homeassistant/expose_entity",
                "assistants": ["conversation"],
                "entity_ids": ids,
                "should_expose": should_expose,
            }
        )


async def setup(url, config_dir):
    h = house()
    token_file = os.path.join(config_dir, "token")
    async with aiohttp.ClientSession() as session:
        await answers(session, url, 180)
        if os.path.exists(token_file):
            token = read_token(token_file)
        else:
            token = await onboard(session, url)
            write_token(token_file, token)
        async with Ws(session, url, token) as ws:
            ids = [e["entity_id"] for e in h["entities"]] + h["exposed_by_id"]
            await running(ws, ids, 180)
            await set_up(ws, h)


async def ws_command(url, token_file):
    command = json.load(sys.stdin)
    async with aiohttp.ClientSession() as session:
        async with Ws(session, url, read_token(token_file)) as ws:
            result = await ws.call(command)
    json.dump(result, sys.stdout)


async def registries(url, token_file, out):
    got = {}
    async with aiohttp.ClientSession() as session:
        async with Ws(session, url, read_token(token_file)) as ws:
            exposed = await ws.call({"type": "homeassistant/expose_entity/list"})
            ids = sorted(
                i for i, a in exposed["exposed_entities"].items() if a.get("conversation")
            )
            for t in REGISTRIES:
                command = {"type": t}
                if t == "config/entity_registry/get_entries":
                    command["entity_ids"] = ids
                got[t] = await ws.call(command)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(got, f, indent=2, ensure_ascii=False)
        f.write("\n")


def main(argv):
    match argv:
        case ["config", config_dir, port]:
            with open(os.path.join(config_dir, "configuration.yaml"), "w", encoding="utf-8") as f:
                f.write(CONFIGURATION.format(port=int(port)))
        case ["setup", url, config_dir]:
            asyncio.run(setup(url, config_dir))
        case ["ws", url, token_file]:
            asyncio.run(ws_command(url, token_file))
        case ["registries", url, token_file, out]:
            asyncio.run(registries(url, token_file, out))
        case ["requirements"]:
            requirements(missing_only=False)
        case ["requirements", "--missing"]:
            requirements(missing_only=True)
        case _:
            raise Failed(f"usage: see {__file__}'s docstring (got {argv})")


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except (Failed, OSError, ValueError, KeyError, aiohttp.ClientError, asyncio.TimeoutError) as e:
        print(f"house.py: {e}", file=sys.stderr)
        sys.exit(1)
