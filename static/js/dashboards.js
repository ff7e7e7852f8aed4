/* The dashboards' charts (uPlot), the run upload's drop zone and the topic page's
 * document panel.
 *
 * Each chart is an element with data-chart (its kind) and data-source (the id of a
 * json_script block the page renders): no inline script, so the pages run under a strict
 * Content Security Policy. Charts follow their container's width. The numbers are the
 * server's; nothing here computes a statistic.
 */
(() => {
  "use strict";

  const ACCENT = "#3b5bdb";
  const BETTER = "#2b8a3e";
  const WORSE = "#c92a2a";
  const GRID = { stroke: "#e9ecef", width: 1 };
  const AXIS = { stroke: "#495057", grid: GRID, ticks: { stroke: "#ced4da", width: 1 } };

  const readData = (id) => {
    const node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  };
  const fmt = (value) => (value == null ? "—" : value.toFixed(4));
  const signed = (value) => (value == null ? "—" : (value >= 0 ? "+" : "") + value.toFixed(4));

  // --- chart kinds --------------------------------------------------------------------------

  /* Means (dots) with their 95% intervals (whiskers), one per run, in the table's order. */
  function intervals(el, data) {
    const n = data.labels.length;
    const xs = data.labels.map((_, i) => i);
    const lows = data.low.filter((v) => v != null);
    const highs = data.high.filter((v) => v != null);
    const yMin = Math.min(...data.mean, ...lows);
    const yMax = Math.max(...data.mean, ...highs);
    const pad = Math.max(0.01, (yMax - yMin) * 0.08);
    // Labels slant when they would run into each other: many runs, or a phone's width.
    const crowded = n > 6 || el.clientWidth / n < 160;
    const labelAt = (i) => shorten(data.labels[i] ?? "", crowded && el.clientWidth < 600 ? 30 : n);
    // Slanted labels (35°, about 7 px a character) need room below the axis (sin 35° of the
    // longest) and, for the first, to the left past the y axis (cos 35°, less its 60 px).
    const longest = Math.max(0, ...data.labels.map((_, i) => labelAt(i).length));
    const below = crowded ? Math.min(180, Math.round(longest * 7 * 0.574) + 24) : 40;
    const leftRoom = crowded ? Math.max(0, Math.round(labelAt(0).length * 7 * 0.82) - 60) : 0;
    const whiskers = (u) => {
      const ctx = u.ctx;
      ctx.save();
      ctx.strokeStyle = ACCENT;
      ctx.lineWidth = 2 * devicePixelRatio;
      const cap = 5 * devicePixelRatio;
      for (let i = 0; i < n; i++) {
        if (data.low[i] == null) continue;
        const x = u.valToPos(i, "x", true);
        const top = u.valToPos(data.high[i], "y", true);
        const bottom = u.valToPos(data.low[i], "y", true);
        ctx.beginPath();
        ctx.moveTo(x, top);
        ctx.lineTo(x, bottom);
        ctx.moveTo(x - cap, top);
        ctx.lineTo(x + cap, top);
        ctx.moveTo(x - cap, bottom);
        ctx.lineTo(x + cap, bottom);
        ctx.stroke();
      }
      ctx.restore();
    };
    return {
      options: {
        height: Math.max(300, 210 + below),
        padding: [null, null, null, leftRoom || null],
        scales: { x: { time: false, range: [-0.6, n - 0.4] }, y: { range: [Math.max(0, yMin - pad), yMax + pad] } },
        axes: [
          {
            ...AXIS,
            splits: () => xs,
            values: (u, splits) => splits.map(labelAt),
            rotate: crowded ? 35 : 0,
            size: below,
            grid: { show: false },
          },
          { ...AXIS, label: data.measure, values: (u, splits) => splits.map((v) => v.toFixed(2)) },
        ],
        series: [
          { label: "Run", value: (u, i) => (i == null ? "—" : data.labels[i]) },
          {
            label: data.measure,
            stroke: ACCENT,
            width: 0,
            paths: () => null,
            points: { show: true, size: 9, fill: ACCENT, stroke: ACCENT },
            value: (u, v, s, i) =>
              i == null ? "—" : `${fmt(v)} (${fmt(data.low[i])}–${fmt(data.high[i])})`,
          },
        ],
        hooks: { draw: [whiskers] },
        cursor: { points: { show: false } },
      },
      data: [xs, data.mean],
    };
  }

  const shorten = (label, n) => {
    const max = n > 25 ? 14 : n > 8 ? 24 : 40;
    return label.length > max ? label.slice(0, max - 1) + "…" : label;
  };

  function barsPath() {
    return window.uPlot.paths.bars({ size: [0.85, 60], gap: 1 });
  }

  /* One bar per topic, sorted ascending. */
  function sortedBars(el, data) {
    const xs = data.values.map((_, i) => i);
    return {
      options: {
        height: 240,
        scales: { x: { time: false, range: [-0.5, xs.length - 0.5] }, y: { range: [0, 1] } },
        axes: [
          { ...AXIS, label: "topics, lowest to highest", values: () => [], ticks: { show: false }, grid: { show: false } },
          { ...AXIS, label: data.measure },
        ],
        series: [
          { label: "Topic", value: (u, i) => (i == null ? "—" : data.qids[i]) },
          { label: data.measure, fill: ACCENT + "cc", stroke: ACCENT, width: 0, paths: barsPath(), points: { show: false }, value: (u, v) => fmt(v) },
        ],
      },
      data: [xs, data.values],
    };
  }

  /* How many topics fall in each tenth of [0, 1]. */
  function histogram(el, data) {
    const centres = data.bins.map((b) => b + data.width / 2);
    const maxCount = Math.max(1, ...data.counts);
    return {
      options: {
        height: 240,
        scales: { x: { time: false, range: [0, 1] }, y: { range: [0, maxCount * 1.1] } },
        axes: [
          { ...AXIS, label: data.measure, splits: () => [0, 0.2, 0.4, 0.6, 0.8, 1], values: (u, s) => s.map((v) => v.toFixed(1)) },
          { ...AXIS, label: "topics", values: (u, s) => s.map((v) => (Number.isInteger(v) ? v : "")) },
        ],
        series: [
          { label: "Range", value: (u, v) => (v == null ? "—" : `${(v - data.width / 2).toFixed(1)}–${(v + data.width / 2).toFixed(1)}`) },
          { label: "Topics", fill: ACCENT + "99", stroke: ACCENT, width: 1, paths: window.uPlot.paths.bars({ size: [0.96, 200] }), points: { show: false } },
        ],
      },
      data: [centres, data.counts],
    };
  }

  /* Per-topic differences, sorted; gains green, losses red. */
  function deltas(el, data) {
    const xs = data.deltas.map((_, i) => i);
    const gains = data.deltas.map((d) => (d > 0 ? d : null));
    const losses = data.deltas.map((d) => (d < 0 ? d : null));
    const extent = Math.max(0.05, ...data.deltas.map(Math.abs));
    return {
      options: {
        height: 240,
        scales: { x: { time: false, range: [-0.5, xs.length - 0.5] }, y: { range: [-extent * 1.05, extent * 1.05] } },
        axes: [
          { ...AXIS, label: "topics, by Δ", values: () => [], ticks: { show: false }, grid: { show: false } },
          { ...AXIS, label: "Δ", values: (u, s) => s.map((v) => v.toFixed(2)) },
        ],
        series: [
          { label: "Topic", value: (u, i) => (i == null ? "—" : data.qids[i]) },
          { label: "gain", fill: BETTER + "cc", stroke: BETTER, width: 0, paths: barsPath(), points: { show: false }, value: (u, v) => signed(v) },
          { label: "loss", fill: WORSE + "cc", stroke: WORSE, width: 0, paths: barsPath(), points: { show: false }, value: (u, v) => signed(v) },
        ],
      },
      data: [xs, gains, losses],
    };
  }

  /* A schedule's measure over time: one dot per firing (red: it raised an alert), joined by
   * a line, with each firing's 95% interval as a band. x is the firing's slot (Unix seconds). */
  function history(el, data) {
    const lows = data.low.filter((v) => v != null);
    const highs = data.high.filter((v) => v != null);
    const yMin = Math.min(...data.mean, ...lows);
    const yMax = Math.max(...data.mean, ...highs);
    const pad = Math.max(0.01, (yMax - yMin) * 0.08);
    const marks = (u) => {
      const ctx = u.ctx;
      ctx.save();
      for (let i = 0; i < data.mean.length; i++) {
        if (!data.alert[i]) continue;
        const x = u.valToPos(data.times[i], "x", true);
        const y = u.valToPos(data.mean[i], "y", true);
        ctx.fillStyle = WORSE;
        ctx.beginPath();
        ctx.arc(x, y, 6 * devicePixelRatio, 0, 2 * Math.PI);
        ctx.fill();
      }
      ctx.restore();
    };
    const single = data.times.length === 1;
    const span = single ? 3600 : 0;
    return {
      options: {
        height: 260,
        scales: {
          x: { time: true, range: single ? [data.times[0] - span, data.times[0] + span] : null },
          y: { range: [Math.max(0, yMin - pad), yMax + pad] },
        },
        axes: [{ ...AXIS }, { ...AXIS, label: data.measure, values: (u, splits) => splits.map((v) => v.toFixed(2)) }],
        series: [
          { label: "Slot", value: (u, i) => (i == null ? "—" : data.labels[data.times.indexOf(i)] ?? "—") },
          { label: "low", stroke: ACCENT + "55", width: 1, points: { show: false }, value: (u, v) => fmt(v) },
          { label: "high", stroke: ACCENT + "55", width: 1, points: { show: false }, value: (u, v) => fmt(v) },
          { label: data.measure, stroke: ACCENT, width: 2, points: { show: true, size: 8, fill: ACCENT, stroke: ACCENT }, value: (u, v) => fmt(v) },
        ],
        bands: [{ series: [2, 1], fill: ACCENT + "22" }],
        hooks: { draw: [marks] },
      },
      data: [data.times, data.low, data.high, data.mean],
    };
  }

  const KINDS = { intervals, "sorted-bars": sortedBars, histogram, deltas, history };

  function draw(el) {
    const kind = KINDS[el.dataset.chart];
    const data = readData(el.dataset.source);
    if (!kind || !data || !window.uPlot) return;
    const { options, data: series } = kind(el, data);
    // The legend holds the values at the cursor: shown only while a point is hovered, never
    // as placeholders ("Run: —"); the figure's caption says what the chart holds.
    const idle = (u) => u.root.classList.toggle("legend-idle", u.legend.idx == null);
    const hooks = { ...options.hooks, setLegend: [...(options.hooks?.setLegend ?? []), idle] };
    const plot = new window.uPlot(
      { width: Math.max(280, el.clientWidth), ...options, hooks },
      series,
      el,
    );
    idle(plot);
    new ResizeObserver(() => {
      const width = Math.max(280, el.clientWidth);
      if (Math.abs(width - plot.width) > 2) plot.setSize({ width, height: options.height });
    }).observe(el);
  }

  // --- the upload form ----------------------------------------------------------------------

  function dropZone(zone) {
    const input = zone.querySelector('input[type="file"]');
    const list = document.querySelector("[data-file-list]");
    const show = () => {
      const items = [...input.files].map((file) => {
        const item = document.createElement("li");
        const kb = file.size / 1024;
        item.textContent = `${file.name} · ${kb < 1024 ? kb.toFixed(1) + " KB" : (kb / 1024).toFixed(1) + " MB"}`;
        return item;
      });
      list.replaceChildren(...items);
    };
    input.addEventListener("change", show);
    show(); // files chosen before this script ran (a slow load) or kept by the browser
    for (const type of ["dragenter", "dragover"]) {
      zone.addEventListener(type, (event) => {
        event.preventDefault();
        zone.classList.add("dragging");
      });
    }
    for (const type of ["dragleave", "drop"]) {
      zone.addEventListener(type, () => zone.classList.remove("dragging"));
    }
    zone.addEventListener("drop", (event) => {
      event.preventDefault();
      // Dropped files join the ones already chosen.
      const files = new DataTransfer();
      for (const file of [...input.files, ...event.dataTransfer.files]) files.items.add(file);
      input.files = files.files;
      show();
    });
  }

  function systemChoice(select) {
    const fields = document.querySelector("[data-new-system]");
    const name = fields.querySelector('input[name="new_name"]');
    const sync = () => {
      const isNew = select.value === "new";
      fields.hidden = !isNew;
      name.required = isNew;
    };
    select.addEventListener("change", sync);
    sync();
  }

  /* A panel marked data-swap-not-found shows a 404's answer too: the topic page's document
   * panel, whose 404 (no campaign the user leads holds the document, as from the API) says
   * so in words. htmx leaves error answers out by itself. */
  document.addEventListener("htmx:beforeSwap", (event) => {
    const { xhr, target } = event.detail;
    if (xhr.status === 404 && target && target.hasAttribute("data-swap-not-found")) {
      event.detail.shouldSwap = true;
      event.detail.isError = false;
    }
  });

  const start = () => {
    document.querySelectorAll("[data-chart]").forEach(draw);
    document.querySelectorAll("[data-dropzone]").forEach(dropZone);
    document.querySelectorAll("[data-system-select]").forEach(systemChoice);
  };
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
