package nearai

import (
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/runs"
)

// Model is one model of the catalogue, with its list prices in micro-dollars
// per million tokens.
type Model struct {
	ID            string
	InputPerMTok  credit.Micros
	CachedPerMTok credit.Micros
	OutputPerMTok credit.Micros
	// Efforts are the reasoning efforts the model takes (reasoning_effort),
	// none when it takes none.
	Efforts []string
	// RawMessages says the model's chat template writes each message's
	// text as it is: its content, a tool call's name and arguments, a tool
	// result (DeepSeek-V3.1's template adds only its special tokens, and
	// JSON-escapes nothing). Its messages are then bounded by their text's
	// bytes, not their wire bytes, whose escapes (a tool result's JSON: a
	// fifth of it) the model never reads. A model whose template escapes
	// (gpt-oss writes a tool result through tojson) keeps the wire bytes.
	RawMessages bool
}

// Catalogue is the allow-list of models a chat may run on.
var Catalogue = []Model{
	{ID: "deepseek-ai/DeepSeek-V3.1", InputPerMTok: 1_000_000, CachedPerMTok: 250_000, OutputPerMTok: 2_500_000, RawMessages: true},
	{ID: "openai/gpt-oss-120b", InputPerMTok: 200_000, CachedPerMTok: 50_000, OutputPerMTok: 600_000, Efforts: []string{"low", "medium", "high"}},
	{ID: "Qwen/Qwen3-30B-A3B-Instruct-2507", InputPerMTok: 150_000, CachedPerMTok: 40_000, OutputPerMTok: 550_000},
	{ID: "zai-org/GLM-4.6", InputPerMTok: 750_000, CachedPerMTok: 200_000, OutputPerMTok: 2_000_000},
}

// Find is a catalogue model by id.
func Find(id string) (Model, bool) {
	for _, m := range Catalogue {
		if m.ID == id {
			return m, true
		}
	}
	return Model{}, false
}

// Cost is what tokens cost on m: cached input at the cache-read price, the
// rest of the input and the output at theirs. Rounded up to a micro-dollar.
func (m Model) Cost(t runs.Tokens) credit.Micros {
	uncached := max(t.In-t.Cached, 0)
	// Micro-dollars per million tokens × tokens, then per million.
	perMillion := uncached*int64(m.InputPerMTok) + t.Cached*int64(m.CachedPerMTok) + t.Out*int64(m.OutputPerMTok)
	return credit.Micros((perMillion + 999_999) / 1_000_000)
}
