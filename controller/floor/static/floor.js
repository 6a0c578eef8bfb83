// The floor page: the board of `tablectl floor`, asked of the server every 2 s (read-only).
// Tables with open faults always come first, then offline ones; a column head sorts the rest.
const EVERY_MS = 2000;
const NUMERIC = new Set(["SEQ", "ROUNDS", "WAGERED", "PAID"]);
const view = { board: null, sortBy: null, descending: false };

const $ = (id) => document.getElementById(id);

function cell(tag, text, className) {
  const node = document.createElement(tag);
  node.textContent = text; // never HTML: every value comes from the broker
  if (className) node.className = className;
  return node;
}

function urgency(table) {
  return table.faults > 0 ? 0 : table.online ? 2 : 1;
}

function compare(a, b, index) {
  const x = a.row[index], y = b.row[index];
  const nx = Number(x), ny = Number(y);
  if (x !== "-" && y !== "-" && !Number.isNaN(nx) && !Number.isNaN(ny)) return nx - ny;
  return x.localeCompare(y);
}

function shown() {
  const board = view.board;
  const pit = $("pit").value;
  const tables = board.tables.filter((t) => pit === "" || t.pit === pit);
  if (view.sortBy !== null) {
    const index = board.columns.indexOf(view.sortBy);
    const sign = view.descending ? -1 : 1;
    tables.sort((a, b) => urgency(a) - urgency(b) || sign * compare(a, b, index));
  }
  return tables;
}

function drawHeads(columns) {
  const heads = $("heads");
  if (heads.children.length === columns.length) return;
  heads.replaceChildren(...columns.map((name) => {
    const th = cell("th", name);
    th.dataset.column = name;
    th.addEventListener("click", () => {
      view.descending = view.sortBy === name ? !view.descending : false;
      view.sortBy = name;
      draw();
    });
    return th;
  }));
}

function drawPits(pits) {
  const select = $("pit");
  const have = [...select.options].slice(1).map((o) => o.value);
  if (have.join("\n") === pits.join("\n")) return;
  const chosen = select.value;
  select.replaceChildren(cell("option", "all pits"), ...pits.map((p) => cell("option", p)));
  select.options[0].value = "";
  select.value = pits.includes(chosen) ? chosen : "";
}

function draw() {
  const board = view.board;
  if (board === null) return;
  drawHeads(board.columns);
  drawPits(board.pits);
  for (const th of $("heads").children) {
    th.setAttribute("aria-sort", th.dataset.column === view.sortBy ? (view.descending ? "descending" : "ascending") : "none");
  }
  const tables = shown();
  const faulted = tables.filter((t) => t.faults > 0).length;
  const offline = tables.filter((t) => !t.online).length;
  const pit = $("pit").value;
  $("summary").textContent =
    `${tables.length} table(s): ${faulted} with faults, ${offline} OFFLINE` + (pit ? ` in pit ${pit}` : "");
  $("rows").replaceChildren(...tables.map((t) => {
    const tr = document.createElement("tr");
    tr.dataset.table = t.row[board.columns.indexOf("TABLE")];
    if (t.faults > 0) tr.className = "faulted";
    else if (!t.online) tr.className = "offline";
    tr.append(...t.row.map((text, i) => cell("td", text, NUMERIC.has(board.columns[i]) ? "num" : "")));
    return tr;
  }));
  const empty = $("empty");
  empty.hidden = tables.length > 0;
  empty.textContent = board.tables.length === 0 ? "No table has published yet." : `No table in pit ${pit}.`;
  const refused = $("refused");
  refused.hidden = board.refused === 0;
  refused.textContent = `${board.refused} message(s) not understood; the last: ${board.last_refusal}`;
  $("source").textContent = board.header;
}

function connection(status, words) {
  const node = $("connection");
  node.dataset.status = status;
  node.textContent = words;
}

async function refresh() {
  try {
    const answer = await fetch("/api/floor", { cache: "no-store", credentials: "same-origin" });
    if (!answer.ok) throw new Error(`the server answered ${answer.status}`);
    view.board = await answer.json();
    connection("live", `updated ${new Date().toLocaleTimeString()}`);
    draw();
  } catch (error) {
    connection("trouble", `no board from tablectl floor: ${error.message}; retrying`);
  } finally {
    setTimeout(refresh, EVERY_MS);
  }
}

$("pit").addEventListener("change", draw);
refresh();
