/* The run diff page: the shown topic's row is scrolled into view in its list; j (or n)
 * opens the next topic, k (or p) the previous one, following the page's own links
 * (#next-topic, #previous-topic), so the server decides the order. Keys typed into a form
 * field are left alone. No inline script: the page runs under a strict Content Security
 * Policy. */
(() => {
  "use strict";
  // Keep the shown topic's row in view inside the scrolling topics list (not the page).
  const current = document.querySelector("#diff-topics tr.current");
  const box = current && current.closest(".table-scroll");
  if (box) {
    const offset = current.getBoundingClientRect().top - box.getBoundingClientRect().top;
    box.scrollTop = Math.max(0, box.scrollTop + offset - box.clientHeight / 2);
  }

  const KEYS = { j: "next-topic", n: "next-topic", k: "previous-topic", p: "previous-topic" };
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    const target = event.target;
    if (target && (target.isContentEditable || /^(INPUT|SELECT|TEXTAREA)$/.test(target.tagName))) return;
    const id = KEYS[event.key];
    const link = id && document.getElementById(id);
    if (!link) return;
    event.preventDefault();
    window.location.assign(link.href);
  });
})();
