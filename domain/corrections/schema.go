package corrections

// JSONSchema is correction/v1 as a JSON Schema, published at
// docs/schemas/correction-v1.schema.json (a test keeps the two equal). Parse
// checks exactly this, and the rules it says in words.
const JSONSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://petal.near/schemas/correction-v1.schema.json",
  "title": "correction/v1",
  "description": "A person saying a published flower is wrong: written by its maker's own transaction to SocialDB at <made_by>/petal/correction/<id>, on the network the flower is published on, as the string of its canonical JSON (RFC 8785). Its id is the lower-case hex SHA-256 of that canonical JSON. A site keeps it only when it holds the flower, and shows it beside the flower without changing the flower.",
  "type": "object",
  "additionalProperties": false,
  "required": ["schema", "flower", "kind", "reason", "evidence", "made_by", "made_at"],
  "properties": {
    "schema": { "const": "correction/v1" },
    "flower": {
      "description": "The id of the flower/v1 it corrects.",
      "type": "string",
      "pattern": "^[0-9a-f]{64}$"
    },
    "kind": {
      "description": "What is wrong: the reading is stale, a label misleads, an account is in the wrong group, or other.",
      "enum": ["stale_reading", "misleading_label", "misassigned_group", "other"]
    },
    "reason": {
      "description": "Why, in the maker's words: plain text on one line, not blank, at most 500 characters.",
      "type": "string",
      "minLength": 1,
      "maxLength": 500
    },
    "evidence": {
      "description": "What the correction rests on, as a claim's evidence: what the flower says that is wrong, what is right, and links that show it.",
      "type": "object",
      "additionalProperties": false,
      "required": ["wrong", "right", "links"],
      "properties": {
        "wrong": { "description": "What the flower says that is wrong: plain text on one line, at most 500 characters.", "type": "string", "minLength": 1, "maxLength": 500 },
        "right": { "description": "What is right: plain text on one line, at most 500 characters.", "type": "string", "minLength": 1, "maxLength": 500 },
        "links": {
          "description": "At most 8 https:// links (a host, no user or password, printable ASCII, at most 512 bytes each).",
          "type": "array",
          "maxItems": 8,
          "items": { "type": "string", "minLength": 9, "maxLength": 512, "pattern": "^https://[^\\s/@]+(/\\S*)?$" }
        }
      }
    },
    "subject": {
      "description": "The account it is about, CAIP-10 (near:mainnet:alice.near), when it is about one petal. Absent for none.",
      "type": "string",
      "pattern": "^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}:[-.%a-zA-Z0-9_]{1,128}$"
    },
    "made_by": {
      "description": "The NEAR account that published it: the account it is stored under, and the transaction's signer.",
      "type": "string",
      "minLength": 2,
      "maxLength": 64,
      "pattern": "^(([a-z\\d]+[\\-_])*[a-z\\d]+\\.)*([a-z\\d]+[\\-_])*[a-z\\d]+$"
    },
    "made_at": {
      "description": "When it was made, RFC 3339 in UTC.",
      "type": "string",
      "format": "date-time",
      "pattern": "Z$"
    }
  }
}
`
