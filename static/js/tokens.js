// The API tokens page: copy a new key to the clipboard, and ask before revoking a token.
document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-copy]");
  if (!button) return;
  const field = document.getElementById(button.dataset.copy);
  field.select();
  if (!navigator.clipboard) {
    button.textContent = "Press Ctrl+C";
    return;
  }
  navigator.clipboard.writeText(field.value).then(
    () => { button.textContent = "Copied"; },
    () => { button.textContent = "Press Ctrl+C"; },
  );
});

document.addEventListener("submit", (event) => {
  const question = event.target.dataset.confirm;
  if (question && !window.confirm(question)) event.preventDefault();
});
