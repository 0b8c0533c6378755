#!/usr/bin/env node
// PreToolUse: `git push` always asks the user.
let data = "";
process.stdin.on("data", (chunk) => (data += chunk));
process.stdin.on("end", () => {
  const event = JSON.parse(data);
  if ((event.tool_input.command || "").startsWith("git push")) {
    console.log(JSON.stringify({hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "ask",
      permissionDecisionReason: "pushing needs a human",
    }}));
  }
});
