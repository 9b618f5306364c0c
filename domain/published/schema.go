package published

// JSONSchema is flower/v1 as a JSON Schema, published at
// docs/schemas/flower-v1.schema.json (a test keeps the two equal). Parse
// checks exactly this, and the rules it says in words.
const JSONSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "$id": "https://petal.near/schemas/flower-v1.schema.json",
  "title": "flower/v1",
  "description": "A flower published to NEAR: written by its maker's own transaction to SocialDB at <made_by>/petal/flower/<id>, as the string of its canonical JSON (RFC 8785). Its id is the lower-case hex SHA-256 of that canonical JSON. Beyond this schema: the spec draws the snapshot named here, and a site draws it only when it stores that snapshot.",
  "type": "object",
  "additionalProperties": false,
  "required": ["schema", "spec", "snapshot", "about", "map", "made_by", "made_at"],
  "properties": {
    "schema": { "const": "flower/v1" },
    "spec": { "$ref": "https://petal.near/schemas/flower-spec-v1.schema.json" },
    "snapshot": {
      "description": "The sha256 of the snapshot the spec draws: the spec's own snapshot.",
      "type": "string",
      "pattern": "^[0-9a-f]{64}$"
    },
    "name": {
      "description": "What its maker calls it: plain text on one line, not blank, at most 80 characters. Absent for no name.",
      "type": "string",
      "minLength": 1,
      "maxLength": 80
    },
    "about": {
      "description": "What was read and where, in people's words (its reader's title and its chain): plain text on one line, at most 500 characters.",
      "type": "string",
      "minLength": 1,
      "maxLength": 500
    },
    "map": {
      "description": "The map it belongs to: <chain>:<address> (a CAIP-2 chain and the DAO, pool or token read, an EVM address in lower case: near:mainnet:marketing.sputnik-dao.near), or <chain>:population for a whole network.",
      "type": "string",
      "maxLength": 200,
      "pattern": "^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}:[-.%a-zA-Z0-9]{1,128}$"
    },
    "made_by": {
      "description": "The NEAR account that published it: the account it is stored under.",
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
