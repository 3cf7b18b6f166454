// The page of pickup serve. The server renders the board (every byte
// escaped by html/template) and sends it over one Server-Sent Events
// stream, which the pages of one browser share: first whole, then each
// change as a patch of the rows that changed (keyed by data-key in lists
// marked data-list; see patch.go). This script only puts the server's
// bytes in place, row by row, keeping the nodes of the rows that did not
// change; filters rows, counts ages, and sends actions. No polling: the
// only timer counts ages on the page, set for the moment the first age
// shown changes (none while the page is hidden), and the server does
// nothing for it.
"use strict";
(function () {
  const main = document.getElementById("main");
  const live = document.getElementById("live");
  const updated = document.getElementById("updated");
  const dropped = document.getElementById("dropped");
  const sel = { owner: document.getElementById("f-owner"), tag: document.getElementById("f-tag"), state: document.getElementById("f-state") };
  const params = new URLSearchParams(location.search);
  const filter = { owner: params.get("owner") || "", tag: params.get("tag") || "", state: params.get("state") || "" };
  let connected = false;
  let lastKnown = "";

  function age(ms) {
    const s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return s + "s";
    if (s < 3600) return Math.floor(s / 60) + "m";
    if (s < 48 * 3600) return Math.floor(s / 3600) + "h";
    return Math.floor(s / 86400) + "d";
  }

  // changes says when (ms since the epoch) the age of since, shown at now,
  // next changes: the next second under a minute, the next minute under an
  // hour, the next hour under 48 hours, then the next day (as age counts).
  function changes(since, now) {
    const ms = now - since;
    if (ms < 1000) return since + 1000; // "0s", also for a time ahead of this clock
    const unit = ms < 60e3 ? 1e3 : ms < 3600e3 ? 60e3 : ms < 48 * 3600e3 ? 3600e3 : 86400e3;
    return since + (Math.floor(ms / unit) + 1) * unit;
  }

  function setOptions(select, values, chosen) {
    const keep = select.value || chosen;
    while (select.options.length > 1) select.remove(1);
    const all = values.slice();
    if (chosen && !all.includes(chosen)) all.push(chosen);
    for (const v of all) {
      const o = document.createElement("option");
      o.value = v; o.textContent = v;
      select.appendChild(o);
    }
    select.value = keep;
  }

  // within: root and the elements in it that match css.
  function within(root, css) {
    const all = [...root.querySelectorAll(css)];
    if (root.matches && root.matches(css)) all.push(root);
    return all;
  }

  function applyFilter(root) {
    root = root || main;
    for (const el of within(root, ".item")) {
      const tags = (el.dataset.tags || "").split(" ");
      const ok = (!filter.owner || el.dataset.owner === filter.owner) &&
        (!filter.state || el.dataset.state === filter.state) &&
        (!filter.tag || tags.includes(filter.tag));
      el.classList.toggle("hidden", !ok);
    }
    for (const el of within(root, ".owner")) {
      el.classList.toggle("hidden", !!filter.owner && el.dataset.owner !== filter.owner);
    }
    for (const el of within(root, ".ev")) {
      el.classList.toggle("hidden", !!filter.owner && el.dataset.owner !== filter.owner);
    }
  }

  // The waiting list shows its first rows that pass the filters, in the
  // order next takes them, and says how many more pass them; the history
  // its newest events, and how many older. "show all" shows every one
  // (?waiting=all, ?history=all: kept in the address as the filters are).
  // The rows beyond are on the page but not laid out: a drain of 400
  // moves the first rows of the list, not 400, and each update's events
  // push the oldest shown out of the history, not 200 down.
  const caps = [
    { list: "waiting-items", more: "waiting-more", param: "waiting", first: 50, beyond: " more", less: "show the first 50" },
    { list: "history-items", more: "history-more", param: "history", first: 50, beyond: " older", less: "show the newest 50" },
  ];
  for (const c of caps) c.all = params.get(c.param) === "all";
  function cap() {
    for (const c of caps) {
      const list = document.getElementById(c.list);
      const more = document.getElementById(c.more);
      if (!list || !more) continue;
      let n = 0;
      for (const el of list.children) {
        if (el.classList.contains("hidden")) continue;
        n++;
        const over = !c.all && n > c.first;
        if (el.classList.contains("over") !== over) el.classList.toggle("over", over);
      }
      const on = n > c.first;
      if (more.hidden === on) more.hidden = !on;
      if (on) {
        label(more.firstElementChild, c.all ? "all " + n + " shown" : "and " + (n - c.first) + c.beyond);
        label(more.lastElementChild, c.all ? c.less : "show all");
      }
    }
  }
  document.addEventListener("click", function (e) {
    const c = caps.find(function (c) { return e.target && e.target.id === c.param + "-all"; });
    if (!c) return;
    c.all = !c.all;
    const p = new URLSearchParams(location.search);
    if (c.all) p.set(c.param, "all"); else p.delete(c.param);
    const q = p.toString();
    history.replaceState(null, "", location.pathname + (q ? "?" + q : ""));
    cap();
  });

  // label writes text in el if it is not there already.
  function label(el, text) {
    if (el.__text !== text) { el.textContent = text; el.__text = text; }
  }

  // ages writes the ages in root that changed, so that a moment that
  // changes no age changes nothing on the page, and returns when the next
  // one changes (Infinity: none will). The server never changes an element
  // in place (a row that changed comes as a new node), so each keeps its
  // time as read, and when its age changes next.
  const times = main.getElementsByTagName("time"); // live: those on the page
  let lastNow = 0;
  function ages(root, now) {
    // This clock went back: every age is counted again.
    const all = now < lastNow;
    lastNow = now;
    let next = Infinity;
    for (const t of root === main ? times : within(root, "time")) {
      if (t.__since === undefined) t.__since = t.hasAttribute("data-since") ? Number(t.dataset.since) || 0 : -1;
      if (t.__since < 0) continue; // a clock time, not an age
      if (all || !(t.__next > now)) {
        label(t, t.__since ? age(now - t.__since) : "?");
        t.__next = t.__since ? changes(t.__since, now) : Infinity;
      }
      if (t.__next < next) next = t.__next;
    }
    return next;
  }

  // The timer: one at a time, set for the next moment an age shown
  // changes; none while the page is hidden (it counts again the moment
  // it is shown).
  let timer = 0, timerAt = Infinity;
  function schedule(at) {
    if (document.hidden || !(at < timerAt)) return;
    clearTimeout(timer);
    timerAt = at;
    // A little after the moment, so that the age has changed by then.
    timer = setTimeout(tick, Math.max(0, at - Date.now()) + 20);
  }

  function tick() {
    clearTimeout(timer);
    timer = 0; timerAt = Infinity;
    const now = Date.now();
    schedule(Math.min(ages(main, now), header(now)));
  }
  document.addEventListener("visibilitychange", function () { if (!document.hidden) tick(); });

  // header says how old the board is, and whether the stream is live; it
  // returns when the age it shows changes.
  function header(now) {
    const board = document.getElementById("board");
    const at = board ? Number(board.dataset.updated) || 0 : 0;
    if (dropped.hidden !== connected) dropped.hidden = connected;
    label(updated, at ? "updated " + age(now - at) + " ago" : "");
    return at ? changes(at, now) : Infinity;
  }

  // known puts the owners and tags the board knows in the filters.
  function known() {
    const board = document.getElementById("board");
    if (board && board.dataset.known !== lastKnown) {
      lastKnown = board.dataset.known;
      try {
        const known = JSON.parse(lastKnown);
        setOptions(sel.owner, known.owners, filter.owner);
        setOptions(sel.tag, known.tags, filter.tag);
      } catch (e) { /* keep the options */ }
    }
  }

  function placed() {
    known();
    applyFilter();
    cap();
    tick();
  }

  for (const k of Object.keys(sel)) {
    sel[k].value = filter[k];
    sel[k].addEventListener("change", function () {
      filter[k] = sel[k].value;
      const p = new URLSearchParams(location.search);
      if (filter[k]) p.set(k, filter[k]); else p.delete(k);
      const q = p.toString();
      history.replaceState(null, "", location.pathname + (q ? "?" + q : ""));
      applyFilter();
      cap();
    });
  }

  // The stream. A browser opens at most 6 connections to one host over
  // HTTP/1.1 and a stream holds one for good, so that a seventh page of
  // the board would never load. So the pages of one browser share one
  // stream: the page that holds the Web Lock "pickup-stream" (the first
  // one open) reads it and hands every rendering to the others over a
  // BroadcastChannel; when that page closes, the lock passes to another,
  // which opens the stream. Without Web Locks (a page that is not a secure
  // context: pickup serve on another host, reached over plain http) each
  // page reads a stream of its own, as it does with ?stream=own.
  // version: the server's version of the board this page shows (0: not
  // known). A patch applies only to the version it was made from; a page
  // that missed one (it opened after it) asks for the whole board
  // (resync). (A hidden page applies them too: the browser lays out and
  // paints nothing for it until it is shown, and every page must show
  // the board as it is the moment it is looked at.)
  let version = Number(main.dataset.version) || 0;
  function show(html, v) {
    main.innerHTML = html; // rendered and escaped by the server
    version = v;
    placed();
  }
  // make turns one row's bytes from the server into its node.
  const maker = document.createElement("template");
  function make(html) {
    maker.innerHTML = html; // rendered and escaped by the server
    const node = maker.content.firstElementChild;
    if (node) maker.content.removeChild(node);
    return node;
  }
  // gone removes node and the blank that the template put after it.
  function gone(node) {
    const next = node.nextSibling;
    if (next && next.nodeType === 3 && !next.data.trim()) next.remove();
    node.remove();
  }
  // morph applies a patch to the board shown; false if it could not (the
  // page is then resynced).
  function morph(p) {
    const board = document.getElementById("board");
    if (!board) return false;
    if (p.root) {
      const shell = make(p.root + "</div>");
      if (!shell) return false;
      for (const a of [...board.attributes]) if (!shell.hasAttribute(a.name)) board.removeAttribute(a.name);
      for (const a of [...shell.attributes]) if (board.getAttribute(a.name) !== a.value) board.setAttribute(a.name, a.value);
    }
    const made = [];
    for (const l of p.lists || []) {
      const list = document.getElementById(l.id);
      if (!list || !list.hasAttribute("data-list")) return false;
      const html = l.html || {};
      // The children in their new order: runs of the old ones kept
      // ([i, n]: n from the i-th) and the new or changed ones, made.
      const old = [...list.children];
      const nodes = [];
      for (const r of l.keys) {
        if (Array.isArray(r)) {
          const i = r[0], n = r[1];
          if (!(i >= 0 && n >= 1 && i + n <= old.length)) return false;
          for (let j = i; j < i + n; j++) nodes.push(old[j]);
          continue;
        }
        const node = Object.prototype.hasOwnProperty.call(html, r) && make(html[r]);
        if (!node) return false;
        made.push(node);
        nodes.push(node);
      }
      const keep = new Set(nodes);
      for (const c of old) if (!keep.has(c)) gone(c);
      // In order: a kept node in its place stays, others move or go in
      // (a row gone from the top moves nothing).
      let at = list.firstElementChild;
      for (const node of nodes) {
        if (node === at) { at = at.nextElementSibling; continue; }
        list.insertBefore(node, at);
      }
    }
    known();
    const now = Date.now();
    let next = header(now);
    for (const node of made) { applyFilter(node); next = Math.min(next, ages(node, now)); }
    cap();
    schedule(next);
    return true;
  }
  // patched applies the patch p, made to go from version base to v.
  function patched(p, v) {
    if (p.base !== version || !morph(p)) { resync(); return; }
    version = v;
  }
  // resync fetches the whole board, once at a time.
  let fetching = false, again = false;
  function resync() {
    if (fetching) { again = true; return; }
    fetching = true; again = false;
    fetch("/board", { credentials: "same-origin", cache: "no-store" })
      .then(function (r) {
        if (!r.ok) throw new Error(r.status);
        const v = Number(r.headers.get("X-Pickup-Version")) || 0;
        return r.text().then(function (html) { if (v >= version) show(html, v); });
      })
      .catch(function () { /* the stream's next rendering brings it */ })
      .finally(function () { fetching = false; if (again) resync(); });
  }
  function setLive(on) {
    connected = on;
    live.textContent = on ? "live" : "disconnected";
    live.className = on ? "live on" : "live off";
    tick();
  }

  function connect(share) {
    const es = new EventSource("/events");
    es.addEventListener("open", function () {
      setLive(true);
      share && share({ live: true });
    });
    es.addEventListener("board", function (e) {
      const v = Number(e.lastEventId) || 0;
      show(e.data, v);
      share && share({ board: e.data, v: v, live: true });
    });
    es.addEventListener("patch", function (e) {
      const v = Number(e.lastEventId) || 0;
      let p;
      try { p = JSON.parse(e.data); } catch (err) { resync(); return; }
      patched(p, v);
      share && share({ patch: p, v: v, live: true });
    });
    es.addEventListener("error", function () {
      setLive(false);
      share && share({ live: false });
      // EventSource retries by itself; one the server closed for good is
      // opened again.
      if (es.readyState === EventSource.CLOSED) { es.close(); setTimeout(function () { connect(share); }, 2000); }
    });
  }

  function stream() {
    const role = document.documentElement.dataset;
    // ?stream=own: this page reads a stream of its own (the load test's
    // many pages stand for as many people, each with a browser).
    if (!(navigator.locks && window.BroadcastChannel) || params.get("stream") === "own") {
      role.stream = "own";
      connect(null);
      return;
    }
    const channel = new BroadcastChannel("pickup-stream");
    let leading = false;
    const share = function (m) { channel.postMessage(m); };
    channel.onmessage = function (e) {
      const m = e.data || {};
      if (leading) {
        // A page that just opened asks whether the stream is live (what
        // it missed of the board it fetches: the next patch says).
        if (m.hello) share({ live: connected });
        return;
      }
      if (typeof m.board === "string") show(m.board, m.v);
      if (m.patch) patched(m.patch, m.v);
      if (typeof m.live === "boolean") setLive(m.live);
    };
    role.stream = "follower";
    channel.postMessage({ hello: true });
    navigator.locks.request("pickup-stream", function () {
      leading = true;
      role.stream = "leader";
      connect(share);
      return new Promise(function () {}); // held until the page goes
    });
  }

  // Actions (pickup serve --actions): each form posts to the server, which
  // checks the token and the origin; the person's name goes with it.
  const by = document.getElementById("by");
  const msg = document.getElementById("actmsg");
  if (by) by.value = localStorage.getItem("pickup-by") || "";
  document.addEventListener("submit", function (e) {
    const form = e.target;
    if (!form.dataset || !form.dataset.action) return;
    e.preventDefault();
    const name = by ? by.value.trim() : "";
    if (!name) { msg.textContent = "give your name first (it is recorded in the history)"; by && by.focus(); return; }
    localStorage.setItem("pickup-by", name);
    const body = new URLSearchParams(new FormData(form));
    body.set("by", name);
    fetch(form.dataset.action, { method: "POST", body: body, credentials: "same-origin" })
      .then(function (r) { return r.text().then(function (t) { msg.textContent = t; }); })
      .catch(function (err) { msg.textContent = "pickup serve did not answer: " + err; });
  });

  placed();
  stream();
})();
