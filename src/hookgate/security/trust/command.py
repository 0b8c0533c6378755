"""`hookgate trust [FILE]`: show what trusting an agent file means, then record it.

On a terminal it asks y/N; elsewhere it records only with `--yes`. `--list` shows
what is trusted, `--revoke FILE` forgets a file. The summary goes to stderr with
the question; stdout stays empty but for `--list`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hookgate.hooks import ConfigError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hookgate.security.trust.store import TrustStore


def add_arguments(trust: argparse.ArgumentParser) -> None:
    """Add the arguments of `hookgate trust` to its parser (`hookgate.cli` names it)."""
    trust.add_argument("file", nargs="?", type=Path, metavar="FILE",
                       help="the agent file (default: --agent, else ./hookgate.yaml)")  # fmt: skip
    trust.add_argument("-y", "--yes", action="store_true", help="trust without asking")
    trust.add_argument("--list", action="store_true", help="list the trusted agent files")
    trust.add_argument("--revoke", type=Path, metavar="FILE", help="stop trusting FILE")
    trust.set_defaults(handler=run_trust)


def run_trust(args: argparse.Namespace) -> int:
    # Here, not at the top: `hookgate --help` builds this parser too.
    from hookgate.security.trust.check import is_trusted
    from hookgate.security.trust.store import TrustStore
    from hookgate.security.trust.summary import shown

    store = TrustStore()
    if args.list:
        for agent, entry in sorted(store.entries().items()):
            state = "trusted" if is_trusted(Path(agent), store=store) else "changed since trusted"
            # A name is the repository's to choose: an escape in it is shown, not sent.
            print(shown(f"{agent}\t{entry.trusted_at}\t{state}"))
        return 0
    if args.revoke is not None:
        path = args.revoke.resolve()
        if not store.revoke(path):
            raise ConfigError(f"{path} is not trusted", hint="hookgate trust --list shows what is")
        print(f"hookgate: {path} is no longer trusted", file=sys.stderr)
        return 0
    return 0 if offer_trust(args.file or args.agent, store, ask=not args.yes) else 1


def offer_trust(agent_file: Path, store: TrustStore, *, ask: bool = True) -> bool:
    """Show on stderr what trusting `agent_file` means, ask y/N on the terminal (unless
    not `ask`), and record it on yes. False: nothing was recorded."""
    from hookgate.security.trust.closure import closure_of
    from hookgate.security.trust.record import entries_of
    from hookgate.security.trust.summary import describe_closure

    closure = closure_of(agent_file)
    entries = entries_of(closure)
    print(describe_closure(closure), file=sys.stderr)
    if ask and not _confirmed():
        print("hookgate: not trusted; nothing was recorded", file=sys.stderr)
        return False
    store.record(entries)
    print(f"hookgate: trusted {closure.root.path}", file=sys.stderr)
    return True


def _confirmed() -> bool:
    if not sys.stdin.isatty():
        raise ConfigError(
            "not trusted: stdin is not a terminal to ask on", hint="pass --yes to trust it"
        )
    sys.stderr.write("Trust it? [y/N] ")
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")
