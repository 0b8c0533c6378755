"""Front ends: each reads questions, calls `runtime.turn.run_turn`, and shows what it
reports: line mode (`line`), `-p` (`printmode`), `--ask` (`askmode`) and `/ask-<name>`
(`askcommand`), an asked agent's side (`asked`), ACP (`acp`), the browser window
(`window`), `hookgate demo` and `hookgate init` (`demo`, `starter`). stdout carries the
product alone (`output`); `terminal` and `markdown` draw on a terminal."""
