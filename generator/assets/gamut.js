/* GAMUT leaderboard: draws charts from data-figure attributes and makes tables sortable and
   filterable. Runs on every page the theme shows, on first load and after instant navigation. */
(function () {
  "use strict";

  function dark() {
    return document.body.getAttribute("data-md-color-scheme") === "slate";
  }

  function themed(layout) {
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
    });
    return out;
  }

  function drawCharts(root, force) {
    if (typeof Plotly === "undefined") { return; }
    root.querySelectorAll("[data-figure]").forEach(function (el) {
      if (!force && el.hasAttribute("data-drawn")) { return; }
      el.setAttribute("data-drawn", "true");
      el.removeAttribute("data-rendered");
      var fig = JSON.parse(el.getAttribute("data-figure"));
      Plotly.react(el, fig.data, themed(fig.layout), {
        responsive: true, displayModeBar: false, displaylogo: false
      }).then(function () { el.setAttribute("data-rendered", "true"); });
    });
  }

  function cellKey(row, index, numeric) {
    var cell = row.cells[index];
    var raw = cell ? cell.getAttribute("data-sort") : "";
    if (!numeric) { return raw.toLowerCase(); }
    var n = parseFloat(raw);
    return isNaN(n) ? null : n;
  }

  function sortBy(table, index, button) {
    var th = button.closest("th");
    var ascending = th.getAttribute("aria-sort") !== "ascending";
    var numeric = button.getAttribute("data-type") === "num";
    table.querySelectorAll("thead th").forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = cellKey(a, index, numeric), y = cellKey(b, index, numeric);
      if (x === y) { return 0; }
      if (x === null || x === "") { return 1; }
      if (y === null || y === "") { return -1; }
      return (x < y ? -1 : 1) * (ascending ? 1 : -1);
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }

  function initSorting(root) {
    root.querySelectorAll("table[data-sortable]").forEach(function (table) {
      if (table.getAttribute("data-sort-ready")) { return; }
      table.setAttribute("data-sort-ready", "1");
      table.querySelectorAll("thead th").forEach(function (th, index) {
        var button = th.querySelector("button.gamut-sort");
        if (button) {
          button.addEventListener("click", function () { sortBy(table, index, button); });
        }
      });
    });
  }

  function applyFilters(form) {
    var target = document.getElementById(form.getAttribute("data-target"));
    if (!target) { return; }
    var wanted = {};
    form.querySelectorAll("[data-filter]").forEach(function (input) {
      var name = input.getAttribute("data-filter");
      wanted[name] = input.type === "checkbox" ? (input.checked ? input.value : "") : input.value;
    });
    target.querySelectorAll("tbody tr").forEach(function (row) {
      var show = Object.keys(wanted).every(function (name) {
        return !wanted[name] || row.getAttribute("data-" + name) === wanted[name];
      });
      row.hidden = !show;
    });
  }

  function initFilters(root) {
    root.querySelectorAll("form.gamut-filters").forEach(function (form) {
      if (form.getAttribute("data-filter-ready")) { return; }
      form.setAttribute("data-filter-ready", "true");
      form.addEventListener("submit", function (event) { event.preventDefault(); });
      form.addEventListener("change", function () { applyFilters(form); });
      applyFilters(form);
    });
  }

  function nameDialogs() {
    /* the theme's search overlay is a dialog without a name */
    document.querySelectorAll(".md-search[role=dialog]:not([aria-label])").forEach(function (el) {
      el.setAttribute("aria-label", "Search");
    });
  }

  function init() {
    nameDialogs();
    drawCharts(document, false);
    initSorting(document);
    initFilters(document);
  }

  new MutationObserver(function () { drawCharts(document, true); }).observe(document.body, {
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
