/* GAMUT leaderboard: draws charts from data-figure attributes and makes tables sortable and
   filterable. Runs on every page the theme shows, on first load and after instant navigation. */
(function () {
  "use strict";

  function dark() {
    return document.body.getAttribute("data-md-color-scheme") === "slate";
  }

  function themed(layout, el) {
    var narrow = !!el && el.clientWidth > 0 && el.clientWidth < 520;
    var ink = dark() ? "#e6e6ef" : "#1f2330";
    var grid = dark() ? "rgba(255,255,255,0.14)" : "rgba(0,0,0,0.10)";
    var out = JSON.parse(JSON.stringify(layout || {}));
    out.paper_bgcolor = "rgba(0,0,0,0)";
    out.plot_bgcolor = "rgba(0,0,0,0)";
    out.font = { color: ink, size: 13 };
    ["xaxis", "yaxis"].forEach(function (name) {
      out[name] = out[name] || {};
      out[name].gridcolor = grid;
      out[name].zerolinecolor = grid;
      out[name].linecolor = grid;
      var title = out[name].title;
      /* a phone: axis titles smaller and their unit on a second line, so none is cut off */
      if (narrow && title && typeof title.text === "string") {
        title.text = title.text.replace(" (", "<br>(");
        title.font = { size: 11 };
        title.standoff = 6;
      }
    });
    return out;
  }

  /* The charting library sits beside this script; it is loaded on the first page that holds a
     chart, so pages without one load no charting code. */
  var self = document.currentScript;
  var PLOTLY_SRC = self ? new URL("plotly-cartesian.min.js", self.src).href : null;
  var plotlyLoading = null;

  /* Likewise the explorer's and the comparison's scripts, on the page that holds their view. */
  var PAGE_SCRIPTS = { "gamut-explorer": "gamut-explorer.js", "gamut-compare": "gamut-compare.js" };
  var pageScripts = {};
  function loadPageScripts() {
    Object.keys(PAGE_SCRIPTS).forEach(function (id) {
      if (pageScripts[id] || !document.getElementById(id) || !self) { return; }
      var script = document.createElement("script");
      script.src = new URL(PAGE_SCRIPTS[id], self.src).href;
      script.onerror = function () {
        delete pageScripts[id];
        console.error("cannot load " + script.src);
      };
      pageScripts[id] = script;
      document.head.appendChild(script);
    });
  }

  function withPlotly(then) {
    if (typeof Plotly !== "undefined") { then(); return; }
    if (!plotlyLoading) {
      plotlyLoading = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = PLOTLY_SRC;
        script.onload = resolve;
        script.onerror = function () {
          plotlyLoading = null;
          reject(new Error("cannot load " + PLOTLY_SRC));
        };
        document.head.appendChild(script);
      });
    }
    plotlyLoading.then(then, function (err) { console.error(err.message); });
  }

  function drawCharts(root, force) {
    if (!root.querySelector("[data-figure]")) { return; }
    if (typeof Plotly === "undefined") {
      withPlotly(function () { drawCharts(root, force); });
      return;
    }
    root.querySelectorAll("[data-figure]").forEach(function (el) {
      if (!force && el.hasAttribute("data-drawn")) { return; }
      el.setAttribute("data-drawn", "true");
      el.removeAttribute("data-rendered");
      var fig = JSON.parse(el.getAttribute("data-figure"));
      fitWidth(el, fig.layout);
      Plotly.react(el, fig.data, themed(fig.layout, el), {
        responsive: true, displayModeBar: false, displaylogo: false
      }).then(function () { el.setAttribute("data-rendered", "true"); });
    });
  }

  /* A chart drawn at a fixed width (a small heatmap) takes the screen's width when the screen is
     narrower, so that no column or colour bar is cut off. */
  function fitWidth(el, layout) {
    var room = el.parentNode ? el.parentNode.clientWidth : 0;
    if (layout && layout.width && room && layout.width > room) {
      delete layout.width;
      layout.autosize = true;
      el.style.minWidth = "0";
    }
  }

  function cellKey(row, index, numeric) {
    var cell = row.cells[index];
    var raw = cell ? cell.getAttribute("data-sort") : "";
    if (!numeric) { return raw.toLowerCase(); }
    var n = parseFloat(raw);
    return isNaN(n) ? null : n;
  }

  function sortBy(table, index, button, direction) {
    var th = button.closest("th");
    var ascending = direction ? direction === "ascending"
      : th.getAttribute("aria-sort") !== "ascending";
    var numeric = button.getAttribute("data-type") === "num";
    table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var pager = table.gamutPager;  /* a paged table sorts all its rows, not the page shown */
    var rows = pager ? pager.rows : Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellKey(a, index, numeric), y = cellKey(b, index, numeric);
      if (x === y) { return 0; }
      if (x === null || x === "") { return 1; }
      if (y === null || y === "") { return -1; }
      return (x < y ? -1 : 1) * (ascending ? 1 : -1);
    });
    if (pager) { pager.first(); } else { rows.forEach(function (r) { body.appendChild(r); }); }
  }

  /* Page a long table: its body holds ``size`` rows at a time, with Previous and Next below it.
     ``keep(row)`` filters; sorting (sortBy) reorders every row. Returns the pager. */
  function paged(table, size) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var status = h("span", { "class": "gamut-muted", "aria-live": "polite" });
    var prev = h("button", { type: "button", "class": "gamut-page", text: "Previous" });
    var next = h("button", { type: "button", "class": "gamut-page", text: "Next" });
    var caption = table.caption ? table.caption.textContent : "Table";
    var nav = h("nav", { "class": "gamut-pager", "aria-label": "Pages of " + caption },
                [prev, " ", status, " ", next]);
    var pager = { rows: rows, nav: nav, page: 0, keep: function () { return true; } };
    function draw() {
      var shown = pager.rows.filter(pager.keep);
      var pages = Math.max(1, Math.ceil(shown.length / size));
      pager.page = Math.min(Math.max(pager.page, 0), pages - 1);
      var from = pager.page * size, to = Math.min(shown.length, from + size);
      body.textContent = "";
      shown.slice(from, to).forEach(function (r) { body.appendChild(r); });
      status.textContent = shown.length ? "rows " + (from + 1) + "–" + to + " of " + shown.length
        : "";
      prev.disabled = pager.page === 0;
      next.disabled = pager.page >= pages - 1;
      nav.hidden = pages <= 1;
      table.setAttribute("data-page", String(pager.page + 1));
      return shown.length;
    }
    pager.draw = draw;
    pager.first = function () { pager.page = 0; return draw(); };
    prev.addEventListener("click", function () { pager.page -= 1; draw(); });
    next.addEventListener("click", function () { pager.page += 1; draw(); });
    table.gamutPager = pager;
    draw();
    return pager;
  }

  /* The view (filters and sort of a page's main table) lives in the address bar, so a link
     opens the same view. Only tables inside an element with an id take part. */
  function setParams(changes) {
    var params = new URLSearchParams(window.location.search);
    Object.keys(changes).forEach(function (key) {
      if (changes[key] === null || changes[key] === "") { params.delete(key); }
      else { params.set(key, changes[key]); }
    });
    var query = params.toString();
    var url = window.location.pathname + (query ? "?" + query : "") + window.location.hash;
    if (url === window.location.pathname + window.location.search + window.location.hash) {
      return;
    }
    /* a new history entry (without state, which the theme's navigation leaves alone), so that
       Back undoes a filter instead of leaving the page */
    window.history.pushState(null, "", url);
  }

  /* Back and Forward between the views a page pushed (same page, another query): the page
     scripts whose element is still shown redraw from the address bar. An entry of another page
     is the theme's to load (its instant navigation, or the browser). */
  var popHandlers = [];
  var shownPath = window.location.pathname;
  function onPop(handler, el) { popHandlers.push({ run: handler, el: el || document.body }); }
  window.addEventListener("popstate", function () {
    if (window.location.pathname !== shownPath) { return; }
    popHandlers = popHandlers.filter(function (p) { return document.documentElement.contains(p.el); });
    popHandlers.forEach(function (p) { p.run(new URLSearchParams(window.location.search)); });
  });

  /* Page data ships as script files (``gamut.put(document.currentScript.src, {...})``) rather
     than JSON fetched at run time, so that the site also works opened from a folder (file://),
     where browsers refuse fetch(). ``load`` resolves with the value the file put. */
  var arrived = {};
  function put(src, value) { arrived[src] = value; }
  function load(url) {
    var src = new URL(url, document.baseURI).href;
    return new Promise(function (resolve, reject) {
      var script = document.createElement("script");
      script.src = src;
      script.onload = function () {
        script.remove();
        if (!(src in arrived)) { reject(new Error(url + " holds no data")); return; }
        var value = arrived[src];
        delete arrived[src];
        resolve(value);
      };
      script.onerror = function () { script.remove(); reject(new Error("cannot load " + url)); };
      document.head.appendChild(script);
    });
  }

  function stateful(table) {
    var holder = table.closest(".gamut-table[id]");
    return holder && holder.getAttribute("data-url-state") !== "off" &&
      document.querySelector("form.gamut-filters[data-target='" + holder.id + "']");
  }

  function initSorting(root) {
    var params = new URLSearchParams(window.location.search);
    root.querySelectorAll("table[data-sortable]").forEach(function (table) {
      if (table.getAttribute("data-sort-ready")) { return; }
      table.setAttribute("data-sort-ready", "1");
      var keep = stateful(table);
      table.querySelectorAll("thead th").forEach(function (th, index) {
        var button = th.querySelector("button.gamut-sort");
        if (!button) { return; }
        button.addEventListener("click", function () {
          sortBy(table, index, button);
          if (keep) {
            setParams({ sort: th.getAttribute("data-col"),
                        dir: th.getAttribute("aria-sort") === "ascending" ? "asc" : "desc" });
          }
        });
        if (keep && params.get("sort") === th.getAttribute("data-col")) {
          sortBy(table, index, button, params.get("dir") === "asc" ? "ascending" : "descending");
        }
      });
    });
  }

  function filterChart(form, target) {
    var holder = form.getAttribute("data-chart") &&
      document.getElementById(form.getAttribute("data-chart"));
    var el = holder && holder.querySelector("[data-figure]");
    if (!el) { return; }
    if (typeof Plotly === "undefined") {  /* redrawn filtered once the library has loaded */
      withPlotly(function () { filterChart(form, target); });
      return;
    }
    var visible = {};
    target.querySelectorAll("tbody tr:not([hidden])").forEach(function (row) {
      visible[row.getAttribute("data-setting") + "|" + row.getAttribute("data-sid")] = true;
    });
    var fig = JSON.parse(el.getAttribute("data-figure"));
    var data = [];
    fig.data.forEach(function (trace) {
      var keep = (trace.customdata || []).map(function (sid) {
        return !!visible[trace.legendgroup + "|" + sid];
      });
      if (!keep.some(Boolean)) { return; }
      var t = JSON.parse(JSON.stringify(trace));
      ["x", "y", "customdata"].forEach(function (k) {
        t[k] = trace[k].filter(function (_, i) { return keep[i]; });
      });
      ["array", "arrayminus"].forEach(function (k) {
        t.error_x[k] = trace.error_x[k].filter(function (_, i) { return keep[i]; });
      });
      data.push(t);
    });
    el.setAttribute("data-shown", "0");
    /* nothing to draw: no chart with empty axes; the page's "no model matches" line says so */
    holder.hidden = !data.length;
    if (!data.length) { return; }
    var rows = {};
    data.forEach(function (t) { t.y.forEach(function (y) { rows[y] = true; }); });
    var layout = JSON.parse(JSON.stringify(fig.layout));
    layout.height = 140 + 26 * Math.max(Object.keys(rows).length, 1);
    layout.showlegend = data.length > 1;
    el.setAttribute("data-shown", String(data.length ? Object.keys(rows).length : 0));
    el.removeAttribute("data-rendered");
    Plotly.react(el, data, themed(layout, el), {
      responsive: true, displayModeBar: false, displaylogo: false
    }).then(function () { el.setAttribute("data-rendered", "true"); });
  }

  function applyFilters(form, record) {
    var target = document.getElementById(form.getAttribute("data-target"));
    if (!target) { return; }
    var wanted = {}, changes = {};
    form.querySelectorAll("[data-filter], [data-view]").forEach(function (input) {
      var name = stateName(input);
      var value = input.type === "checkbox" ? (input.checked ? input.value : "") : input.value;
      var first = input.tagName === "SELECT" && input.options.length ? input.options[0].value : "";
      changes[name] = value === first ? null : (value || "all");
      if (input.type === "checkbox") { changes[name] = value || null; }
      if (input.hasAttribute("data-filter")) { wanted[name] = value; }
    });
    var shown = 0;
    target.querySelectorAll("tbody tr").forEach(function (row) {
      var show = Object.keys(wanted).every(function (name) {
        return !wanted[name] || row.getAttribute("data-" + name) === wanted[name];
      });
      row.hidden = !show;
      if (show) { shown += 1; }
    });
    target.setAttribute("data-view-setting", wanted.setting || "all");
    var empty = document.querySelector("[data-empty-for='" + target.id + "']");
    if (empty) { empty.hidden = shown > 0; }
    if (record) { setParams(changes); }
    filterChart(form, target);
  }

  /* A filter (``data-filter``: hides the rows whose ``data-NAME`` differs) and a view switch
     (``data-view``: CSS reacts to it, as the "Corrected (PPI)" columns) are both kept in the
     address bar under their name. */
  function stateName(input) {
    return input.getAttribute("data-filter") || input.getAttribute("data-view");
  }

  /* Set a filter form from the address bar; a filter it does not name keeps the page's default. */
  function readFilters(form, params) {
    form.querySelectorAll("[data-filter], [data-view]").forEach(function (input) {
      var value = params.get(stateName(input));
      if (!input.hasAttribute("data-default")) {
        input.setAttribute("data-default", input.type === "checkbox"
          ? (input.checked ? "on" : "") : input.value);
      }
      var fallback = input.getAttribute("data-default");
      if (input.type === "checkbox") {
        input.checked = value === null ? fallback === "on" : value === input.value;
        return;
      }
      if (value === null) { input.value = fallback; }
      else if (value === "all") { input.value = ""; }
      else if ([].some.call(input.options, function (o) { return o.value === value; })) {
        input.value = value;
      }
    });
  }

  function initFilters(root) {
    var params = new URLSearchParams(window.location.search);
    root.querySelectorAll("form.gamut-filters").forEach(function (form) {
      if (form.getAttribute("data-filter-ready")) { return; }
      form.setAttribute("data-filter-ready", "true");
      readFilters(form, params);
      form.addEventListener("submit", function (event) { event.preventDefault(); });
      form.addEventListener("change", function () { applyFilters(form, true); });
      applyFilters(form, false);
    });
  }

  function nameDialogs() {
    /* the theme's search overlay is a dialog without a name */
    document.querySelectorAll(".md-search[role=dialog]:not([aria-label])").forEach(function (el) {
      el.setAttribute("aria-label", "Search");
    });
  }

  onPop(function (params) {
    document.querySelectorAll("form.gamut-filters[data-filter-ready]").forEach(function (form) {
      readFilters(form, params);
      applyFilters(form, false);
    });
  }, document.documentElement);

  function init() {
    shownPath = window.location.pathname;
    nameDialogs();
    loadPageScripts();
    drawCharts(document, false);
    initSorting(document);
    initFilters(document);
  }

  /* An element with attributes (``text`` sets its text) and children (strings become text
     nodes): data is placed as text, never parsed as HTML. Null, undefined and false are left out. */
  function h(tag, attrs, children) {
    var el = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (attrs[k] === null || attrs[k] === undefined || attrs[k] === false) { return; }
      if (k === "text") { el.textContent = attrs[k]; } else { el.setAttribute(k, attrs[k]); }
    });
    (children || []).forEach(function (c) {
      if (c === null || c === undefined) { return; }
      el.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return el;
  }

  /* A score with one decimal ("–" when absent, never "-0.0"); ``signed`` adds "+" to a gain. */
  function fmt(x, signed) {
    if (x === null || x === undefined) { return "–"; }
    var s = x.toFixed(1);
    if (s === "-0.0") { s = "0.0"; }
    return signed && s !== "0.0" && s.charAt(0) !== "-" ? "+" + s : s;  /* zero: no sign */
  }

  /* The page scripts (explorer, comparison) reuse the sorting, the address-bar state and its
     history, the element builder, the number format and the data loader. */
  window.gamut = { initSorting: initSorting, setParams: setParams, h: h, fmt: fmt,
                  put: put, load: load, onPop: onPop, paged: paged };

  new MutationObserver(function () {
    drawCharts(document, true);
    document.querySelectorAll("form.gamut-filters[data-filter-ready]").forEach(function (form) {
      applyFilters(form, false);
    });
  }).observe(document.body, {
    attributes: true, attributeFilter: ["data-md-color-scheme"]
  });

  /* The theme announces every page it shows (first load and instant navigation) on document$;
     opened from file:// it announces nothing, so the page is also set up once directly.
     Every step above is idempotent. */
  if (typeof document$ !== "undefined") {
    document$.subscribe(init);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", init);
  } else {
    init();
  }
})();
