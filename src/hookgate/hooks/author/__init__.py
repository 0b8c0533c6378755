"""The hook author's tools: `hookgate hooks check | fire | schema` (`cli`), the
checks run beyond the config's own (`lint`), the JSON Schemas of every event
(`schema`), and the tables of docs/hooks.md that come from code (`reference`)."""
