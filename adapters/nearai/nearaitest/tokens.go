package nearaitest

import (
	"encoding/json"
	"net/http"
)

// BytesPerToken is how many bytes the fake's tokenizer makes a token: real
// input to NEAR AI's models runs 3.8-4.2 bytes a token (issue 25).
const BytesPerToken = 4

// Template tokens the fake's chat template adds: per message (its role
// markers), per tool, and once (the start and the answer's prompt).
const (
	TemplatePerMessage = 4
	TemplatePerTool    = 6
	TemplateOnce       = 3
)

// Tokens is what the fake's tokenizer counts for a chat completion request:
// each message's text (its content, its tool calls' names and arguments)
// and each tool's name, description and schema, at BytesPerToken bytes a
// token rounded up, each on its own as a chat template's special tokens
// split them, plus the template's own tokens. A body it can't read counts
// one token a byte.
func Tokens(raw []byte) int64 {
	var req struct {
		Messages []struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
			ToolCallID string `json:"tool_call_id"`
		} `json:"messages"`
		Tools []struct {
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if json.Unmarshal(raw, &req) != nil {
		return int64(len(raw))
	}
	n := int64(TemplateOnce)
	for _, m := range req.Messages {
		text := len(m.ToolCallID)
		if m.Content != nil {
			text += len(*m.Content)
		}
		for _, tc := range m.ToolCalls {
			text += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
		n += tokensOf(text) + TemplatePerMessage
	}
	for _, t := range req.Tools {
		n += tokensOf(len(t.Function.Name)+len(t.Function.Description)+len(t.Function.Parameters)) + TemplatePerTool
	}
	return n
}

func tokensOf(bytes int) int64 { return int64((bytes + BytesPerToken - 1) / BytesPerToken) }

// answerTokens counts a completion's words and tool calls as Tokens does.
func answerTokens(body []byte) int64 {
	var c struct {
		Choices []struct {
			Message struct {
				Content   *string `json:"content"`
				ToolCalls []struct {
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if json.Unmarshal(body, &c) != nil || len(c.Choices) == 0 {
		return 1
	}
	m := c.Choices[0].Message
	text := 0
	if m.Content != nil {
		text += len(*m.Content)
	}
	for _, tc := range m.ToolCalls {
		text += len(tc.Function.Name) + len(tc.Function.Arguments)
	}
	return tokensOf(text) + 1
}

// ModelPrice is one model of NEAR AI's model list, its prices per token as
// the list writes them: amount × 10^-scale USD.
type ModelPrice struct {
	ID                  string
	InputAmount         int64
	OutputAmount        int64
	CacheReadAmount     int64 // 0: the list says none
	Scale               int
	ContextLength       int
	OmitOutput, Invalid bool // a model listed without an output price; one with a currency petal doesn't take
}

// SetPrices sets the model list GET /v1/model/list answers; a status other
// than 0 answers that status instead.
func (s *Server) SetPrices(status int, models ...ModelPrice) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.prices, s.listStatus = models, status
}

// modelList answers GET /v1/model/list in NEAR AI's shape: { models: [ {
// modelId, inputCostPerToken: { amount, scale, currency }, outputCostPerToken,
// metadata } ] }.
func (s *Server) modelList(w http.ResponseWriter, r *http.Request) {
	s.record(r, nil)
	s.mu.Lock()
	prices, status := s.prices, s.listStatus
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if status != 0 {
		w.WriteHeader(status)
		_, _ = w.Write(File("error_503.json"))
		return
	}
	cost := func(amount int64, scale int, currency string) map[string]any {
		return map[string]any{"amount": amount, "scale": scale, "currency": currency}
	}
	models := []map[string]any{}
	for _, p := range prices {
		currency := "USD"
		if p.Invalid {
			currency = "EUR"
		}
		m := map[string]any{"modelId": p.ID, "inputCostPerToken": cost(p.InputAmount, p.Scale, currency),
			"metadata": map[string]any{"modelDisplayName": p.ID, "contextLength": p.ContextLength, "verifiable": true, "ownedBy": "nearai"}}
		if !p.OmitOutput {
			m["outputCostPerToken"] = cost(p.OutputAmount, p.Scale, currency)
		}
		if p.CacheReadAmount > 0 {
			m["cacheReadCostPerToken"] = cost(p.CacheReadAmount, p.Scale, currency)
		}
		models = append(models, m)
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"models": models, "total": len(models), "limit": 100, "offset": 0})
}
