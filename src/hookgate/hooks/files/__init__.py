"""The files hooks come from: strict YAML that remembers where each value was
(`yamlfile`), parsed files cached by digest (`parsecache`), and `sha256` (`digest`)."""
