// The window's page: draws a session's events (server-sent), sends questions, cancels,
// answers consent. No build step, no library: the server renders markdown to HTML.
"use strict";

const state = { session: null, source: null, running: false, consentId: null };
// The sessionStorage key of the window's token.
const TOKEN_KEY = "hookgate-token";
// Milliseconds before the event stream reconnects, until the server says (`retry:`).
const RETRY_MS = 1000;
// For each answer piece, from its arrival at the server (ms): [to its arrival in the page,
// to the frame that shows it]. bench/window_latency.py reads them.
window.hookgateChunkDelays = [];

function now() { return performance.timeOrigin + performance.now(); }

function $(selector) { return document.querySelector(selector); }

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// The window's token: taken from the address the page was opened at (`?token=`), which
// then leaves the address bar, and kept in this tab's sessionStorage, which no other
// origin reads (a cookie would go to every port of 127.0.0.1). A reload finds it there.
function takeToken() {
  const address = new URL(location.href);
  const offered = address.searchParams.get("token");
  if (offered !== null) {
    sessionStorage.setItem(TOKEN_KEY, offered);
    address.searchParams.delete("token");
    history.replaceState(history.state, "", address.pathname + address.search + address.hash);
  }
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

const token = takeToken();

function authorized(headers) {
  return { ...headers, authorization: `Bearer ${token}` };
}

// What a refused request says: the server's JSON error, or its plain text.
async function failure(response) {
  const text = await response.text().catch(() => "");
  try {
    return JSON.parse(text).error || response.statusText;
  } catch {
    return text.trim() || response.statusText;
  }
}

async function api(path, body) {
  const init = body === undefined ? { headers: authorized({}) } : {
    method: "POST", headers: authorized({ "content-type": "application/json" }),
    body: JSON.stringify(body),
  };
  const response = await fetch(path, init);
  if (!response.ok) throw new Error(await failure(response));
  return response.json();
}

function showError(message) {
  const box = $("#error");
  box.textContent = message || "";
  box.hidden = !message;
}

function setRunning(running) {
  state.running = running;
  document.body.dataset.turn = running ? "running" : "idle";
  $("#cancel").disabled = !running;
  $("#send").disabled = running;
  $("#status").textContent = running ? "running…" : "idle";
}

function scrollDown() {
  const box = $("#conversation");
  box.scrollTop = box.scrollHeight;
}

function brief(text) {
  const line = text.replace(/\s+/g, " ");
  return line.length > 100 ? line.slice(0, 99) + "…" : line;
}

const draw = {
  turn_start() { setRunning(true); },
  closed() {  // closed by the server (the window keeps --max-sessions) or another page
    if (state.source) state.source.abort();
    setRunning(false);
    refreshSessions();
  },
  question(event) { $("#conversation").append(element("div", "question", event.text)); },
  answer(event, received) {
    let block = document.querySelector(`.answer[data-block="${event.block}"]`);
    if (!block) {
      block = element("div", "answer");
      block.dataset.block = event.block;
      $("#conversation").append(block);
    }
    block.innerHTML = event.html;  // rendered by the server, raw HTML escaped
    if (event.t !== undefined) {
      requestAnimationFrame(() => {
        window.hookgateChunkDelays.push([received - event.t, now() - event.t]);
      });
    }
  },
  notice(event) {
    $("#conversation").append(element("div", `notice notice-${event.kind}`, event.text));
  },
  tool(event) {
    const row = element("details", "tool");
    row.dataset.id = event.id;
    const summary = element("summary");
    summary.append(element("span", "tool-name", event.name),
                   element("span", "tool-brief", brief(event.arguments)));
    const body = element("div", "tool-body");
    body.append(element("h3", "", "arguments"), element("pre", "tool-args", event.arguments),
                element("h3", "", "result"), element("pre", "tool-result", "(running)"));
    row.append(summary, body);
    $("#conversation").append(row);
  },
  mark(event) {
    const row = document.querySelector(`.tool[data-id="${CSS.escape(event.id)}"]`);
    if (!row) return;
    const reason = event.reason ? `: ${event.reason}` : "";
    row.classList.add(event.kind);
    row.querySelector("summary").append(
      element("span", `mark mark-${event.kind}`, `${event.kind} by ${event.by}${reason}`));
  },
  result(event) {
    const row = document.querySelector(`.tool[data-id="${CSS.escape(event.id)}"]`);
    if (!row) return;
    row.querySelector(".tool-result").textContent = event.content;
    row.classList.toggle("failed", event.is_error);
  },
  consent(event) {
    // A guardrail's block asks "past the guardrail, once?": there is no "always" for it.
    const guardrail = event.guardrail;
    state.consentId = event.id;
    $("#consent-title").textContent = guardrail
      ? `Guardrail '${guardrail.rule}' blocked this call` : "Allow this tool call?";
    $("#consent-once").textContent = guardrail ? "Allow once, past the guardrail" : "Allow once";
    $("#consent-deny").textContent = guardrail ? "Reject" : "Deny";
    $("#consent-always").hidden = Boolean(guardrail);
    $("#consent-tool").textContent = event.tool;
    $("#consent-details").textContent =
      guardrail ? `${guardrail.reason}\n\n${event.details}` : event.details;
    $("#consent-arguments").textContent = event.arguments;
    $("#consent-rewritten").hidden = !event.rewritten;
    const dialog = $("#consent");
    if (!dialog.open) dialog.showModal();
  },
  consent_done(event) {
    if (state.consentId !== event.id) return;
    state.consentId = null;
    const dialog = $("#consent");
    if (dialog.open) dialog.close();
  },
  blocked(event) {
    const box = element("div", "blocked");
    const response = element("div", "blocked-response");
    response.innerHTML = event.response;  // rendered by the server, raw HTML escaped
    box.append(element("div", "blocked-marker", `blocked by a hook: ${event.reason}`), response);
    $("#conversation").append(box);
  },
  turn_end(event) {
    setRunning(false);
    document.body.dataset.outcome = event.outcome;
    refreshSessions();
  },
};

function follow(sessionId) {
  if (state.source) state.source.abort();
  state.session = sessionId;
  $("#conversation").replaceChildren();
  setRunning(false);
  const source = new AbortController();
  state.source = source;
  stream(`/api/sessions/${encodeURIComponent(sessionId)}/events`, source.signal, (data) => {
    const received = now();
    const event = JSON.parse(data);
    const handler = draw[event.type];
    if (handler) handler(event, received);
    scrollDown();
  });
  refreshHooks();
  refreshSessions();
}

// Server-sent events, read with fetch(): EventSource cannot send the token's header.
// As EventSource does, it reconnects when the stream breaks, asking for the events
// after the last it saw (`Last-Event-ID`), and gives up on a refusal.
async function stream(path, signal, onData) {
  let lastId = null;
  let retry = RETRY_MS;
  while (!signal.aborted) {
    try {
      const headers = authorized({ accept: "text/event-stream" });
      if (lastId !== null) headers["last-event-id"] = lastId;
      const response = await fetch(path, { headers, signal, cache: "no-store" });
      if (!response.ok) {
        showError(await failure(response));
        return;
      }
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      let data = [];
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        const lines = buffer.split("\n");
        buffer = lines.pop();
        for (const line of lines.map((raw) => raw.replace(/\r$/, ""))) {
          if (line === "") {  // an event ends
            if (data.length) onData(data.join("\n"));
            data = [];
            continue;
          }
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "data") data.push(text);
          else if (field === "id") lastId = text;
          else if (field === "retry" && /^\d+$/.test(text)) retry = Number(text);
        }
      }
    } catch (error) {
      if (signal.aborted) return;
    }
    await new Promise((resume) => setTimeout(resume, retry));
  }
}

async function refreshHooks() {
  const list = $("#hooks");
  const hooks = await api(`/api/sessions/${encodeURIComponent(state.session)}/hooks`);
  list.replaceChildren(...hooks.map((hook) => {
    const matcher = hook.matcher ? ` matcher ${JSON.stringify(hook.matcher)}` : "";
    return element("li", "", `${hook.event} ${hook.index}. ${hook.name}${matcher} (onError ${hook.on_error})`);
  }));
  if (!hooks.length) list.append(element("li", "", "no hooks"));
}

async function refreshSessions() {
  const listing = await api("/api/sessions");
  const item = (session, label, action) => {
    const li = element("li", session.id === state.session ? "current" : "");
    const button = element("button", "", label);
    button.type = "button";
    button.title = session.id;
    button.addEventListener("click", action);
    li.append(button);
    return li;
  };
  $("#open-sessions").replaceChildren(...listing.open.map((session) =>
    item(session, session.title ? brief(session.title) : session.id, () => follow(session.id))));
  $("#saved-sessions").replaceChildren(...listing.saved.map((session) =>
    item(session, `${session.created} ${session.title || session.id}`, () => openSession(session.id))));
}

async function openSession(resume) {
  showError("");
  try {
    const opened = await api("/api/sessions", resume ? { resume } : {});
    follow(opened.id);
  } catch (error) {
    showError(error.message);
  }
}

async function send() {
  const box = $("#question");
  const question = box.value;
  if (!question.trim() || state.running || !state.session) return;
  showError("");
  try {
    await api(`/api/sessions/${encodeURIComponent(state.session)}/turns`, { question });
    box.value = "";
  } catch (error) {
    showError(error.message);
  }
}

async function cancelTurn() {
  if (!state.running || !state.session) return;
  await api(`/api/sessions/${encodeURIComponent(state.session)}/cancel`, {});
}

async function answerConsent(answer) {
  const id = state.consentId;
  if (!id) return;
  await api(`/api/sessions/${encodeURIComponent(state.session)}/consent`, { id, answer });
}

document.addEventListener("DOMContentLoaded", async () => {
  $("#ask").addEventListener("submit", (event) => { event.preventDefault(); send(); });
  $("#question").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      send();
    }
  });
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && !$("#consent").open) cancelTurn();
  });
  $("#cancel").addEventListener("click", cancelTurn);
  $("#new-session").addEventListener("click", () => openSession(null));
  for (const button of document.querySelectorAll("#consent-buttons button")) {
    button.addEventListener("click", () => answerConsent(button.dataset.answer));
  }
  // Esc in the dialog denies: the call does not run unless someone allowed it.
  $("#consent").addEventListener("cancel", (event) => {
    event.preventDefault();
    answerConsent("reject_once");
  });
  try {
    const listing = await api("/api/sessions");
    if (listing.open.length) follow(listing.open[listing.open.length - 1].id);
    else await openSession(null);
  } catch (error) {
    showError(error.message);  // opened without the token: the way in is the printed URL
  }
});
