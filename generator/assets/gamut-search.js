/* GAMUT leaderboard: the theme's header search loads its index (every page's text, the largest
   file of a first load) and starts its worker only when a visitor opens the search, not on every
   page load. Loaded before the theme's bundle (mkdocs.yml, extra.polyfills). Over HTTP only: a
   site opened from a folder (file://) runs the search through the iframe-worker shim, which
   loads the index as a script and is left as it is. */
(function () {
  "use strict";
  if (location.protocol === "file:" || !window.XMLHttpRequest || !window.Worker) {
    return;
  }
  var wanted = false;
  var waiting = [];
  function want() {
    if (wanted) {
      return;
    }
    wanted = true;
    waiting.splice(0).forEach(function (go) { go(); });
  }
  function later(go) {
    if (wanted) {
      go();
    } else {
      waiting.push(go);
    }
  }
  function isSearch(el) {
    return !!(el && el.closest && el.closest(".md-search, label[for='__search']"));
  }
  /* what opens the search: a click or focus on it, its toggle, or one of the theme's keyboard
     shortcuts ("/", "s", "f") */
  document.addEventListener("focusin", function (e) { if (isSearch(e.target)) { want(); } }, true);
  document.addEventListener("pointerdown", function (e) { if (isSearch(e.target)) { want(); } }, true);
  document.addEventListener("change", function (e) {
    if (e.target && e.target.id === "__search") { want(); }
  }, true);
  document.addEventListener("keydown", function (e) {
    if (/^[/sf]$/i.test(e.key)) { want(); }
  }, true);

  var INDEX = /\/search\/search_index\.json$/;
  var open = XMLHttpRequest.prototype.open;
  var send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.open = function (method, url) {
    try {
      this.gamutDeferred = INDEX.test(new URL(String(url), location.href).pathname);
    } catch (err) {
      this.gamutDeferred = false;  /* not a URL the page can resolve: the request says so */
    }
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    var xhr = this;
    var args = arguments;
    if (!xhr.gamutDeferred) {
      return send.apply(xhr, args);
    }
    later(function () { send.apply(xhr, args); });
  };

  /* The search worker: started with the first message the theme sends it (the index, which
     arrives only once the search is opened). */
  var RealWorker = window.Worker;
  var SEARCH_WORKER = /\/workers\/search\.[^/]*\.js$/;
  function LazyWorker(url, options) {
    var target = new EventTarget();
    var real = null;
    target.postMessage = function (message, transfer) {
      if (!real) {
        real = new RealWorker(url, options);
        ["message", "messageerror", "error"].forEach(function (type) {
          real.addEventListener(type, function (e) {
            target.dispatchEvent(new e.constructor(e.type, e));
          });
        });
      }
      real.postMessage(message, transfer);
    };
    target.terminate = function () {
      if (real) {
        real.terminate();
      }
    };
    return target;
  }
  window.Worker = function (url, options) {
    var path = "";
    try {
      path = new URL(String(url), location.href).pathname;
    } catch (err) {
      path = "";
    }
    return SEARCH_WORKER.test(path) ? LazyWorker(url, options) : new RealWorker(url, options);
  };
  window.Worker.prototype = RealWorker.prototype;
})();
