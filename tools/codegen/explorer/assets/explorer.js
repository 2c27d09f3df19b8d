// IR explorer: the page's behaviour. Data: the JSON in #explorer-data (explain.json, the call
// IR's calls, the plans, X-ray rows); graphs: the SVG Graphviz laid out, one per phase. No
// network, no libraries.
(function () {
  "use strict";

  const DATA = JSON.parse(document.getElementById("explorer-data").textContent);
  const EX = DATA.explain;
  const ALIGN = 64;

  // ---- small DOM helpers -------------------------------------------------------------------
  function h(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "onclick") e.addEventListener("click", v);
      else if (k === "text") e.textContent = v;
      else e.setAttribute(k, v === true ? "" : v);
    }
    for (const c of children.flat()) {
      if (c === null || c === undefined) continue;
      e.appendChild(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
    }
    return e;
  }
  function svg(tag, attrs, ...children) {
    const e = document.createElementNS("http://www.w3.org/2000/svg", tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    for (const c of children) e.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    return e;
  }
  function bytes(n) {
    if (typeof n !== "number") return String(n);
    if (n >= 1 << 20) return (n / (1 << 20)).toFixed(2) + " MiB";
    if (n >= 1 << 10) return (n / (1 << 10)).toFixed(1) + " KiB";
    return n + " B";
  }
  function sci(x) { return typeof x === "number" ? x.toExponential(2) : ""; }
  function table(head, rows, attrs) {
    return h("table", attrs || {}, h("thead", {}, h("tr", {}, head.map((c) => h("th", {text: c})))),
      h("tbody", {}, rows));
  }

  // ---- indexes -----------------------------------------------------------------------------
  const PHASES = {};
  for (const p of EX.phases) {
    const nodes = new Map(p.nodes.map((n) => [n.name, n]));
    const edges = new Map(p.edges.map((e) => [e.id, e]));
    const byValue = new Map();
    for (const e of p.edges) {
      if (!byValue.has(e.value)) byValue.set(e.value, []);
      byValue.get(e.value).push(e);
    }
    const root = document.getElementById("graph-" + p.phase);
    const elements = new Map();
    for (const g of root.querySelectorAll("g.node, g.edge")) elements.set(g.id, g);
    PHASES[p.phase] = {data: p, nodes, edges, byValue, root, elements, calls: (DATA.calls || {})[p.phase] || {},
                       plan: (DATA.plans || {})[p.phase] || null, scale: 0};
  }
  const phaseNames = EX.phases.map((p) => p.phase);
  const XRAY = DATA.xray;
  const xrayByValue = {};  // phase -> value -> rows
  if (XRAY) {
    for (const r of XRAY.rows) {
      if (!r.value) continue;
      const m = (xrayByValue[r.phase] = xrayByValue[r.phase] || {});
      (m[r.value] = m[r.value] || []).push(r);
    }
  }

  const state = {phase: null, view: "graph", selected: null, matches: []};

  // ---- header: phases, views, search ---------------------------------------------------------
  function showPhase(name) {
    state.phase = name;
    for (const [p, info] of Object.entries(PHASES)) {
      info.root.hidden = p !== name;
      const t = document.getElementById("memory-" + p);
      if (t) t.hidden = p !== name;
    }
    for (const b of document.querySelectorAll("#phase-tabs button")) b.classList.toggle("active", b.dataset.phase === name);
    fitOnce(PHASES[name]);
    applySearchHighlight();
  }
  function showView(view) {
    state.view = view;
    for (const v of ["graph", "memory", "xray"]) document.getElementById("view-" + v).hidden = v !== view;
    for (const b of document.querySelectorAll("#view-tabs button")) b.classList.toggle("active", b.dataset.view === view);
    if (view === "graph") fitOnce(PHASES[state.phase]);
  }

  function buildHeader() {
    const tabs = document.getElementById("phase-tabs");
    for (const p of EX.phases) {
      tabs.appendChild(h("button", {"data-phase": p.phase, class: "status-" + p.status.replace(" ", "-"),
                                     title: p.status, onclick: () => showPhase(p.phase)},
        p.phase + (p.status === "compiled" ? "" : " (" + p.status + ")")));
    }
    for (const b of document.querySelectorAll("#view-tabs button")) b.addEventListener("click", () => showView(b.dataset.view));
    const input = document.getElementById("search");
    let timer = null;
    input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => search(input.value), 80); });
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && state.matches.length) { e.preventDefault(); go(state.matches[0].phase, state.matches[0].name); }
      if (e.key === "Escape") { input.value = ""; search(""); }
    });
    document.addEventListener("click", (e) => {
      if (!e.target.closest(".search-box")) document.getElementById("search-results").hidden = true;
    });
    input.addEventListener("focus", () => { if (input.value.trim()) document.getElementById("search-results").hidden = false; });
    document.getElementById("zoom-in").addEventListener("click", () => zoom(1.25));
    document.getElementById("zoom-out").addEventListener("click", () => zoom(0.8));
    document.getElementById("zoom-fit").addEventListener("click", () => fit(PHASES[state.phase]));
  }

  // ---- search: op id or kernel name --------------------------------------------------------
  function search(text) {
    const q = text.trim().toLowerCase();
    const list = document.getElementById("search-results");
    list.replaceChildren();
    state.matches = [];
    if (q) {
      for (const p of phaseNames) {
        for (const n of PHASES[p].data.nodes) {
          const name = n.name.toLowerCase(), kernel = (n.kernel || "").toLowerCase();
          if (name.includes(q) || kernel.includes(q)) {
            state.matches.push({phase: p, name: n.name, kernel: n.kernel, rank: name === q ? 0 : name.startsWith(q) ? 1 : 2});
          }
        }
      }
      state.matches.sort((a, b) => a.rank - b.rank || phaseNames.indexOf(a.phase) - phaseNames.indexOf(b.phase));
      const shown = state.matches.slice(0, 200);
      for (const m of shown) {
        list.appendChild(h("li", {"data-phase": m.phase, "data-node": m.name, onclick: () => go(m.phase, m.name)},
          h("span", {class: "phase", text: m.phase}), h("span", {class: "name", text: m.name}),
          h("span", {class: "kernel", text: m.kernel || ""})));
      }
      document.getElementById("search-count").textContent =
        state.matches.length + " match" + (state.matches.length === 1 ? "" : "es") +
        (state.matches.length > shown.length ? " (first " + shown.length + " listed)" : "");
    } else {
      document.getElementById("search-count").textContent = "";
    }
    list.hidden = !q;
    applySearchHighlight();
  }
  function applySearchHighlight() {
    for (const e of document.querySelectorAll("g.match")) e.classList.remove("match");
    for (const m of state.matches) {
      if (m.phase !== state.phase) continue;
      const g = PHASES[m.phase].elements.get("node/" + m.phase + "/" + m.name);
      if (g) g.classList.add("match");
    }
  }
  function go(phase, name) {
    document.getElementById("search-results").hidden = true;
    if (state.view !== "graph") showView("graph");
    if (state.phase !== phase) showPhase(phase);
    selectNode(phase, name, true);
  }

  // ---- zoom --------------------------------------------------------------------------------
  function setScale(info, s) {
    const el = info.root.querySelector("svg");
    if (!el) return;
    const vb = el.viewBox.baseVal;
    info.scale = s;
    el.style.width = (vb.width * s) + "pt";
    el.style.height = (vb.height * s) + "pt";
  }
  function fit(info) {
    const el = info.root.querySelector("svg");
    const box = document.getElementById("view-graph");
    if (!el || !box.clientWidth) return;
    const widthPt = box.clientWidth * 0.75 - 24;  // px -> pt
    setScale(info, Math.min(1, Math.max(0.15, widthPt / el.viewBox.baseVal.width)));
  }
  // First view: fit the width, but keep labels readable on big graphs (zoom out or "fit" for all).
  function fitOnce(info) {
    if (!info || info.scale) return;
    fit(info);
    if (info.scale && info.scale < 0.55) setScale(info, 0.55);
  }
  function zoom(f) {
    const info = PHASES[state.phase];
    setScale(info, Math.min(4, Math.max(0.05, (info.scale || 1) * f)));
  }

  // ---- selection and the explain panel ------------------------------------------------------
  function clearSelection() {
    for (const e of document.querySelectorAll(".selected")) e.classList.remove("selected");
  }
  function reveal(el) {
    if (el && el.scrollIntoView) el.scrollIntoView({block: "center", inline: "center"});
  }
  function nodeLink(phase, name) {
    const info = PHASES[phase];
    if (info.nodes.has(name)) return h("a", {href: "#", class: "node-link", onclick: (e) => { e.preventDefault(); go(phase, name); }}, name);
    return h("code", {text: name});
  }
  function section(title, ...body) { return h("section", {}, h("h3", {text: title}), ...body); }

  function valueFacts(phase, vid) {
    const v = PHASES[phase].data.values[vid] || {};
    const shape = v.shape ? "[" + v.shape.join(", ") + "]" : "?";
    return [v.dtype || "?", shape, v.layout || "?", v.placement || "?"].join(" · ") +
      (v.cache ? " · " + v.cache : "") + (v.window_offset ? " · window at " + v.window_offset : "");
  }
  function xrayCells(phase, vid) {
    const rows = (xrayByValue[phase] || {})[vid];
    if (!rows) return "";
    return rows.map((r) => (r.over ? "OVER " : "") + "max_rel " + sci(r.max_rel) + ", rmse_rel " + sci(r.rmse_rel)).join("; ");
  }

  // Marks one graph element (`node/...` or `edge/...`) selected, scrolling to it if asked.
  function highlight(phase, id, scroll) {
    clearSelection();
    const g = PHASES[phase].elements.get(id);
    if (g) { g.classList.add("selected"); if (scroll) reveal(g); }
  }
  function selectNode(phase, name, scroll) {
    const n = PHASES[phase].nodes.get(name);
    if (!n) return;
    highlight(phase, "node/" + phase + "/" + name, scroll);
    state.selected = {kind: "node", phase, name};
    renderNodePanel(phase, n);
  }

  function renderNodePanel(phase, n) {
    const info = PHASES[phase];
    const kmap = n.kernel ? EX.kernels[n.kernel] : null;
    const call = info.calls[n.name];
    const parts = [
      h("h2", {id: "panel-title", text: n.name}),
      h("p", {class: "badges"}, h("span", {class: "badge " + n.kind, text: n.kind}),
        h("span", {class: "badge", text: n.op_kind}), h("span", {class: "badge", text: "phase " + phase}),
        n.call !== null ? h("span", {class: "badge", text: "call #" + n.call}) : null,
        n.guarded ? h("span", {class: "badge guarded", text: "runs only while the cross-K/V cache is invalid"}) : null),
      n.where ? h("p", {class: "where", text: n.where}) : null,
    ];
    parts.push(section("Kernel",
      h("p", {}, h("code", {id: "panel-kernel", text: n.kernel || "(none selected)"})),
      kmap ? h("p", {class: "muted"}, kmap.path + " · " + kmap.header + " · " + kmap.library) : null,
      kmap ? h("p", {class: "muted"}, "contract: " + kmap.contract.kind +
        (kmap.contract.tolerance_c !== undefined ? ", tolerance_c " + kmap.contract.tolerance_c : "")) : null));
    const cand = n.candidates !== null && n.candidates !== undefined ? EX.candidates[n.candidates] : null;
    if (cand) parts.push(candidatesSection(cand));
    if (n.route) parts.push(routeSection(n.route));
    parts.push(section("Generated C call", callBlock(n, call)));
    parts.push(section("Thread split", splitBlock(kmap, call)));
    const io = [];
    for (const [port, vid] of Object.entries(n.inputs)) io.push(portRow(phase, "in", port, vid));
    for (const [port, tensor] of Object.entries(n.weights)) io.push(h("tr", {}, h("td", {text: "weight"}), h("td", {text: port}), h("td", {}, h("code", {text: tensor})), h("td", {text: "weights (read-only mmap)"}), h("td")));
    for (const [port, vid] of Object.entries(n.outputs)) io.push(portRow(phase, "out", port, vid));
    parts.push(section("Edges", table(["", "port", "value", "dtype · shape · layout · placement", "X-ray"], io, {class: "io"})));
    const dims = Object.entries(n.dims);
    if (dims.length) parts.push(section("Dims", h("p", {class: "mono", text: dims.map(([k, v]) => k + "=" + v).join("  ")})));
    const attrs = Object.entries(n.attrs || {});
    if (attrs.length) parts.push(section("Attrs", h("p", {class: "mono", text: attrs.map(([k, v]) => k + "=" + JSON.stringify(v)).join("  ")})));
    setPanel(parts);
  }
  function portRow(phase, dir, port, vid) {
    return h("tr", {}, h("td", {text: dir}), h("td", {text: port}),
      h("td", {}, h("a", {href: "#", onclick: (e) => { e.preventDefault(); selectValue(phase, vid); }}, vid)),
      h("td", {text: valueFacts(phase, vid)}), h("td", {text: xrayCells(phase, vid)}));
  }
  function candidatesSection(cand) {
    const sorted = cand.slice().sort((a, b) => (a.rejected === null ? 0 : 1) - (b.rejected === null ? 0 : 1));
    const rejected = sorted.filter((c) => c.rejected !== null).length;
    const rows = sorted.map((c) => h("tr", {class: "candidate " + (c.rejected === null ? "selected-kernel" : "rejected"), "data-kernel": c.kernel},
      h("td", {}, h("code", {text: c.kernel})), h("td", {text: (EX.kernels[c.kernel] || {}).path || ""}),
      h("td", {text: c.rejected === null ? "selected" : "rejected: " + c.rejected})));
    return section("Candidates considered: " + cand.length + " kernel maps, " + rejected + " rejected",
      table(["kernel", "map", "verdict"], rows, {id: "panel-candidates"}));
  }
  function routeSection(route) {
    const rows = route.routes.map((r, i) => h("tr", {class: i === 0 && route.step !== undefined ? "chosen" : ""},
      h("td", {text: r.chain.join(" + ")}), h("td", {text: String(r.cost)}),
      h("td", {text: i === 0 && route.step !== undefined ? "chosen (cheapest)" : "not chosen"})));
    return section("Layout conversion",
      h("p", {}, "edge ", h("code", {text: route.edge})),
      h("p", {class: "muted"}, route.dtype + ": " + route.from_layout + " \u2192 " + route.to_layout +
        (route.step !== undefined ? " (step " + (route.step + 1) + " of the chain)" : "")),
      rows.length ? table(["route", "cost", ""], rows, {id: "panel-routes"})
                  : h("p", {class: "error-text", text: "no route: none of the declared converters (" +
                      (route.converters.join(", ") || "none") + ") chains " + route.from_layout + " to " + route.to_layout}));
  }
  function callBlock(n, call) {
    if (!call) return h("p", {class: "muted", text: "no call: this phase did not compile"});
    const width = Math.max(...call.args.map((a) => a.arg.length));
    const lines = call.args.map((a, i) => "    " + a.arg.padEnd(width) + " = " + a.c + (i + 1 < call.args.length ? "," : "") +
      "  // " + a.bind + " -> " + a.source);
    const text = n.kernel + "(\n" + lines.join("\n") + ");";
    const rows = call.args.map((a) => h("tr", {}, h("td", {}, h("code", {text: a.arg})), h("td", {}, h("code", {text: a.ctype})),
      h("td", {}, h("code", {text: a.bind})), h("td", {}, h("code", {text: a.c})), h("td", {text: a.source})));
    return [h("pre", {class: "ccall", id: "panel-call", text: text}),
            table(["argument", "C type", "bound to", "C expression", "source"], rows, {class: "args"})];
  }
  function splitBlock(kmap, call) {
    const declared = kmap && kmap.parallel ? kmap.parallel : [];
    const out = [];
    if (!declared.length) out.push(h("p", {class: "muted", text: "the kernel map declares no split: the call runs whole on the calling thread"}));
    else {
      out.push(table(["option", "split", "when", "grain", "why"], declared.map((o, i) => h("tr", {},
        h("td", {text: String(i)}), h("td", {}, h("code", {text: o.split})), h("td", {text: o.when || "always"}),
        h("td", {text: String(o.grain)}), h("td", {text: o.why || ""}))), {class: "splits"}));
      const used = call && call.parallel ? call.parallel.splits : null;
      out.push(h("p", {id: "panel-split-call"}, used && used.length
        ? "this call: " + used.map((s) => "split " + s.split + " (grain " + s.grain + ") when " + s.when).join("; else ")
        : "this call: no option applies at these dims, it runs whole"));
    }
    return out;
  }

  function selectValue(phase, vid) {
    const edges = PHASES[phase].byValue.get(vid) || [];
    if (edges.length) selectEdge(phase, edges[0].id, true);
    else renderEdgePanel(phase, {id: vid, value: vid, from: "?", to: "?", from_port: "", to_port: ""});
  }
  function selectEdge(phase, id, scroll) {
    const e = PHASES[phase].edges.get(id);
    if (!e) return;
    highlight(phase, "edge/" + phase + "/" + id, scroll);
    state.selected = {kind: "edge", phase, id};
    renderEdgePanel(phase, e);
  }
  function renderEdgePanel(phase, e) {
    const v = PHASES[phase].data.values[e.value] || {};
    const parts = [h("h2", {id: "panel-title", text: e.value}),
      h("p", {class: "badges"}, h("span", {class: "badge", text: "edge"}), h("span", {class: "badge", text: "phase " + phase})),
      h("p", {}, nodeLink(phase, e.from), e.from_port ? "." + e.from_port : "", " \u2192 ", nodeLink(phase, e.to), e.to_port ? ":" + e.to_port : ""),
      table(["dtype", "shape", "layout", "placement"], [h("tr", {}, h("td", {text: v.dtype || "?"}),
        h("td", {text: v.shape ? "[" + v.shape.join(", ") + "]" : "?"}), h("td", {text: v.layout || "?"}), h("td", {text: v.placement || "?"}))])];
    if (v.ref) parts.push(h("p", {}, "persistent: ", h("code", {text: v.ref}), v.cache ? " (" + v.cache + ")" : "",
      v.window_offset ? ", written at row " + v.window_offset : ""));
    const err = EX.error;
    if (err && err.edge && err.edge.phase === phase && err.edge.id === e.id) {
      parts.push(section("Compile error", h("p", {class: "error-text", text: err.message})));
      if (err.route) parts.push(routeSection(err.route));
    }
    const rows = ((xrayByValue[phase] || {})[e.value]) || [];
    if (rows.length) parts.push(section("X-ray against openai-whisper", xrayTable(rows)));
    const buf = PHASES[phase].plan ? PHASES[phase].plan.arena.find((b) => b.id === e.value) : null;
    if (buf) parts.push(section("Arena", h("p", {}, "offset " + buf.offset + ", " + bytes(buf.bytes) + ", live calls " + buf.live[0] + "\u2013" + buf.live[1])));
    setPanel(parts);
  }
  function setPanel(parts) {
    const p = document.getElementById("panel");
    p.replaceChildren(...parts.flat().filter((x) => x));
    p.scrollTop = 0;
  }

  function bindGraphClicks() {
    for (const [phase, info] of Object.entries(PHASES)) {
      info.root.addEventListener("click", (ev) => {
        const g = ev.target.closest("g.node, g.edge");
        if (!g) return;
        const prefix = g.classList.contains("node") ? "node/" + phase + "/" : "edge/" + phase + "/";
        const id = g.id.slice(prefix.length);
        if (g.classList.contains("node")) {
          if (info.nodes.has(id)) selectNode(phase, id, false);
          else selectHolder(phase, id);
        } else selectEdge(phase, id, false);
      });
    }
  }
  function selectHolder(phase, name) {
    const info = PHASES[phase];
    highlight(phase, "node/" + phase + "/" + name, false);
    const vid = name.startsWith("output:") ? (info.data.outputs[name.slice(7)] || name) : name;
    const v = info.data.values[vid] || {};
    const st = name.startsWith("state:") ? EX.states[name.slice(6).split("[")[0]] : null;
    const inE = info.data.edges.filter((e) => e.to === name), outE = info.data.edges.filter((e) => e.from === name);
    const parts = [h("h2", {id: "panel-title", text: name}),
      h("p", {class: "badges"}, h("span", {class: "badge", text: v.placement === "state" ? "persistent" : "caller's buffer"}),
        v.cache ? h("span", {class: "badge", text: v.cache}) : null),
      h("p", {text: valueFacts(phase, vid)})];
    if (st) parts.push(h("p", {class: "muted", text: "state " + JSON.stringify(st.shape) + " per instance of " + JSON.stringify(st.instances) +
      (st.window ? "; appended at axis " + st.window.axis + " offset " + st.window.offset : "")}));
    parts.push(section("Written by", inE.length ? h("ul", {}, inE.map((e) => h("li", {}, nodeLink(phase, e.from)))) : h("p", {class: "muted", text: "not written in this phase"})));
    parts.push(section("Read by", outE.length ? h("ul", {}, outE.map((e) => h("li", {}, nodeLink(phase, e.to), e.to_port ? ":" + e.to_port : ""))) : h("p", {class: "muted", text: "not read in this phase"})));
    const rows = ((xrayByValue[phase] || {})[vid]) || [];
    if (rows.length) parts.push(section("X-ray against openai-whisper", xrayTable(rows)));
    state.selected = {kind: "holder", phase, name};
    setPanel(parts);
  }

  // ---- X-ray -------------------------------------------------------------------------------
  function xrayClass(r) {
    if (r.over) return "xray-over";
    const bound = (XRAY.bounds || {}).max_rel;
    return bound && r.max_rel > 0.1 * bound ? "xray-near" : "xray-good";
  }
  function xrayTable(rows) {
    return table(["phase", "edge", "shape", "max_abs", "max_rel", "rmse", "rmse_rel", ""], rows.map((r) =>
      h("tr", {class: xrayClass(r)}, h("td", {text: r.phase}), h("td", {}, h("code", {text: r.edge || r.reference})),
        h("td", {text: (r.shape || []).join("\u00d7")}), h("td", {text: sci(r.max_abs)}), h("td", {text: sci(r.max_rel)}),
        h("td", {text: sci(r.rmse)}), h("td", {text: sci(r.rmse_rel)}), h("td", {text: r.error || ""}))), {class: "xray"});
  }
  function paintXray() {
    const box = document.getElementById("view-xray");
    if (!XRAY) {
      box.appendChild(h("p", {class: "muted", id: "xray-none", text: DATA.xray_hint || "no X-ray results were given to this page"}));
      return;
    }
    for (const r of XRAY.rows) {
      if (!r.value || !PHASES[r.phase]) continue;
      const cls = xrayClass(r);
      for (const e of PHASES[r.phase].byValue.get(r.value) || []) {
        const g = PHASES[r.phase].elements.get("edge/" + r.phase + "/" + e.id);
        if (g) {
          g.classList.add("xray", cls);
          g.dataset.maxRel = r.max_rel;
          const title = g.querySelector("title");  // the hover text says the error too
          if (title) title.textContent += "\nX-ray " + r.edge + ": max_rel " + sci(r.max_rel) + ", rmse_rel " + sci(r.rmse_rel) + (r.over ? " (OVER)" : "");
        }
      }
      const holder = PHASES[r.phase].elements.get("node/" + r.phase + "/" + r.value);
      if (holder) holder.classList.add("xray", cls);
    }
    const placed = XRAY.rows.filter((r) => r.value).length;
    const sorted = XRAY.rows.slice().sort((a, b) => (b.over - a.over) || ((b.max_rel || 0) - (a.max_rel || 0)));
    const b = XRAY.bounds || {};
    box.append(h("p", {}, "X-ray parity against openai-whisper (", h("code", {text: XRAY.source}), "): " + XRAY.rows.length +
      " edges of this part, " + placed + " on the graph; bounds max_rel \u2264 " + sci(b.max_rel) + ", rmse_rel \u2264 " + sci(b.rmse_rel) +
      ". Over the bound: " + XRAY.rows.filter((r) => r.over).length + "."));
    const t = xrayTable(sorted);
    t.id = "xray-table";
    t.querySelectorAll("tbody tr").forEach((tr, i) => {
      const r = sorted[i];
      if (!r.value) return;
      tr.classList.add("clickable");
      tr.addEventListener("click", () => {
        showView("graph");
        if (state.phase !== r.phase) showPhase(r.phase);
        selectValue(r.phase, r.value);
      });
    });
    box.appendChild(t);
  }

  // ---- memory: the arena timeline -----------------------------------------------------------
  function drawMemory() {
    const box = document.getElementById("view-memory");
    for (const p of phaseNames) {
      const info = PHASES[p];
      const div = h("div", {id: "memory-" + p, class: "memory"});
      box.appendChild(div);
      if (!info.plan) { div.appendChild(h("p", {class: "muted", text: "no memory plan: phase " + p + " did not compile"})); continue; }
      const plan = info.plan, calls = plan.calls.length;
      const sized = plan.arena_bytes >= 0;
      const W = Math.max(900, calls * 9 + 80), H = 380, X0 = 70, Y0 = 24;
      const x = (i) => X0 + i * (W - X0 - 10) / Math.max(calls, 1);
      let peak = 0;
      for (const b of plan.arena) if (sized) peak = Math.max(peak, b.offset + b.bytes);
      peak = Math.ceil(peak / ALIGN) * ALIGN;
      const slots = sized ? 0 : Math.max(0, ...plan.arena.map((b) => b.slot + 1));
      const y = sized ? (off) => Y0 + (peak ? off / peak : 0) * (H - Y0 - 30) : (slot) => Y0 + slot * (H - Y0 - 30) / Math.max(slots, 1);
      const g = svg("svg", {width: W, height: H, class: "timeline", id: "timeline-" + p});
      for (let i = 0; i <= calls; i += Math.max(1, Math.round(calls / 20))) {
        g.appendChild(svg("line", {x1: x(i), x2: x(i), y1: Y0, y2: H - 30, class: "grid"}));
        g.appendChild(svg("text", {x: x(i), y: H - 14, class: "axis", "text-anchor": "middle"}, String(i)));
      }
      g.appendChild(svg("text", {x: W / 2, y: H - 1, class: "axis", "text-anchor": "middle"}, "call index"));
      g.appendChild(svg("text", {x: 4, y: 14, class: "axis"}, sized ? "arena offset" : "arena slot (sized at run time)"));
      for (const b of plan.arena) {
        const y1 = sized ? y(b.offset) : y(b.slot) + 2, y2 = sized ? y(b.offset + b.bytes) : y(b.slot + 1) - 2;
        const r = svg("rect", {x: x(b.live[0]) + 0.5, y: y1, width: Math.max(2, x(b.live[1] + 1) - x(b.live[0]) - 1),
                               height: Math.max(1.5, y2 - y1), class: "buffer" + (b.id.includes("#scratch") ? " scratch" : ""),
                               "data-id": b.id},
          svg("title", {}, b.id + "\noffset " + b.offset + ", " + bytes(b.bytes) + "\nwritten by call " + b.live[0] + ", last read by call " + b.live[1]));
        r.addEventListener("click", () => selectBuffer(p, b));
        g.appendChild(r);
      }
      if (sized) {
        g.appendChild(svg("line", {x1: X0, x2: W - 10, y1: y(peak), y2: y(peak), class: "peak"}));
        g.appendChild(svg("text", {x: X0 - 4, y: y(peak) + 4, class: "axis", "text-anchor": "end"}, bytes(peak)));
        g.appendChild(svg("text", {x: X0 - 4, y: Y0 + 4, class: "axis", "text-anchor": "end"}, "0"));
      }
      const summary = h("p", {id: "arena-peak-" + p, class: "peak-summary", "data-bytes": sized ? peak : -1, "data-plan-bytes": plan.arena_bytes},
        sized ? "Arena peak (top of the highest buffer, 64-byte aligned): " + bytes(peak) + " = " + peak + " bytes; the plan states " + plan.arena_bytes +
                (peak === plan.arena_bytes ? " (agrees)." : " (DISAGREES).")
              : "Buffer sizes are known only at run time: " + slots + " lifetime-shared slots.");
      div.append(h("h3", {text: "Phase " + p + ": " + plan.arena.length + " arena buffers over " + calls + " calls"}), summary,
        h("div", {class: "timeline-box"}, g));
      if (plan.state && plan.state.length) {
        div.append(h("h3", {text: "Persistent state (apart from the arena)"}), table(["region", "offset", "bytes per instance", "instances", "shape", "layout", "cache"],
          plan.state.map((s) => h("tr", {}, h("td", {}, h("code", {text: s.name})), h("td", {text: String(s.offset)}), h("td", {text: bytes(s.instance_bytes)}),
            h("td", {text: JSON.stringify(s.instances)}), h("td", {text: "[" + s.shape.join(", ") + "]"}), h("td", {text: s.layout}), h("td", {text: s.cache || ""})))));
      }
      div.hidden = true;
    }
  }
  function selectBuffer(phase, b) {
    const info = PHASES[phase];
    const writer = info.plan.calls[b.live[0]], reader = info.plan.calls[b.live[1]];
    setPanel([h("h2", {id: "panel-title", text: b.id}), h("p", {class: "badges"}, h("span", {class: "badge", text: "arena buffer"}), h("span", {class: "badge", text: "phase " + phase})),
      table(["offset", "bytes", "slot", "first write", "last read"], [h("tr", {}, h("td", {text: String(b.offset)}), h("td", {text: String(b.bytes)}),
        h("td", {text: String(b.slot)}), h("td", {}, nodeLink(phase, writer.node)), h("td", {}, nodeLink(phase, reader.node)))]),
      info.data.values[b.id] ? h("p", {text: valueFacts(phase, b.id)}) : h("p", {class: "muted", text: "kernel scratch"})]);
  }

  // ---- the error of a failed compile --------------------------------------------------------
  function showError() {
    const err = EX.error;
    if (!err) return;
    const banner = document.getElementById("error-banner");
    banner.hidden = false;
    banner.replaceChildren(h("strong", {text: "Compile failed: "}), h("span", {id: "error-message", text: err.message}));
    if (err.candidates) {
      banner.appendChild(h("div", {}, table(["kernel", "verdict"], err.candidates.map((c) => h("tr", {}, h("td", {}, h("code", {text: c.kernel})),
        h("td", {text: c.rejected === null ? "candidate" : "rejected: " + c.rejected}))))));
    }
  }

  // ---- start -------------------------------------------------------------------------------
  buildHeader();
  drawMemory();
  paintXray();
  bindGraphClicks();
  showError();
  const err = EX.error;
  const first = err && err.phase && PHASES[err.phase] ? err.phase : phaseNames[0];
  if (first) showPhase(first);
  showView("graph");
  if (err && err.edge && PHASES[err.edge.phase]) selectEdge(err.edge.phase, err.edge.id, true);
  else if (err && err.op && PHASES[err.phase] && PHASES[err.phase].nodes.has(err.op)) selectNode(err.phase, err.op, true);
  document.body.dataset.ready = "1";
})();
