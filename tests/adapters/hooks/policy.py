#!/usr/bin/env python3
"""The Python hook of the adapter tests (native format), one process per event:
blocks or rewrites a question, rewrites an `echo` call, scrubs its result, refuses,
rewrites or scrubs a hand-off (logging its events to asks.log), scrubs any result with
a PRIVATE KEY in it, and
writes every postGeneration event to ends.jsonl in the project directory."""

import json
import os
import sys

event = json.load(sys.stdin)
name = event["event"]
reply: dict[str, object] = {}
if name in ("preAsk", "postAsk", "subagentStart", "subagentStop") or (
    event.get("tool", "").endswith(("research", "ask_agent"))
):
    with open(os.path.join(os.environ["HOOKGATE_PROJECT_DIR"], "asks.log"), "a") as log:
        log.write(f"{name}:{event.get('agent') or event.get('tool')}\n")
if name == "preGeneration":
    prompt = event["prompt"]
    if "BLOCK" in prompt:
        reply = {"action": "block", "reason": "a blocked word", "message": "Not answering that."}
    elif "please rewrite" in prompt:
        reply = {"prompt": prompt.replace("please rewrite", "rewritten by policy")}
    if "context" in prompt:
        reply["context"] = "House rule: answer in one line."
elif name in ("preToolCall", "postToolCall") and not event.get("call_id"):
    reply = {"action": "block", "reason": "a tool event without its call_id"}
elif name == "preToolCall" and event["tool"].endswith(("echo", "deploy")):
    text = event["arguments"].get("text", "")
    if "lower" in text:
        reply = {"arguments": {"text": text.upper()}}
elif name == "postToolCall" and event["tool"].endswith("broken"):
    with open(os.path.join(os.environ["HOOKGATE_PROJECT_DIR"], "results.jsonl"), "a") as log:
        log.write(json.dumps(event["result"]) + "\n")
elif name == "postToolCall" and "PRIVATE KEY" in event["result"]["content"]:
    reply = {"result": "[key scrubbed by policy]"}
elif name == "postToolCall" and event["tool"].endswith("echo"):
    if "SECRET" in event["result"]["content"]:
        reply = {"result": "[scrubbed by policy]"}
elif name == "preAsk" and "forbidden" in event["question"]:
    reply = {"action": "block", "reason": "not a question for that agent", "message": "Ask me."}
elif name == "preAsk" and "please rewrite" in event["question"]:
    reply = {"question": event["question"].replace("please rewrite", "rewritten by policy")}
elif name == "postAsk" and "SECRET" in event["answer"]:
    reply = {"answer": "[answer scrubbed by policy]"}
elif name == "postAsk" and "context" in event["answer"]:
    reply = {"context": "Checked by policy."}
elif name == "postGeneration":
    with open(os.path.join(os.environ["HOOKGATE_PROJECT_DIR"], "ends.jsonl"), "a") as log:
        fields = ("prompt", "answer", "outcome")
        log.write(json.dumps({key: event.get(key) for key in fields}) + "\n")
json.dump(reply, sys.stdout)
