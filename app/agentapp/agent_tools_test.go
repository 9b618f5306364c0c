package agentapp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestAToolsAnswerAsTheModelReadsIt (issue 25): null fields and top-level
// fields repeating the call's own arguments are left out, order and every
// other value kept byte for byte (numbers as written, "<" unescaped); what
// isn't one JSON value is passed as it is.
func TestAToolsAnswerAsTheModelReadsIt(t *testing.T) {
	for _, c := range []struct{ name, content, args, want string }{
		{"figures", `{"sha256":"ab","count":6,"gini":0,"groups":[{"id":"council","error":null,"share":0.500000}],"label":"<b>&"}`, `{"sha256":"ab"}`,
			`{"count":6,"gini":0,"groups":[{"id":"council","share":0.500000}],"label":"<b>&"}`},
		{"an echo under another name stays", `{"query":"the DAO","q":"the DAO","ambiguous":false,"candidates":[]}`, `{"query":"the DAO"}`,
			`{"q":"the DAO","ambiguous":false,"candidates":[]}`},
		{"an argument of another value stays", `{"network":"near-dao-members","params":{"dao":"m.sputnik-dao.near"}}`, `{"network":"near-dao-members","params":{"dao":"m"}}`,
			`{"params":{"dao":"m.sputnik-dao.near"}}`},
		{"nested echoes stay", `{"spec":{"sha256":"ab"}}`, `{"sha256":"ab"}`, `{"spec":{"sha256":"ab"}}`},
		{"null", `null`, `{}`, `null`},
		{"an array", `[1, 2 ,null]`, `{}`, `[1,2,null]`},
		{"not JSON", `not json`, `{}`, `not json`},
		{"two values", `{"a":1} {"b":2}`, `{}`, `{"a":1} {"b":2}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, string(forModel([]byte(c.content), json.RawMessage(c.args))))
		})
	}
}
