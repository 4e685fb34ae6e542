// What every page of the hub shares: the bearer token, kept in this browser, and the calls
// that carry it.
"use strict";
const $ = (id) => document.getElementById(id);

function token() { return localStorage.getItem("earshot-token") || ""; }

// fetch() with the token. A refused token brings the login form back.
async function api(path, options = {}) {
  options.headers = Object.assign({ Authorization: "Bearer " + token() }, options.headers || {});
  const response = await fetch(path, options);
  if (response.status === 401) $("login").classList.remove("hidden");
  return response;
}

// The sentence in an error reply ({"error":{"message":…}}), or its text.
function reasonIn(text) {
  try { return JSON.parse(text).error.message || text; } catch { return text; }
}

// A JSON call: the parsed answer, or an Error with the hub's message.
async function call(method, path, body, contentType = "application/json") {
  const encoded = body === undefined || body instanceof ArrayBuffer ? body : JSON.stringify(body);
  const response = await api(path, { method, headers: { "Content-Type": contentType }, body: encoded });
  const text = await response.text();
  if (response.status === 401) throw new Error("the token was refused");
  if (!response.ok) throw new Error(reasonIn(text));
  return JSON.parse(text);
}

// The token from a link (#token=… as `earshot serve` prints it, or ?token=…) or the login form
// under the page's header; `start` runs once there is one.
function signIn(start) {
  const form = document.createElement("form");
  form.id = "login";
  form.className = "hidden";
  form.innerHTML = '<label>Token <input id="token" type="password" autocomplete="off" size="36"></label> <button>Connect</button>';
  document.querySelector("header").after(form);
  const fromLink = new URLSearchParams(location.hash.slice(1)).get("token") || new URLSearchParams(location.search).get("token");
  if (fromLink) { localStorage.setItem("earshot-token", fromLink); history.replaceState(null, "", location.pathname); }
  $("login").addEventListener("submit", (e) => {
    e.preventDefault();
    localStorage.setItem("earshot-token", $("token").value.trim());
    $("login").classList.add("hidden");
    start();
  });
  if (token()) start(); else $("login").classList.remove("hidden");
}
