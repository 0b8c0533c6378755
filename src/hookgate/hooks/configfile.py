"""A hook config file's top level: its `hooks:` mapping, then the Claude Code settings
files its `claude_settings:` names, folded into one `HooksConfig`.

Above `config` (which parses one `hooks:` mapping) and `claude_settings` (which builds on
it), so neither imports the other's reader.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from hookgate.hooks.config import HooksConfig, parse_hooks
from hookgate.hooks.files.yamlfile import Where, expect_mapping, load_yaml

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def load_hooks_file(path: Path, *, import_python: bool = True) -> HooksConfig:
    """Read the `hooks:` mapping of the YAML file `path` (other top-level keys are not ours).

    `import_python=False`: see `parse_hooks`."""
    document = load_yaml(path)
    where = Where(str(path))
    if document is None:
        return HooksConfig(source=str(path))
    document = expect_mapping(document, where, "the file's top level")
    return hooks_of_document(document, where, path.parent, import_python=import_python)


def hooks_of_document(
    document: Mapping[Any, Any], where: Where, base_dir: Path, *, import_python: bool = True
) -> HooksConfig:
    """The hooks of a config file's top level: `hooks:`, then those `claude_settings:` names."""
    config = parse_hooks(
        document.get("hooks"),
        where.key(document, "hooks"),
        base_dir=base_dir,
        import_python=import_python,
    )
    if "claude_settings" not in document:  # its module is imported by a file that uses it
        return config
    from hookgate.hooks.claude.settings import with_claude_settings  # it builds on `config`

    return with_claude_settings(config, document, where, base_dir)
