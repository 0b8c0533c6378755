#!/usr/bin/env node
// PreToolUse in the legacy top-level form: decision approve / block.
let data = "";
process.stdin.on("data", (chunk) => (data += chunk));
process.stdin.on("end", () => {
  const command = JSON.parse(data).tool_input.command || "";
  if (command.startsWith("echo approved")) {
    console.log(JSON.stringify({decision: "approve", reason: "harmless"}));
  } else if (command.startsWith("wget")) {
    console.log(JSON.stringify({decision: "block", reason: "wget is blocked (legacy)"}));
  }
});
