"""The hook kinds, one room each: what its config says (`target`), how it runs
(`run`) and its limits. `process` hooks run through `hookgate.hooks.process`; `persistent`
ones stay resident, `python` ones are imported once, `http` ones POST the event, `model`
ones ask a checker model. `keys` reads the keys of an entry that belong to its kind."""
