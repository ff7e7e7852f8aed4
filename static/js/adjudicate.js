// Keyboard for the lead's decision page: a number picks the grade and moves to the reason,
// Enter in the reason decides (the form's own submit), j/k or the arrows go to the next or
// previous disputed pair, q back to the queue, r to the reason. Keys typed into a field are
// the field's own, except Escape, which leaves it.
(() => {
  "use strict";
  const form = document.getElementById("decide-form");
  if (!form) return;
  const reason = form.querySelector("#reason");
  const follow = (key) => {
    const link = document.querySelector(`[data-key="${key}"]`);
    if (link) window.location.assign(link.href);
  };
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const typing = event.target.closest("input[type=text], textarea");
    if (typing) {
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
