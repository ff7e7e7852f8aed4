/* The judging page (templates/annotation/judge.html, annotation/views/judging.py).
 *
 * One key grades the pair and moves on; the grade is saved in the background. Every
 * submission goes through an outbox kept in localStorage, so a grade that fails to save is
 * retried with backoff (and survives a reload) instead of being lost; each carries a
 * request_id, which the server uses to apply a retried submission only once. Pairs are
 * fetched as server-rendered fragments and swapped in; the next one is prefetched.
 * The time sent with a grade counts only while the tab is visible.
 */
(() => {
  "use strict";

  const configNode = document.getElementById("judge-config");
  if (!configNode) return;
  const config = JSON.parse(configNode.textContent);
  if (!config.queue.length) return;

  const RETRY_BASE_MS = 800;
  const RETRY_MAX_MS = 30000;
  const UNDO_DEPTH = 200;
  // The prefix keeps the product's former name (issue 15) so that grades a judge's browser
  // holds unsent (the outbox) across the upgrade are still sent; nobody sees it.
  const storageKey = (name) => `relevance-studio:judge:${config.campaign}:${config.user}:${name}`;

  // --- the judge's queue and what we know of each assignment ----------------------------------
  const queue = config.queue.map(([id, topic, status]) => ({ id, topic, status }));
  const indexOf = new Map(queue.map((item, index) => [item.id, index]));
  const topicOrder = [...new Set(queue.map((item) => item.topic))];
  const scaleByGrade = new Map(config.scale.map((item) => [item.grade, item]));
  // state: {status, grade, skipReason, note}; version bumps on every local change so a
  // fragment fetched before the change cannot overwrite it.
  const state = new Map(
    queue.map((item) => [item.id, { status: item.status, grade: null, skipReason: "", note: "" }]),
  );
  const version = new Map();
  const bump = (id) => version.set(id, (version.get(id) || 0) + 1);

  const slots = {
    topic: document.getElementById("topic-slot"),
    document: document.getElementById("document-slot"),
  };
  let current = queue.length; // index in the queue; queue.length means "past the end"
  // The campaign's stop rule has paused it: open pairs show the paused card instead. Set by
  // the page, and by any saved grade's answer (the server reads a flag; nothing is computed).
  let paused = Boolean(config.paused);
  // Below this width the page is one column: the document first, the grades in a bar fixed at
  // the bottom (static/css/judge.css uses the same breakpoint), the topic's details folded.
  const narrow = window.matchMedia("(max-width: 1023px)");

  // --- small helpers --------------------------------------------------------------------------
  // localStorage, or memory once localStorage fails (disabled, full): the outbox then still
  // holds every unsaved grade for as long as the page is open, and the judge is told.
  const storage = {
    memory: new Map(),
    broken: false,
    read(name, fallback) {
      if (!this.broken) {
        try {
          const raw = window.localStorage.getItem(storageKey(name));
          return raw === null ? fallback : JSON.parse(raw);
        } catch {
          this.fail();
        }
      }
      return this.memory.has(name) ? structuredClone(this.memory.get(name)) : fallback;
    },
    write(name, value) {
      this.memory.set(name, structuredClone(value));
      if (this.broken) return;
      try {
        window.localStorage.setItem(storageKey(name), JSON.stringify(value));
      } catch {
        this.fail();
      }
    },
    fail() {
      if (this.broken) return;
      this.broken = true;
      toast("This browser will not store unsaved grades: keep this tab open until they are saved.", "error");
    },
  };

  const newId = () =>
    window.crypto && window.crypto.randomUUID
      ? window.crypto.randomUUID()
      : "10000000-1000-4000-8000-100000000000".replace(/[018]/g, (c) =>
          (c ^ (window.crypto.getRandomValues(new Uint8Array(1))[0] & (15 >> (c / 4)))).toString(16),
        );

  function csrfToken() {
    const cookie = document.cookie.split("; ").find((part) => part.startsWith("csrftoken="));
    if (cookie) return decodeURIComponent(cookie.slice("csrftoken=".length));
    try {
      return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
    } catch {
      return "";
    }
  }

  let toastTimer = null;
  function toast(message, kind = "info") {
    const node = document.getElementById("judge-toast");
    node.textContent = message;
    node.dataset.kind = kind;
    node.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => (node.hidden = true), kind === "error" ? 8000 : 2500);
  }

  // --- active time ------------------------------------------------------------------------------
  // Seconds spent on each assignment while the tab was visible, not yet sent with a grade.
  const timer = {
    id: null,
    since: null,
    spent: new Map(),
    running() {
      return document.visibilityState === "visible";
    },
    pause() {
      if (this.id !== null && this.since !== null) {
        const seconds = (performance.now() - this.since) / 1000;
        this.spent.set(this.id, (this.spent.get(this.id) || 0) + seconds);
      }
      this.since = null;
    },
    resume() {
      if (this.id !== null && this.since === null && this.running()) this.since = performance.now();
    },
    watch(id) {
      this.pause();
      this.id = id;
      this.resume();
    },
    take(id) {
      this.pause();
      const seconds = this.spent.get(id) || 0;
      this.spent.delete(id);
      this.resume();
      return Math.round(seconds * 1000) / 1000;
    },
  };
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") {
      timer.resume();
      flush();
    } else {
      timer.pause();
    }
  });

  // --- the outbox -------------------------------------------------------------------------------
  // Entries: {uid, kind: grade|skip|undo|note, id, body, failed?, error?}. Kept in localStorage
  // and sent strictly in order (a grade then its undo must reach the server in that order).
  const outbox = {
    all() {
      return storage.read("outbox", []);
    },
    add(entry) {
      const items = this.all();
      items.push(entry);
      storage.write("outbox", items);
    },
    remove(uid) {
      storage.write(
        "outbox",
        this.all().filter((item) => item.uid !== uid),
      );
    },
    mark(uid, patch) {
      storage.write(
        "outbox",
        this.all().map((item) => (item.uid === uid ? { ...item, ...patch } : item)),
      );
    },
    pendingFor(id) {
      return this.all().filter((item) => item.id === id);
    },
  };
  let flushing = false;
  let failures = 0;
  let retryTimer = null;
  let retryAt = null;

  function submit(kind, id, body) {
    const entry = { uid: newId(), kind, id, body: { ...body } };
    if (kind === "grade" || kind === "skip") entry.body.request_id = entry.uid;
    outbox.add(entry);
    renderSaveState();
    flush();
  }

  async function send(entry) {
    try {
      const response = await fetch(`${config.base_url}${entry.id}/${entry.kind}/`, {
        method: "POST",
        body: new URLSearchParams(entry.body),
        headers: { "X-CSRFToken": csrfToken(), Accept: "application/json" },
        credentials: "same-origin",
      });
      const isJson = (response.headers.get("content-type") || "").includes("application/json");
      const data = isJson ? await response.json() : null;
      if (response.ok && data && !data.error) return { ok: true, data };
      // A refusal the server explains will not change on retry: drop it and say why.
      if (data && data.error && [400, 403, 404].includes(response.status)) {
        return { refused: true, error: data.error };
      }
      if (response.status === 401) return { error: data ? data.error : "Log in again." };
      return { error: `the server answered ${response.status}` };
    } catch {
      return { error: "no connection" };
    }
  }

  async function drain() {
    for (;;) {
      const head = outbox.all()[0];
      if (!head) {
        failures = 0;
        return;
      }
      renderSaveState();
      const result = await send(head);
      if (result.ok) {
        outbox.remove(head.uid);
        failures = 0;
        settle(head, result.data);
        continue;
      }
      if (result.refused) {
        outbox.remove(head.uid);
        refused(head, result.error);
        continue;
      }
      failures += 1;
      outbox.mark(head.uid, { failed: true, error: result.error });
      const delay = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (failures - 1)) * (0.85 + Math.random() * 0.3);
      retryAt = Date.now() + delay;
      clearTimeout(retryTimer);
      retryTimer = setTimeout(flush, delay);
      return;
    }
  }

  async function flush() {
    if (flushing) return;
    flushing = true;
    clearTimeout(retryTimer);
    retryAt = null;
    try {
      // One tab at a time drains the shared outbox, so two open tabs never send it twice.
      if (navigator.locks) {
        await navigator.locks.request(storageKey("outbox-lock"), drain);
      } else {
        await drain();
      }
    } finally {
      flushing = false;
      renderSaveState();
      renderPair();
    }
  }
  window.addEventListener("online", flush);
  window.addEventListener("storage", (event) => {
    if (event.key === storageKey("outbox")) renderSaveState();
  });
  setInterval(() => retryAt && renderSaveState(), 1000);

  function settle(entry, data) {
    // The server's word is final unless more changes to the pair are still queued behind it.
    if (outbox.pendingFor(entry.id).length) return;
    const known = state.get(entry.id);
    if (!known) return;
    if (data.paused && !paused) {
      paused = true;
      // The pair now on screen, if it is an open one, gives way to the paused card.
      const id = currentId();
      if (id !== null && state.get(id).status === "open") show(current);
    }
    Object.assign(known, {
      status: data.status,
      grade: data.grade,
      skipReason: data.skip_reason || "",
      note: data.note || "",
    });
    renderProgress();
  }

  function refused(entry, error) {
    toast(`Not saved: ${error}`, "error");
    // What we showed was wrong: forget it and ask the server what the pair really is.
    bump(entry.id);
    fragments.delete(entry.id);
    load(entry.id)
      .then(() => {
        renderProgress();
        if (queue[current] && queue[current].id === entry.id) show(current);
      })
      .catch(() => {});
  }

  // --- undo history and note drafts (both survive a reload) ----------------------------------------
  const undoStack = storage.read("undo", []);
  const drafts = storage.read("drafts", {});
  const saveUndo = () => storage.write("undo", undoStack.slice(-UNDO_DEPTH));
  const saveDrafts = () => storage.write("drafts", drafts);

  // Replay what is still queued on top of what the page says, so a reload shows the judge's
  // latest intentions even before the server has them.
  for (const entry of outbox.all()) applyLocally(entry.kind, entry.id, entry.body);

  function applyLocally(kind, id, body) {
    const known = state.get(id);
    if (!known) return;
    bump(id);
    if (kind === "grade") Object.assign(known, { status: "done", grade: Number(body.grade), skipReason: "" });
    if (kind === "skip") Object.assign(known, { status: "skipped", grade: null, skipReason: body.reason });
    if (kind === "undo") Object.assign(known, { status: "open", grade: null, skipReason: "", note: "" });
    if (kind === "note") known.note = body.note;
  }

  // --- fragments ------------------------------------------------------------------------------
  const fragments = new Map(); // id -> Promise<DocumentFragment-ready HTML string>

  function load(id) {
    if (fragments.has(id)) return fragments.get(id);
    const seen = version.get(id) || 0;
    const request = fetch(`${config.base_url}${id}/`, {
      credentials: "same-origin",
      headers: { Accept: "text/html" },
    })
      .then((response) => {
        if (!response.ok || response.redirected) throw new Error(`status ${response.status}`);
        return response.text();
      })
      .then((html) => {
        const template = document.createElement("template");
        template.innerHTML = html;
        adopt(template.content.querySelector("[data-part=document]"), seen);
        return html;
      })
      .catch((error) => {
        fragments.delete(id);
        throw error;
      });
    fragments.set(id, request);
    return request;
  }

  // Take the server's view of the judge's own judgment from a fragment, unless the judge has
  // changed the pair here since the fragment was asked for.
  function adopt(article, seenVersion) {
    if (!article) return;
    const id = Number(article.dataset.assignment);
    const known = state.get(id);
    if (!known || (version.get(id) || 0) !== seenVersion || outbox.pendingFor(id).length) return;
    Object.assign(known, {
      status: article.dataset.status,
      grade: article.dataset.grade === "" ? null : Number(article.dataset.grade),
      skipReason: article.dataset.skipReason || "",
      note: article.dataset.note || "",
    });
  }

  function prefetch() {
    for (const index of [current + 1, current - 1, current + 2]) {
      if (index >= 0 && index < queue.length) load(queue[index].id).catch(() => {});
    }
  }

  // --- showing a pair ---------------------------------------------------------------------------
  let showToken = 0;

  async function show(index) {
    index = Math.max(0, Math.min(queue.length, index));
    const token = ++showToken;
    current = index;
    if (index === queue.length) {
      timer.watch(null);
      const template = document.getElementById("finished-template").content;
      slots.topic.replaceChildren(template.querySelector("[data-part=topic]").cloneNode(true));
      slots.document.replaceChildren(template.querySelector("[data-part=document]").cloneNode(true));
      renderAll();
      return;
    }
    const id = queue[index].id;
    if (paused && state.get(id).status === "open") {
      timer.watch(null);
      const template = document.getElementById("paused-template").content;
      slots.topic.replaceChildren(template.querySelector("[data-part=topic]").cloneNode(true));
      slots.document.replaceChildren(template.querySelector("[data-part=document]").cloneNode(true));
      slots.document.removeAttribute("aria-busy");
      renderAll();
      return;
    }
    timer.watch(id);
    const cached = fragments.has(id);
    if (!cached) slots.document.setAttribute("aria-busy", "true");
    renderAll(); // progress and buttons move at once, even before the fragment arrives
    let html;
    try {
      html = await load(id);
    } catch {
      if (token === showToken) {
        slots.document.removeAttribute("aria-busy");
        slots.document.replaceChildren(document.getElementById("load-error-template").content.cloneNode(true));
        renderAll();
      }
      return;
    }
    if (token !== showToken) return; // the judge has moved on meanwhile
    const template = document.createElement("template");
    template.innerHTML = html;
    const topic = template.content.querySelector("[data-part=topic]");
    const before = slots.topic.querySelector("[data-part=topic]");
    if (before && before.dataset.topic && before.dataset.topic !== topic.dataset.topic) {
      // A new topic: draw the eye to the query, which the judge must read afresh.
      topic.classList.add("topic-new");
      toast(`Now judging topic ${topic.querySelector(".qid").textContent}: ${topic.querySelector(".query").textContent}`);
    }
    foldTopic(topic, before);
    slots.topic.replaceChildren(topic);
    slots.document.replaceChildren(template.content.querySelector("[data-part=document]"));
    slots.document.removeAttribute("aria-busy");
    renderAll();
    toTop();
    prefetch();
  }

  // The next pair starts at its top: scrolled back up to the topic and document if the judge
  // had read down the last one (at laptop width the same; the side column is sticky).
  function toTop() {
    const top = document.querySelector(".judge-grid").getBoundingClientRect().top;
    if (top < 0) window.scrollBy({ top: top - 12, behavior: "instant" });
  }

  // A topic's description and narrative: open at laptop width; on a phone folded, so the
  // document comes first, and kept as the judge left them while the topic stays the same.
  function foldTopic(topic, before) {
    const more = topic.querySelector(".topic-more");
    if (!more) return;
    const previous = before && before.dataset.topic === topic.dataset.topic && before.querySelector(".topic-more");
    more.open = previous ? previous.open : !narrow.matches;
  }
  narrow.addEventListener("change", () => {
    for (const more of document.querySelectorAll(".topic-more")) more.open = !narrow.matches;
  });


  // --- drawing the state ------------------------------------------------------------------------
  function saveStateOf(id) {
    const pending = outbox.pendingFor(id);
    if (!pending.length) return "saved";
    return pending.some((item) => item.failed) ? "pending" : "saving";
  }

  function retryText() {
    if (!retryAt) return "retrying";
    const seconds = Math.max(0, Math.ceil((retryAt - Date.now()) / 1000));
    return seconds ? `retrying in ${seconds} s` : "retrying";
  }

  function renderSaveState() {
    const box = document.getElementById("save-state");
    if (!box) return;
    const items = outbox.all();
    const failed = items.filter((item) => item.failed);
    let mode = "saved";
    let text = "All changes saved";
    if (failed.length) {
      mode = "pending";
      const last = failed[failed.length - 1].error;
      text = `${items.length} pending — ${retryText()}${last ? ` (${last})` : ""}`;
    } else if (items.length) {
      mode = "saving";
      text = items.length === 1 ? "Saving…" : `Saving ${items.length} changes…`;
    }
    box.dataset.state = mode;
    document.getElementById("save-text").textContent = text;
    box.querySelector("[data-action=retry]").hidden = mode !== "pending";
    renderPairStatus();
  }

  function renderPairStatus() {
    const chip = slots.document.querySelector("[data-slot=status]");
    const id = currentId();
    if (!chip || id === null || displayedId() !== id) return; // still showing the last pair
    const known = state.get(id);
    chip.dataset.state = known.status;
    chip.className = "pair-status";
    chip.replaceChildren();
    if (known.status === "done") {
      const item = scaleByGrade.get(known.grade);
      chip.classList.add(`tone-${item ? item.tone : 0}`);
      chip.append(`Your grade: ${known.grade}${item ? ` · ${item.label}` : ""}`);
    } else if (known.status === "skipped") {
      chip.append(`Skipped: ${known.skipReason}`);
    } else {
      chip.append("Not graded yet");
    }
    if (known.status !== "open" || outbox.pendingFor(id).length) {
      const save = document.createElement("span");
      const mode = saveStateOf(id);
      save.className = mode;
      save.dataset.save = mode;
      save.textContent = { saved: "· Saved", saving: "· Saving…", pending: `· Pending — ${retryText()}` }[mode];
      chip.append(" ", save);
    }
  }

  function renderPair() {
    const id = queue[current] ? queue[current].id : null;
    const known = id === null ? null : state.get(id);
    const shown = id !== null && displayedId() === id;
    for (const button of document.querySelectorAll(".grade")) {
      const pressed = Boolean(known && known.status === "done" && known.grade === Number(button.dataset.grade));
      button.setAttribute("aria-pressed", String(pressed));
      button.disabled = !shown;
    }
    const position = slots.document.querySelector("[data-slot=position]");
    if (position && shown) {
      const inTopic = queue.filter((item) => item.topic === queue[current].topic);
      const at = inTopic.findIndex((item) => item.id === id) + 1;
      position.textContent = `Document ${at} of ${inTopic.length}`;
    }
    const note = slots.document.querySelector("[data-slot=note]");
    if (note && shown) {
      const text = known.note || drafts[id] || "";
      note.hidden = !text;
      note.querySelector("[data-slot=note-text]").textContent =
        known.note || !drafts[id] ? text : `${text} (kept until you grade or skip)`;
    }
    const buttons = (action) => document.querySelector(`.pair-actions [data-action=${action}]`);
    buttons("prev").disabled = current === 0;
    buttons("next").disabled = current >= queue.length;
    buttons("skip").disabled = !shown;
    buttons("note").disabled = !shown;
    buttons("undo").disabled = !undoTarget();
    renderPairStatus();
  }

  function renderProgress() {
    const count = (items) => items.filter((item) => state.get(item.id).status !== "open").length;
    const overallDone = count(queue);
    const topicId = queue[Math.min(current, queue.length - 1)].topic;
    const inTopic = queue.filter((item) => item.topic === topicId);
    const topicDone = count(inTopic);
    const set = (prefix, done, total) => {
      const bar = document.getElementById(`${prefix}-progress`);
      bar.max = Math.max(total, 1);
      bar.value = done;
      document.getElementById(`${prefix}-count`).textContent = `${done} / ${total}`;
    };
    set("topic", topicDone, inTopic.length);
    set("overall", overallDone, queue.length);
    const topicLabel = document.querySelector(".meter-label span");
    topicLabel.textContent =
      current < queue.length
        ? `Topic ${topicOrder.indexOf(topicId) + 1} of ${topicOrder.length}`
        : "Last topic";
    if (current === queue.length) renderFinished(overallDone);
  }

  function renderFinished(done) {
    const open = queue.length - done;
    const title = slots.document.querySelector("[data-slot=finished-title]");
    const detail = slots.document.querySelector("[data-slot=finished-detail]");
    const firstOpen = slots.document.querySelector("[data-action=first-open]");
    if (!title) return;
    const waiting = config.waiting
      ? ` ${document.getElementById("waiting-note").textContent}`
      : "";
    if (open) {
      title.textContent = `${open} pair${open === 1 ? "" : "s"} still open`;
      detail.textContent = "You reached the end of your list, but some pairs have neither a grade nor a skip." + waiting;
    } else {
      title.textContent = config.waiting ? "You have been through every pair you can grade now" : "You have been through every pair";
      detail.textContent = `All ${queue.length} pairs ${config.waiting ? "you can grade" : "assigned to you"} have a grade or a skip. You can still revise your own grades: go back with ←.${waiting}`;
    }
    firstOpen.hidden = !open;
  }

  function renderAll() {
    renderProgress();
    renderPair();
    renderSaveState();
  }

  // --- actions ---------------------------------------------------------------------------------
  function currentId() {
    return current < queue.length ? queue[current].id : null;
  }

  // The pair whose document is on screen. Grading waits until it is the current pair, so a
  // key pressed while the next document is still loading never grades a document unseen.
  function displayedId() {
    const article = slots.document.querySelector("[data-part=document][data-assignment]");
    return article ? Number(article.dataset.assignment) : null;
  }

  function pushUndo(id) {
    const at = undoStack.lastIndexOf(id);
    if (at >= 0) undoStack.splice(at, 1);
    undoStack.push(id);
    saveUndo();
  }

  function recordGrade(grade) {
    const id = currentId();
    if (id === null || slots.document.querySelector("[data-paused]")) return;
    if (displayedId() !== id) {
      toast("The document is still loading; grade it once you see it.");
      return;
    }
    const button = document.querySelector(`.grade[data-grade="${grade}"]`);
    if (button) {
      button.classList.remove("just-pressed");
      void button.offsetWidth; // restart the flash animation
      button.classList.add("just-pressed");
      button.addEventListener("animationend", () => button.classList.remove("just-pressed"), { once: true });
    }
    const body = { grade: String(grade), seconds: String(timer.take(id)) };
    applyLocally("grade", id, body);
    submit("grade", id, body);
    sendDraft(id);
    pushUndo(id);
    show(current + 1);
  }

  function recordSkip(reason) {
    const id = currentId();
    if (id === null || displayedId() !== id) return;
    const body = { reason, seconds: String(timer.take(id)) };
    applyLocally("skip", id, body);
    submit("skip", id, body);
    sendDraft(id);
    pushUndo(id);
    show(current + 1);
  }

  function sendDraft(id) {
    if (drafts[id] === undefined) return;
    const body = { note: drafts[id] };
    delete drafts[id];
    saveDrafts();
    applyLocally("note", id, body);
    submit("note", id, body);
  }

  function undoTarget() {
    for (let i = undoStack.length - 1; i >= 0; i -= 1) {
      const known = state.get(undoStack[i]);
      if (known && known.status !== "open") return undoStack[i];
    }
    const id = currentId();
    return id !== null && state.get(id).status !== "open" ? id : null;
  }

  function undo() {
    const id = undoTarget();
    if (id === null) {
      toast("Nothing to undo.");
      return;
    }
    const at = undoStack.lastIndexOf(id);
    if (at >= 0) undoStack.splice(at, 1);
    saveUndo();
    applyLocally("undo", id, {});
    submit("undo", id, {});
    toast("Undone: the pair is open again.");
    show(indexOf.get(id));
  }

  function saveNote(text) {
    const id = currentId();
    if (id === null) return;
    const note = text.trim();
    if (state.get(id).status === "open") {
      // The server keeps notes on judgments; hold it until the judge grades or skips the pair.
      if (note) drafts[id] = note;
      else delete drafts[id];
      saveDrafts();
      if (note) toast("Note kept: it is saved with your grade.");
    } else {
      if (note === state.get(id).note) return;
      applyLocally("note", id, { note });
      submit("note", id, { note });
    }
    renderPair();
  }

  // --- dialogs ---------------------------------------------------------------------------------
  const dialogs = {
    skip: document.getElementById("skip-dialog"),
    note: document.getElementById("note-dialog"),
    help: document.getElementById("help-dialog"),
  };

  function openSkip() {
    if (currentId() === null || displayedId() !== currentId()) return;
    const input = document.getElementById("skip-reason");
    const known = state.get(currentId());
    input.value = known.skipReason || config.default_skip_reason;
    dialogs.skip.showModal();
    input.select();
  }

  function openNote() {
    const id = currentId();
    if (id === null || displayedId() !== id) return;
    const area = document.getElementById("note-text");
    area.value = state.get(id).note || drafts[id] || "";
    document.getElementById("note-hint").textContent =
      state.get(id).status === "open"
        ? "The note is saved when you grade or skip the pair. Ctrl+Enter saves."
        : "Ctrl+Enter saves. An empty note removes it.";
    dialogs.note.showModal();
    area.focus();
  }

  function release(dialog) {
    if (dialog.contains(document.activeElement)) document.activeElement.blur();
  }

  function closeDialog(dialog) {
    release(dialog);
    dialog.close();
  }

  document.getElementById("skip-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const reason = document.getElementById("skip-reason").value.trim();
    if (!reason) return;
    closeDialog(dialogs.skip);
    recordSkip(reason);
  });
  document.getElementById("note-form").addEventListener("submit", (event) => {
    event.preventDefault();
    closeDialog(dialogs.note);
    saveNote(document.getElementById("note-text").value);
  });
  document.getElementById("note-text").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      document.getElementById("note-form").requestSubmit();
    }
  });
  for (const dialog of Object.values(dialogs)) {
    // Closing does not always hand focus back at once; an input of a closed dialog keeping it
    // would swallow the next shortcut.
    dialog.addEventListener("close", () => release(dialog));
    dialog.addEventListener("click", (event) => {
      // A click on the backdrop (the dialog itself, outside its article) closes it.
      if (event.target === dialog || event.target.closest("[data-close]")) closeDialog(dialog);
    });
  }
  for (const chip of document.querySelectorAll(".chip[data-reason]")) {
    chip.addEventListener("click", () => {
      document.getElementById("skip-reason").value = chip.dataset.reason;
      document.getElementById("skip-form").requestSubmit();
    });
  }

  // --- buttons and keys ------------------------------------------------------------------------
  const actions = {
    grade: (button) => recordGrade(Number(button.dataset.grade)),
    next: () => show(current + 1),
    prev: () => show(current - 1),
    undo,
    skip: openSkip,
    note: openNote,
    help: () => dialogs.help.showModal(),
    retry: () => flush(),
    restart: () => show(0),
    "reload-pair": () => show(current),
    "first-open": () => {
      const first = queue.findIndex((item) => state.get(item.id).status === "open");
      show(first < 0 ? 0 : first);
    },
  };

  document.addEventListener("click", (event) => {
    const button = event.target.closest("[data-action]");
    if (!button || !document.getElementById("judge").contains(button) || button.disabled) return;
    const action = actions[button.dataset.action];
    if (!action) return;
    event.preventDefault();
    action(button);
    // Keep keyboard focus off the button so Space/Enter do not repeat the action.
    if (button.dataset.action !== "help") button.blur();
  });

  function typing(target) {
    if (!target.closest || target.closest("dialog:not([open])")) return false;
    return Boolean(target.closest('input, textarea, select, [contenteditable=""], [contenteditable="true"], dialog'));
  }

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
    if (typing(event.target) || document.querySelector("dialog[open]")) return;
    const digit = /^(?:Digit|Numpad)([0-9])$/.exec(event.code);
    if (digit) {
      const grade = Number(digit[1]);
      if (config.grades.includes(grade)) {
        event.preventDefault();
        if (!event.repeat) recordGrade(grade);
      }
      return;
    }
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    const byKey = {
      ArrowRight: actions.next,
      j: actions.next,
      ArrowLeft: actions.prev,
      k: actions.prev,
      u: actions.undo,
      s: actions.skip,
      n: actions.note,
      "?": actions.help,
    };
    if (!byKey[key]) return;
    event.preventDefault();
    if (event.repeat && (key === "u" || key === "s" || key === "n")) return;
    byKey[key]();
  });

  // --- start -----------------------------------------------------------------------------------
  function start() {
    const inlineTopic = slots.topic.querySelector("[data-part=topic]");
    if (inlineTopic) foldTopic(inlineTopic, null);
    const inline = slots.document.querySelector("[data-part=document][data-assignment]");
    if (inline) {
      const id = Number(inline.dataset.assignment);
      adopt(inline, version.get(id) || 0);
      fragments.set(id, Promise.resolve(`${slots.topic.innerHTML}${slots.document.innerHTML}`));
    }
    let index = config.start === null ? queue.length : indexOf.get(config.start);
    // Grades still in the outbox from before a reload: resume at the first pair that is open
    // once they are counted.
    if (index < queue.length && state.get(queue[index].id).status !== "open") {
      const open = queue.findIndex((item) => state.get(item.id).status === "open");
      index = open < 0 ? queue.length : open;
    }
    current = index;
    if (inline && index < queue.length && queue[index].id === Number(inline.dataset.assignment)) {
      timer.watch(queue[index].id);
      renderAll();
      prefetch();
    } else {
      show(index);
    }
    flush();
  }

  start();
})();
