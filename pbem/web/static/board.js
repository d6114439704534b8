/* The web board's script: move checkers by hand (mouse, touch and pen, through Pointer Events)
   among the steps the server sent (the graph of the legal plays: this script knows no rules),
   undo, send the move through the page's own form, and notice when the game moves on.
   Without it the page still works: the board is drawn by the server, the move is typed. */
(function () {
  "use strict";
  var SVG_NS = "http://www.w3.org/2000/svg";
  var POLL_MS = 5000;
  var MAX_POLL_MS = 300000;
  document.documentElement.classList.add("js");

  function readData() {
    var element = document.getElementById("play-data");
    return element ? JSON.parse(element.textContent) : null;
  }

  function pollForChanges(busy) {
    // One poll at a time, every POLL_MS; none while the tab is hidden (a poll on its return);
    // after a 429 the wait doubles, at least to the server's Retry-After, up to MAX_POLL_MS.
    var page = document.getElementById("page");
    if (!page || !window.fetch) return;
    var version = page.getAttribute("data-version");
    var url = window.location.pathname.replace(/\/$/, "") + "/state";
    var delay = POLL_MS, dueAt = Date.now() + POLL_MS, timer = null, asking = false;

    function schedule() {
      window.clearTimeout(timer);
      timer = null;
      if (asking || document.visibilityState === "hidden") return;
      timer = window.setTimeout(poll, Math.max(0, dueAt - Date.now()));
    }
    function poll() {
      timer = null;
      asking = true;
      fetch(url, { cache: "no-store", credentials: "omit" }).then(function (answer) {
        if (answer.status === 429) {
          var wait = parseInt(answer.headers.get("Retry-After"), 10) * 1000 || 0;
          delay = Math.min(MAX_POLL_MS, Math.max(delay * 2, wait));
          return answer.text().then(function () { return null; });  // read out: frees the connection
        }
        delay = POLL_MS;
        return answer.ok ? answer.json() : answer.text().then(function () { return null; });
      }).then(function (state) {
        if (state && state.version !== version) {
          if (!busy()) {
            window.location.replace(window.location.pathname);
            return;
          }
          document.getElementById("update").hidden = false;  // never throw away a move in hand
        }
        finish();
      }).catch(finish);  // offline for a moment: try again later
    }
    function finish() {
      asking = false;
      dueAt = Date.now() + delay;
      schedule();
    }
    document.addEventListener("visibilitychange", function () {
      if (document.visibilityState !== "hidden" && delay === POLL_MS) dueAt = Date.now();  // back: look now
      schedule();
    });
    schedule();
  }

  function Board(data) {
    this.svg = document.getElementById("board");
    this.layout = data.layout;
    this.graph = data.graph;
    this.counts = { me: data.counts.me.slice(), them: data.counts.them.slice() };
    this.node = 0;
    this.taken = [];  // [{step, hit, counts before}]
    this.labels = {};
    var points = this.svg.querySelectorAll("polygon.point");
    for (var i = 0; i < points.length; i++) {
      this.labels[points[i].getAttribute("data-point")] = points[i].getAttribute("data-label");
    }
    this.hint = document.getElementById("hint");
    // The page says how to type a move (all it offers without this script); with it, how to drag.
    this.hintText = this.hint ? this.hint.getAttribute("data-drag") : "";
    this.say(this.hintText);
    this.undoButton = document.getElementById("undo");
    this.sendButton = document.getElementById("send");
    this.moveInput = document.getElementById("move");
    this.chosen = document.getElementById("chosen");
    this.chosenMove = document.getElementById("chosen-move");
    var board = this;
    this.undoButton.addEventListener("click", function () { board.undo(); });
    this.svg.addEventListener("pointerdown", function (event) { board.grab(event); });
    this.draw();
  }

  Board.prototype.stepsFrom = function (point) {
    return this.graph[this.node].steps.filter(function (step) { return step[0] === point; });
  };

  Board.prototype.draw = function () {
    var group = this.svg.querySelector("#checkers");
    while (group.firstChild) group.removeChild(group.firstChild);
    var layout = this.layout, rows = layout.rows, size = layout.checker;
    var sides = ["me", "them"];
    for (var s = 0; s < sides.length; s++) {
      var side = sides[s], colours = layout.colours[side];
      for (var point = 1; point <= 25; point++) {
        var count = this.counts[side][point], places = layout.places[side][point];
        var movable = side === "me" && this.stepsFrom(point).length > 0;
        for (var place = 0; place < Math.min(count, rows); place++) {
          var tall = count > rows && place === rows - 1;
          group.appendChild(checker(side, point, places[place], size, colours, tall ? String(count) : null, movable));
        }
      }
      var tray = layout.tray;
      for (var index = 0; index < this.counts[side][0]; index++) {
        var y = tray[side].top ? tray.top + index * tray.slab : tray.bottom - (index + 1) * tray.slab;
        group.appendChild(element("rect", { "class": "off " + side, x: tray.left, y: y + 1,
          width: tray.right - tray.left, height: tray.slab - 2, fill: colours[0], stroke: colours[1] }));
      }
    }
    var node = this.graph[this.node];
    this.undoButton.hidden = this.taken.length === 0;
    this.sendButton.classList.toggle("ready", Boolean(node.move));
    this.moveInput.value = node.move || "";
    this.chosen.hidden = this.taken.length === 0;
    this.chosenMove.textContent = node.move || this.taken.map(function (taken) {
      return this.name(taken.step[0]) + "/" + this.name(taken.step[1]) + (taken.step[2] ? "*" : "");
    }, this).join(" ");
  };

  Board.prototype.name = function (point) {
    return point === 25 ? "bar" : point === 0 ? "off" : this.labels[String(point)];
  };

  Board.prototype.say = function (text) {
    if (this.hint) this.hint.textContent = text;
  };

  Board.prototype.svgPoint = function (event) {
    var point = this.svg.createSVGPoint();
    point.x = event.clientX;
    point.y = event.clientY;
    return point.matrixTransform(this.svg.getScreenCTM().inverse());
  };

  Board.prototype.grab = function (event) {
    var target = event.target.closest ? event.target.closest("g.checker") : null;
    if (!target) return;
    event.preventDefault();
    if (!target.classList.contains("me")) {
      this.say(this.text("data-theirs"));
      return;
    }
    if (!target.classList.contains("movable")) {
      this.say(this.whyNot(Number(target.getAttribute("data-point"))));
      return;
    }
    var board = this, from = Number(target.getAttribute("data-point"));
    var steps = this.stepsFrom(from);
    var start = this.svgPoint(event);
    var origin = target.getAttribute("transform");
    target.classList.add("dragging");  // no pointer events: the point under the finger is found on release
    target.parentNode.appendChild(target);
    this.highlight(steps, true);
    try { this.svg.setPointerCapture(event.pointerId); } catch (ignored) { /* synthetic pointers */ }

    function move(moved) {
      var at = board.svgPoint(moved);
      target.setAttribute("transform", origin + " translate(" + (at.x - start.x) + "," + (at.y - start.y) + ")");
    }
    function release(released) {
      board.svg.removeEventListener("pointermove", move);
      board.svg.removeEventListener("pointerup", release);
      board.svg.removeEventListener("pointercancel", release);
      board.highlight(steps, false);
      var to = board.pointAt(released);
      var chosen = steps.filter(function (step) { return step[1] === to; })[0];
      if (chosen) {
        board.take(chosen);
      } else {
        target.setAttribute("transform", origin);
        target.classList.remove("dragging");
        if (to === null) board.say(board.text("data-off-board").replace("{points}", board.targets(steps)));
        else if (to !== from) board.say(board.refusal(from, to, steps));
      }
    }
    this.svg.addEventListener("pointermove", move);
    this.svg.addEventListener("pointerup", release);
    this.svg.addEventListener("pointercancel", release);
  };

  Board.prototype.text = function (name) {
    return this.hint.getAttribute(name);  // worded by the page's template, in its language
  };

  Board.prototype.targets = function (steps) {
    return steps.map(function (step) { return this.name(step[1]); }, this).join(", ");
  };

  Board.prototype.refusal = function (from, to, steps) {
    return this.text("data-refused").replace("{step}", this.name(from) + "/" + this.name(to))
      .replace("{points}", this.targets(steps));
  };

  Board.prototype.whyNot = function (point) {
    // Why a checker of the player's does not move: the dice are used, the bar comes first, or no die fits.
    if (this.graph[this.node].steps.length === 0) return this.text("data-complete");
    if (this.counts.me[25] > 0 && point !== 25) return this.text("data-bar-first");
    return this.text("data-immovable").replace("{point}", this.name(point));
  };

  Board.prototype.pointAt = function (event) {
    var found = document.elementsFromPoint(event.clientX, event.clientY);
    for (var i = 0; i < found.length; i++) {
      if (found[i].classList && (found[i].classList.contains("zone") || found[i].classList.contains("point"))) {
        return Number(found[i].getAttribute("data-point"));
      }
    }
    return null;
  };

  Board.prototype.highlight = function (steps, on) {
    for (var i = 0; i < steps.length; i++) {
      var shown = this.svg.querySelectorAll('[data-point="' + steps[i][1] + '"]:not(.checker)');
      for (var j = 0; j < shown.length; j++) shown[j].classList.toggle("target", on);
    }
  };

  Board.prototype.take = function (step) {
    var before = { me: this.counts.me.slice(), them: this.counts.them.slice() };
    this.counts.me[step[0]] -= 1;
    this.counts.me[step[1]] += 1;
    if (step[2]) {
      this.counts.them[step[1]] -= 1;
      this.counts.them[25] += 1;
    }
    this.taken.push({ step: step, node: this.node, counts: before });
    this.node = step[3];
    var marks = this.svg.querySelectorAll(".mark");
    for (var i = 0; i < marks.length; i++) marks[i].parentNode.removeChild(marks[i]);
    this.say(this.hintText);
    this.draw();
  };

  Board.prototype.undo = function () {
    var last = this.taken.pop();
    if (!last) return;
    this.counts = last.counts;
    this.node = last.node;
    this.say(this.hintText);
    this.draw();
  };

  function element(name, attributes) {
    var made = document.createElementNS(SVG_NS, name);
    for (var key in attributes) made.setAttribute(key, attributes[key]);
    return made;
  }

  function checker(side, point, place, size, colours, count, movable) {
    var half = size / 2;
    var group = element("g", { "class": "checker " + side + (movable ? " movable" : ""), "data-point": point,
      transform: "translate(" + place[0] + "," + place[1] + ")" });
    group.appendChild(element("circle", { cx: half, cy: half, r: half - 1, fill: colours[1] }));
    group.appendChild(element("circle", { cx: half, cy: half, r: half - 3, fill: colours[0] }));
    group.appendChild(element("circle", { cx: half, cy: half, r: half - 10, fill: "none", stroke: colours[1] }));
    if (count) {
      var text = element("text", { x: half, y: half + 1, "font-size": 17, "font-weight": "bold",
        "text-anchor": "middle", "dominant-baseline": "central", fill: colours[2] });
      text.textContent = count;
      group.appendChild(text);
    }
    return group;
  }

  document.addEventListener("DOMContentLoaded", function () {
    var data = readData();
    var board = data && data.graph && document.getElementById("board") ? new Board(data) : null;
    window.pbemBoard = board;
    pollForChanges(function () { return board !== null && board.taken.length > 0; });
  });
})();
