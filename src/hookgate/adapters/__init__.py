"""hookgate's hooks around agents built with other frameworks, one module each:
`hookgate.adapters.langchain`, `.pydantic_ai`, `.openai_agents`, `.claude_agent_sdk`.

Each needs its framework (`pip install 'hookgate[langchain]'`, ...) and uses only
`hookgate.hooks`, never the runtime. docs/adapters.md says what each can and cannot do.
"""
