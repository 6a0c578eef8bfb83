/**
 * A form built from a JSON schema (pydantic's `model_json_schema`, as GET /api/game sends a
 * game's opening and decision bodies): what a game with no screen module of its own is opened
 * and played with. An object is its fields, each labelled with its title; a list of objects is a
 * table (a row per item, a column per field, rows added and removed); a list of plain values is
 * one field of comma-separated values; a number or a text is a text field, a choice (enum or
 * true/false) a select. `read()` gives the body: empty fields left out, numbers as numbers, and a
 * text where a number belongs as typed, so the API's refusal names the field (the form never
 * guesses what was meant).
 *
 * Hooks: every field has data-key (its name in the body) and aria-label (its title); a list's
 * table is table[data-key], its rows tr[data-row="0.."], its "Add" button button.add-row[data-key].
 */
import { make } from "./dom.js";

/** @typedef {{[key: string]: any}} Schema */
/** @typedef {{node: HTMLElement, read: () => any}} Field */

export class SchemaForm {
  /** @param {Schema} schema the body's JSON schema */
  constructor(schema) {
    /** @type {Schema} */
    this.defs = schema.$defs ?? schema.definitions ?? {};
    const root = this.field(schema, "", "");
    /** @type {HTMLElement} the fields, to put in a form */
    this.node = root.node;
    /** @type {() => any} the body as the fields stand now */
    this.read = () => root.read() ?? {};
  }

  /**
   * The schema itself where it refers to a definition, and its one non-null branch where it is
   * optional (`anyOf: [X, null]`).
   * @param {Schema} schema
   * @returns {Schema}
   */
  resolve(schema) {
    let found = schema;
    for (let depth = 0; depth < 8; depth += 1) {
      if (found.$ref) {
        const name = String(found.$ref).split("/").pop() ?? "";
        found = { ...this.defs[name], ...withoutKeys(found, ["$ref"]) };
      } else if (found.anyOf || found.oneOf) {
        const branches = /** @type {Schema[]} */ (found.anyOf ?? found.oneOf).filter((b) => b.type !== "null");
        found = { ...(branches[0] ?? {}), ...withoutKeys(found, ["anyOf", "oneOf"]) };
      } else if (found.allOf?.length === 1) {
        found = { ...found.allOf[0], ...withoutKeys(found, ["allOf"]) };
      } else break;
    }
    return found;
  }

  /**
   * @param {Schema} raw
   * @param {string} key the field's name in the body ("" for the body itself)
   * @param {string} title
   * @returns {Field}
   */
  field(raw, key, title) {
    const schema = this.resolve(raw);
    if (schema.type === "object" || schema.properties) return this.object(schema, key, title);
    if (schema.type === "array") {
      const items = this.resolve(schema.items ?? {});
      if (items.type === "object" || items.properties) return this.rows(schema, items, key, title);
      return this.list(items, key, title);
    }
    return this.value(schema, key, title);
  }

  /**
   * @param {Schema} schema
   * @param {string} key
   * @param {string} title
   * @returns {Field}
   */
  object(schema, key, title) {
    const node = make(key ? "fieldset" : "div", undefined, "schema-object");
    node.dataset.key = key;
    if (key) node.append(make("legend", title));
    const fields = Object.entries(schema.properties ?? {}).map(([name, sub]) => {
      const field = this.field(sub, name, String(this.resolve(sub).title ?? sub.title ?? name));
      const row = make("div", undefined, "schema-field");
      if (field.node instanceof HTMLInputElement || field.node instanceof HTMLSelectElement) {
        const label = make("label", String(field.node.getAttribute("aria-label") ?? name));
        label.append(field.node);
        row.append(label);
      } else row.append(field.node);
      node.append(row);
      return /** @type {[string, Field]} */ ([name, field]);
    });
    return {
      node,
      read: () => {
        /** @type {Record<string, any>} */
        const body = {};
        for (const [name, field] of fields) {
          const value = field.read();
          if (value !== undefined) body[name] = value;
        }
        return Object.keys(body).length ? body : undefined;
      },
    };
  }

  /**
   * A list of objects: a table, a row per item and a column per field.
   * @param {Schema} schema
   * @param {Schema} items
   * @param {string} key
   * @param {string} title
   * @returns {Field}
   */
  rows(schema, items, key, title) {
    const node = make("fieldset", undefined, "schema-rows");
    node.dataset.key = key;
    const table = /** @type {HTMLTableElement} */ (make("table"));
    table.dataset.key = key;
    const columns = Object.entries(items.properties ?? {});
    const head = make("tr");
    for (const [name, sub] of columns) {
      const th = make("th", String(this.resolve(sub).title ?? sub.title ?? name));
      th.setAttribute("scope", "col");
      head.append(th);
    }
    head.append(make("th"));
    table.createTHead().append(head);
    const body = table.createTBody();
    /** @type {Array<{row: HTMLElement, fields: Array<[string, Field]>}>} */
    const rows = [];
    const renumber = () => rows.forEach((r, i) => (r.row.dataset.row = String(i)));
    const add = () => {
      const row = make("tr");
      /** @type {Array<[string, Field]>} */
      const fields = columns.map(([name, sub]) => [name, this.field(sub, name, String(this.resolve(sub).title ?? sub.title ?? name))]);
      for (const [, field] of fields) {
        const td = make("td");
        td.append(field.node);
        row.append(td);
      }
      const remove = /** @type {HTMLButtonElement} */ (make("button", "Remove", "quiet remove-row"));
      remove.type = "button";
      remove.addEventListener("click", () => {
        rows.splice(rows.findIndex((r) => r.row === row), 1);
        row.remove();
        renumber();
      });
      const td = make("td");
      td.append(remove);
      row.append(td);
      body.append(row);
      rows.push({ row, fields });
      renumber();
    };
    for (let i = 0; i < Math.max(1, Number(schema.minItems ?? 1)); i += 1) add();
    const more = /** @type {HTMLButtonElement} */ (make("button", `Add a row`, "quiet add-row"));
    more.type = "button";
    more.dataset.key = key;
    more.addEventListener("click", add);
    node.append(make("legend", title), table, more);
    return {
      node,
      read: () => {
        const list = rows
          .map(({ fields }) => {
            /** @type {Record<string, any>} */
            const item = {};
            for (const [name, field] of fields) {
              const value = field.read();
              if (value !== undefined) item[name] = value;
            }
            return Object.keys(item).length ? item : undefined;
          })
          .filter((item) => item !== undefined);
        return list.length ? list : undefined;
      },
    };
  }

  /**
   * A list of plain values: one field, comma-separated.
   * @param {Schema} items
   * @param {string} key
   * @param {string} title
   * @returns {Field}
   */
  list(items, key, title) {
    const input = textInput(key, `${title} (separated by commas)`);
    return {
      node: input,
      read: () => {
        const parts = input.value.split(",").map((part) => part.trim()).filter(Boolean);
        return parts.length ? parts.map((part) => typed(part, items)) : undefined;
      },
    };
  }

  /**
   * @param {Schema} schema
   * @param {string} key
   * @param {string} title
   * @returns {Field}
   */
  value(schema, key, title) {
    const choices = schema.enum ?? (schema.type === "boolean" ? [true, false] : null);
    if (choices) {
      const select = /** @type {HTMLSelectElement} */ (make("select"));
      select.dataset.key = key;
      select.setAttribute("aria-label", title);
      select.append(new Option("", ""), ...choices.map((/** @type {any} */ c) => new Option(String(c), JSON.stringify(c))));
      if (schema.default !== undefined && schema.default !== null) select.value = JSON.stringify(schema.default);
      return { node: select, read: () => (select.value === "" ? undefined : JSON.parse(select.value)) };
    }
    const input = textInput(key, title);
    if (schema.type === "integer" || schema.type === "number") input.inputMode = "numeric";
    if (schema.default !== undefined && schema.default !== null) input.value = String(schema.default);
    return { node: input, read: () => (input.value.trim() === "" ? undefined : typed(input.value.trim(), schema)) };
  }
}

/**
 * @param {string} key
 * @param {string} title
 */
function textInput(key, title) {
  const input = /** @type {HTMLInputElement} */ (make("input"));
  input.type = "text";
  input.autocomplete = "off";
  input.spellcheck = false;
  input.dataset.key = key;
  input.setAttribute("aria-label", title);
  return input;
}

/**
 * A typed text as the schema's type: a whole number or a number as a number, else the text as
 * typed (the API's refusal then names the field).
 * @param {string} text
 * @param {Schema} schema
 */
function typed(text, schema) {
  if (schema.type === "integer" && /^-?\d+$/.test(text)) return Number(text);
  if (schema.type === "number" && text !== "" && Number.isFinite(Number(text))) return Number(text);
  return text;
}

/**
 * @param {Schema} schema
 * @param {string[]} keys
 */
function withoutKeys(schema, keys) {
  return Object.fromEntries(Object.entries(schema).filter(([k]) => !keys.includes(k)));
}
