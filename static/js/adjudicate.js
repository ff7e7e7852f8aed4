// Keyboard for the lead's adjudication pages.
// The decision page: a number picks the grade and moves to the reason, Enter in the reason
// decides (the form's own submit), j/k or the arrows go to the next or previous disputed
// pair, q back to the queue, r to the reason.
// The disagreement queue: Enter or j opens the first pair of the list (its [data-first]
// link), so a lead can work through the queue without the mouse.
// Keys typed into a field are the field's own, except Escape, which leaves it.
(() => {
  "use strict";
  const plainKey = (event) => !(event.altKey || event.ctrlKey || event.metaKey);
  const typing = (event) => event.target.closest("input, textarea, select");

  const form = document.getElementById("decide-form");
  if (!form) {
    const first = document.querySelector("a[data-first]");
    if (!first) return;
    document.addEventListener("keydown", (event) => {
      if (!plainKey(event) || typing(event)) return;
      // Enter on a focused link or button is the browser's own: it follows that one.
      if (event.key === "Enter" && event.target.closest("a, button")) return;
      if (event.key === "Enter" || event.key === "j") {
        event.preventDefault();
        window.location.assign(first.href);
      }
    });
    return;
  }

  const reason = form.querySelector("#reason");
  const follow = (key) => {
    const link = document.querySelector(`[data-key="${key}"]`);
    if (link) window.location.assign(link.href);
  };
  document.addEventListener("keydown", (event) => {
    if (!plainKey(event)) return;
    if (event.target.closest("input[type=text], textarea")) {
      if (event.key === "Escape") event.target.blur();
      return;
    }
    const choice = form.querySelector(`input[name=grade][data-key="${event.key}"]`);
    if (choice) {
      choice.checked = true;
      reason.focus();
      event.preventDefault();
      return;
    }
    const moves = { j: "next", ArrowRight: "next", k: "prev", ArrowLeft: "prev", q: "queue" };
    if (moves[event.key]) {
      follow(moves[event.key]);
      event.preventDefault();
    } else if (event.key === "r") {
      reason.focus();
      event.preventDefault();
    }
  });
})();
