package specs

// SpecJSONSchema is flower-spec/v1 as a JSON Schema, published at
// docs/schemas/flower-spec-v1.schema.json (a test keeps the two equal) and
// used as the spec's part of the tools' input schemas. ParseSpec checks
// exactly this, with one problem per JSON Pointer path.
const SpecJSONSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://petal.near/schemas/flower-spec-v1.schema.json",
  "title": "flower-spec/v1",
  "description": "Which accounts of a snapshot become petals, and how they are sized, coloured, labelled and ordered. Its name is the lower-case hex SHA-256 of its canonical JSON (RFC 8785), with petals.min_share and petals.groups written out (0 and [] when absent). Beyond this schema: every group in petals.groups is one of the snapshot's groups, and the snapshot is stored on the site that draws it.",
  "type": "object",
  "additionalProperties": false,
  "required": ["schema", "snapshot", "title", "petals", "size", "colour", "labels", "order", "legend", "others"],
  "properties": {
    "schema": { "const": "flower-spec/v1" },
    "snapshot": {
      "description": "The sha256 of the snapshot it draws.",
      "type": "string",
      "pattern": "^[0-9a-f]{64}$"
    },
    "title": {
      "type": "string",
      "minLength": 1,
      "maxLength": 200,
      "description": "Not blank: at least one character that is not white space.",
      "pattern": "[^\\t\\n\\v\\f\\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
    },
    "petals": {
      "description": "The top largest accounts (after the group filter) whose share of the snapshot's total is at least min_share are petals of their own. Unless size is equal, accounts of zero weight never are.",
      "type": "object",
      "additionalProperties": false,
      "required": ["top"],
      "properties": {
        "top": { "type": "integer", "minimum": 1, "maximum": 60 },
        "min_share": { "type": "number", "minimum": 0, "maximum": 1, "default": 0 },
        "groups": {
          "description": "Only accounts in one of these groups are drawn; empty for every account.",
          "type": "array",
          "maxItems": 64,
          "uniqueItems": true,
          "items": { "type": "string", "minLength": 1 },
          "default": []
        }
      }
    },
    "size": {
      "description": "What a petal's area is proportional to.",
      "enum": ["weight", "equal", "sqrt"]
    },
    "colour": {
      "description": "group: the account's first group in the snapshot's order (six groups at most get a colour; the rest share a grey). band: its share of the total, 10% or more, 1% to 10%, 0.1% to 1%, less.",
      "enum": ["group", "band"]
    },
    "labels": { "description": "name: the account's label, or its account id, and its share.", "enum": ["name", "none"] },
    "order": {
      "description": "Clockwise from twelve o'clock; the others petal is always last.",
      "enum": ["weight", "group", "name"]
    },
    "legend": { "description": "Draw the legend in the picture.", "type": "boolean" },
    "others": {
      "description": "fold: accounts that are not petals fold into one grey petal. hide: they are not drawn.",
      "enum": ["fold", "hide"]
    }
  }
}
`

// ViewJSONSchema is view/v1, published at docs/schemas/view-v1.schema.json.
const ViewJSONSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://petal.near/schemas/view-v1.schema.json",
  "title": "view/v1",
  "description": "How flowers are drawn for someone: the palette and which labels show. It never changes what a flower says. Absent members take the default view's: okabe-ito, spec, 0.",
  "type": "object",
  "additionalProperties": false,
  "required": ["schema"],
  "properties": {
    "schema": { "const": "view/v1" },
    "palette": {
      "description": "Colour-blind-safe qualitative palettes: Okabe–Ito, Paul Tol's bright and muted.",
      "enum": ["okabe-ito", "tol-bright", "tol-muted"]
    },
    "labels": { "description": "spec: as the spec says. none: no labels.", "enum": ["spec", "none"] },
    "max_labels": {
      "description": "Label at most this many petals, the largest first; 0 for no limit.",
      "type": "integer",
      "minimum": 0,
      "maximum": 61
    }
  }
}
`
