#!/usr/bin/env node
// Stop: send the agent back once, unless this Stop follows our own block.
const fs = require("fs");
let data = "";
process.stdin.on("data", (chunk) => (data += chunk));
process.stdin.on("end", () => {
  const event = JSON.parse(data);
  fs.appendFileSync(process.env.CLAUDE_PROJECT_DIR + "/stops.log", JSON.stringify(event) + "\n");
  if (!event.stop_hook_active) {
    console.log(JSON.stringify({decision: "block", reason: "Run the tests before you finish."}));
  }
});
