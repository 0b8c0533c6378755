"""Hypothesis strategies for the fuzz tests: valid documents, then small mutations of them.

`agent_files()` draws an agent file that follows the docs; `scripts()` a model script.
`mutated(base)` applies a few of the mistakes people make — a misspelt or unknown key,
a missing one, a value of the wrong type — so most examples sit just off the valid set,
where a loader's mistakes hide. Whether the result is still valid is for the spec
modules to say, never for the strategy.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

from reliability.agentfile_spec import BUILTIN_TOOLS, EVENTS, KeyPath

#: Text as people write it in config, without the characters YAML cannot hold raw.
words = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc"), max_codepoint=0xFFFF),
    max_size=12,
)
names = st.from_regex(r"[a-z][a-z0-9_-]{0,7}", fullmatch=True).filter(lambda n: "__" not in n)
#: Values that are wrong somewhere: each is right for some key, and wrong for most.
odd_values = st.sampled_from(
    [None, True, False, 0, -1, 1, 2.5, -0.5, 10**400, float("inf"), float("nan"), "", " ",
     "x", "a\x00b", "10s", "500ms", "2m", "fial", "mecatl", "native", "(", "^shell$",
     "http://127.0.0.1:9/mcp", "ftp://h", "json:loads", "json:nope", "sub", "missing",
     "Bad Header", "a\nb", [], {}, ["x"], [1], {"k": "v"}, {"k": 1}]
).map(copy.deepcopy) | words | st.integers()  # fmt: skip
#: Keys a mutation adds: near misses of real ones, strangers, and keys YAML reads as non-strings.
odd_keys = (
    st.sampled_from(
        ["nmae", "comand", "arg", "argz", "onerror", "OnError", "timout", "matchr", "descripton",
         "file ", "urls", "header", "envs", "hook", "tool", "model_", "Yolo", "maxSteps",
         "mcpServers", "agent", "preToolcall", "pretoolcall", "Stop", "x"]
    )
    | names
    | st.sampled_from([1, 0, -3, None, True, 2.5])
)  # fmt: skip

models = names | st.fixed_dictionaries(
    {"name": names},
    optional={
        "base_url": st.sampled_from(["http://127.0.0.1:9/v1", "https://models.example/v1"]),
        "api_key_env": st.sampled_from(["OPENAI_API_KEY", "MY_KEY"]),
        "timeout": st.sampled_from([1, 2.5, 120]),
        "temperature": st.sampled_from([0, 0.2, None]),
    },
)
durations = st.sampled_from([1, 2.5, "500ms", "10s", "2m", 3600])


def hook_entries(event: str) -> st.SearchStrategy[dict[str, Any]]:
    """A hook of `event`, as docs/hooks.md describes one."""
    optional: dict[str, st.SearchStrategy[Any]] = {
        "name": words,
        "timeout": durations,
        "onError": st.sampled_from(["warn", "fail", "ignore"]),
        "format": st.sampled_from(["native", "mecatl"] if EVENTS[event].mecatl else ["native"]),
        "env": st.dictionaries(st.sampled_from(["A", "TOKEN", "LOG"]), words | st.integers()),
        "cwd": st.sampled_from([".", "sub"]),
        "shell": st.just("/bin/sh"),
    }
    if EVENTS[event].matches:
        optional["matcher"] = st.sampled_from(["^shell$", "read_", "^mcp__", ""])
    program = st.one_of(
        st.fixed_dictionaries({"command": st.sampled_from(["true", "./guard.sh --strict"])}),
        st.fixed_dictionaries(
            {"args": st.lists(st.sampled_from(["./a.py", "-x", ""]), min_size=1)}
        ),
        st.fixed_dictionaries({"python": st.just("json:loads")}),
    )
    return st.tuples(program, st.fixed_dictionaries({}, optional=optional)).map(
        lambda parts: {**parts[0], **parts[1]}
    )


hooks = st.lists(st.sampled_from(sorted(EVENTS)), unique=True, max_size=3).flatmap(
    lambda events: st.fixed_dictionaries(
        {event: st.lists(hook_entries(event), max_size=2) for event in events}
    )
)
agents = st.dictionaries(
    st.from_regex(r"[A-Za-z0-9_.-]{1,8}", fullmatch=True),
    st.fixed_dictionaries(
        {"file": st.sampled_from(["reviewer.yaml", "../other/hookgate.yaml"])},
        optional={"description": words, "timeout": durations | st.just(600)},
    ),
    max_size=3,
)
stdio_servers = st.fixed_dictionaries(
    {"command": st.sampled_from(["uvx", "python3", "./server"])},
    optional={
        "args": st.lists(st.sampled_from(["mcp-server-fetch", "--port", "8080", ""]), max_size=3),
        "env": st.dictionaries(st.sampled_from(["TOKEN", "FETCH_USER_AGENT"]), words, max_size=2),
        "cwd": st.sampled_from(["tools", "."]),
        "timeout": st.sampled_from([1, 30, 2.5]),
    },
)
http_servers = st.fixed_dictionaries(
    {"url": st.sampled_from(["http://127.0.0.1:8000/mcp", "https://mcp.example/mcp"])},
    optional={
        "headers": st.dictionaries(
            st.sampled_from(["Authorization", "X-Trace"]), st.sampled_from(["Bearer abc", "1"])
        ),
        "timeout": st.sampled_from([5, 60]),
    },
)
mcp_servers = st.dictionaries(names, stdio_servers | http_servers, max_size=3)
agent_files = st.fixed_dictionaries(
    {"model": models},
    optional={
        "system": words,
        "tools": st.lists(st.sampled_from(BUILTIN_TOOLS), unique=True),
        "permissions": st.fixed_dictionaries(
            {},
            optional={
                "allow": st.lists(st.sampled_from(["read_file", "shell(git status*)"])),
                "deny": st.lists(st.sampled_from(["shell(sudo *)", "mcp__x__*"])),
                "ask": st.lists(st.sampled_from(["shell(git push *)", "web_fetch"])),
            },
        ),
        "yolo": st.booleans(),
        "hooks": hooks,
        "agents": agents,
        "mcp_servers": mcp_servers,
        "max_steps": st.integers(1, 100),
        "context_budget": st.integers(1000, 10**6),
        "shell_timeout": st.integers(1, 600),
        "max_ask_depth": st.integers(1, 5),
    },
)

tool_calls = st.fixed_dictionaries(
    {"name": st.sampled_from(["read_file", "shell"])},
    optional={
        "arguments": st.dictionaries(
            st.sampled_from(["path", "command", "n"]),
            words | st.integers() | st.booleans() | st.none() | st.lists(words, max_size=2),
            max_size=2,
        )
    },
)
script_replies = st.one_of(
    st.fixed_dictionaries(
        {"text": words},
        optional={"tool_calls": st.lists(tool_calls, max_size=2), "expect": words},
    ),
    st.fixed_dictionaries({"tool_calls": st.lists(tool_calls, min_size=1, max_size=2)}),
    st.fixed_dictionaries({"error": words}, optional={"delay": st.sampled_from([0, 0.01])}),
)
scripts = st.lists(script_replies, min_size=1, max_size=4)


def _nodes(value: Any, path: KeyPath = ()) -> list[tuple[KeyPath, Any]]:
    """Every mapping and list of `value`, with its path, `value` itself first."""
    found: list[tuple[KeyPath, Any]] = []
    if isinstance(value, dict | list):
        found.append((path, value))
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            found.extend(_nodes(item, (*path, key)))
    return found


def _typo(key: Any, draw: st.DrawFn) -> Any:
    if not isinstance(key, str) or not key:
        return draw(odd_keys)
    at = draw(st.integers(0, len(key) - 1))
    how = draw(st.sampled_from(["drop", "double", "swap", "case", "space"]))
    if how == "drop":
        return key[:at] + key[at + 1 :]
    if how == "double":
        return key[:at] + key[at] + key[at:]
    if how == "swap" and len(key) > 1:
        at = min(at, len(key) - 2)
        return key[:at] + key[at + 1] + key[at] + key[at + 2 :]
    if how == "case":
        return key.swapcase()
    return key + " "


@st.composite
def mutated(
    draw: st.DrawFn,
    base: st.SearchStrategy[Any],
    *,
    under: Sequence[str] = (),
    most: int = 3,
) -> Any:
    """`base`, then up to `most` mutations, within the top-level sections `under` if given."""
    document = copy.deepcopy(draw(base))
    for _ in range(draw(st.integers(0, most))):
        nodes = [
            (path, node)
            for path, node in _nodes(document)
            if not under or (path and path[0] in under)
        ]
        if not nodes:
            break
        _, node = draw(st.sampled_from(nodes))
        kind = draw(st.sampled_from(["add", "rename", "delete", "retype"]))
        if isinstance(node, list):
            if node and kind != "add":
                node[draw(st.integers(0, len(node) - 1))] = draw(odd_values)
            else:
                node.append(draw(odd_values))
        elif kind == "add" or not node:
            node.setdefault(draw(odd_keys), draw(odd_values))
        else:
            key = draw(st.sampled_from(list(node)))
            if kind == "rename":
                node.setdefault(_typo(key, draw), node.pop(key))
            elif kind == "delete":
                del node[key]
            else:
                node[key] = draw(odd_values)
    return document
