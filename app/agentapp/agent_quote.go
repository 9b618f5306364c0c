package agentapp

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/petal-near/petal/app/internal/ids"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// QuotesPerHour bounds the quotes one address asks for: each is stored.
const QuotesPerHour = 120

// quotesPricedAtOnce bounds the quotes a process prices at once: each
// builds and measures nine requests of up to a few MiB
// (BenchmarkQuotePricing: about 5 ms and 3 MB for a short question).
const quotesPricedAtOnce = 2

// answerBytesBound is what a further round's estimate adds to the thread for
// the model's answer (maxAnswerTokens at four bytes a token); a tool's
// result adds toolResultMax, what the loop ever shows the model of one.
const answerBytesBound = 4 * maxAnswerTokens

// QuoteRequest is POST /api/v1/agent/quote's body: the chat to price, as
// POST /api/v1/agent/chat would send it.
type QuoteRequest struct {
	Messages []ChatMessage  `json:"messages"`
	RunID    string         `json:"run_id,omitempty"`
	Settings *runs.Settings `json:"settings,omitempty"`
}

// QuoteBody is POST /api/v1/agent/quote's answer.
type QuoteBody struct {
	Quote QuoteView `json:"quote"`
}

// QuoteView is a quote: the most the chat can cost, and how.
type QuoteView struct {
	ID        string            `json:"id"`
	ExpiresAt time.Time         `json:"expires_at"`
	Payer     *string           `json:"payer"`
	MaxUSD    credit.USDNumber  `json:"max_usd"`
	LineItems []QuoteLine       `json:"line_items"`
	Fees      []QuoteFee        `json:"fees"`
	TipUSD    credit.USDNumber  `json:"tip_usd"`
	Limits    QuoteLimits       `json:"limits"`
	LeftUSD   *credit.USDNumber `json:"left_usd"`
}

// QuoteLine is one model call the chat may make, at its worst.
type QuoteLine struct {
	What            string           `json:"what"`
	Model           string           `json:"model"`
	InputTokensMax  int64            `json:"input_tokens_max"`
	OutputTokensMax int64            `json:"output_tokens_max"`
	USDPerMTokIn    credit.USDNumber `json:"usd_per_mtok_in"`
	USDPerMTokOut   credit.USDNumber `json:"usd_per_mtok_out"`
	USD             credit.USDNumber `json:"usd"`
}

// QuoteFee is one base-fee switch's part of the most.
type QuoteFee struct {
	Switch string           `json:"switch"`
	USD    credit.USDNumber `json:"usd"`
}

// QuoteLimits are the chat's own limits.
type QuoteLimits struct {
	Rounds     int               `json:"rounds"`
	Seconds    int               `json:"seconds"`
	PerChatUSD *credit.USDNumber `json:"per_chat_usd"`
}

// quotedRound is one call of a chat at its worst: the model's bill and what
// the ledger would hold for it.
type quotedRound struct {
	call ports.WorstCall
	hold credit.HoldParts
}

// chatWorstCase is the most each model call of a chat on thread can cost, as
// the ledger holds it: the request each call sends through modelRequest,
// priced by the model's WorstCall (the ledger's bill) and Ledger.HoldFor (its
// hold). The first call's is exactly what the chat's first hold will be.
// Later calls send a thread grown by earlier rounds, which can't be known
// now: each is priced with the thread grown by an answer (answerBytesBound)
// and a tool's result (toolResultMax) a round, and one use of the dearest
// tool (switch D). A chat's rounds: runs.MaxToolRounds with tools, then one
// without, each at its first attempt's allowance (firstAllowance; the last,
// offered no tools, finalAllowance).
func (a *AgentService) chatWorstCase(ctx context.Context, payer *credit.Payer, c quotedChat) ([]quotedRound, error) {
	tools := offered(a.modelTools(), nil)
	dearest := a.dearestTool(tools)
	out := make([]quotedRound, 0, runs.MaxToolRounds+1)
	t := slices.Clip(c.thread)
	for round := 0; round <= runs.MaxToolRounds; round++ {
		offer := tools
		if round == runs.MaxToolRounds {
			offer = nil
		}
		// Held as the ledger holds a round's first attempt: its allowance,
		// on its model alone. A round asked again (an answer cut at its
		// allowance, a fallback) is held again, within max_usd: the quote
		// is the chat's cap.
		req := a.callRequest(ctx, c.run, t, offer)
		req.MaxTokens, req.NoFallback = firstAllowance, true
		if offer == nil {
			req.MaxTokens = finalAllowance
		}
		call := a.worstCall(ctx, req)
		var used []string
		if round > 0 && dearest != "" {
			used = []string{dearest}
		}
		hold := credit.HoldParts{Bill: call.Bill}
		if payer != nil {
			h, err := a.ledger.HoldFor(ctx, *payer, call.Bill, used)
			if err != nil {
				return nil, err
			}
			hold = h
		}
		out = append(out, quotedRound{call: call, hold: hold})
		t = append(t, runs.Message{Role: runs.RoleAssistant, Content: strings.Repeat("x", answerBytesBound)},
			runs.Message{Role: runs.RoleTool, ToolCallID: "call", Name: "tool", Content: strings.Repeat("x", toolResultMax)})
		t = slices.Clip(t)
	}
	return out, nil
}

// dearestTool is the offered tool with the largest switch D fee ("" when
// none has one).
func (a *AgentService) dearestTool(tools []ports.ModelTool) string {
	price := a.cfg.Price()
	best, name := credit.Micros(0), ""
	for _, t := range tools {
		if f := price.ToolFee(t.Name); f > best {
			best, name = f, t.Name
		}
	}
	return name
}

// checkMessages refuses what no chat takes, and answers the last message.
func checkMessages(messages []ChatMessage) (ChatMessage, error) {
	if len(messages) == 0 {
		return ChatMessage{}, errs.New(errs.BadInput, "messages is empty", "send at least one user message")
	}
	for i, m := range messages {
		if m.Role != runs.RoleUser && m.Role != runs.RoleAssistant {
			return ChatMessage{}, errs.Newf(errs.BadInput, "messages[%d].role must be user or assistant, not %q", i, m.Role)
		}
		if strings.TrimSpace(m.Content) == "" {
			return ChatMessage{}, errs.Newf(errs.BadInput, "messages[%d].content is empty", i)
		}
	}
	last := messages[len(messages)-1]
	if last.Role != runs.RoleUser {
		return ChatMessage{}, errs.New(errs.BadInput, "the last message must be the person's (role user)")
	}
	return last, nil
}

// quotedChat is what a chat would send: its thread, and its run as far as
// the requests depend on it (owner, settings, name, project).
type quotedChat struct {
	thread []runs.Message
	run    runs.Run
}

// quoteChatOf is the chat a quote prices, as Chat would run it: the
// messages, or a stored run's thread and the last message; the settings
// asked, or the run's.
func (a *AgentService) quoteChatOf(ctx context.Context, caller toolkit.Caller, req QuoteRequest) (quotedChat, error) {
	last, err := checkMessages(req.Messages)
	if err != nil {
		return quotedChat{}, err
	}
	if err := a.CheckSettings(req.Settings); err != nil {
		return quotedChat{}, err
	}
	c := quotedChat{run: runs.Run{Owner: caller.Subject}}
	if req.RunID != "" {
		if c.run, err = a.Run(ctx, caller, req.RunID); err != nil {
			return quotedChat{}, err
		}
	}
	if req.Settings != nil {
		c.run.Settings = *req.Settings
	}
	if req.RunID == "" {
		c.thread = threadOf(req.Messages)
		return c, nil
	}
	c.thread = append(slices.Clip(c.run.Thread), runs.Message{Role: runs.RoleUser, Content: last.Content})
	if size := runs.ThreadBytes(c.thread); size > runs.MaxThread {
		return quotedChat{}, runs.ThreadFull(size)
	}
	return c, nil
}

// chatSHA256 names what a quote is for: the thread and the settings.
func chatSHA256(thread []runs.Message, settings runs.Settings) string {
	raw, _ := json.Marshal(struct {
		Thread   []runs.Message `json:"thread"`
		Settings runs.Settings  `json:"settings"`
	}{thread, settings})
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// Quote prices a chat before it starts, spending nothing: who would pay,
// each model call at its worst as the ledger would hold it, the base fee and
// the tip in it, the chat's limits, what is left, and max_usd: the most the
// chat can cost (the holds' sum, within the chat's cap and what is left). It
// is kept for credit.QuoteTTL, for these messages, for one chat; a stranger's
// quote counts against the data budget and each address may ask
// QuotesPerHour an hour. No session is needed, and none is opened.
func (a *AgentService) Quote(ctx context.Context, caller toolkit.Caller, req QuoteRequest) (QuoteBody, error) {
	if a.cfg.Public {
		return QuoteBody{}, toolkit.NotOnThisSite("Petals' agent")
	}
	c, err := a.quoteChatOf(ctx, caller, req)
	if err != nil {
		return QuoteBody{}, err
	}
	if err := a.limit(ctx, "quotes:", caller.Address, QuotesPerHour, "quotes"); err != nil {
		return QuoteBody{}, err
	}
	if err := a.budget.Fits(ctx, caller.Subject, snapshotsapp.RowBytes); err != nil {
		return QuoteBody{}, err
	}
	var payer *credit.Payer
	if !a.Recorded() {
		p, err := a.access.GateFor(ctx, caller, a.leastFirstCall(ctx, c.run, c.thread))
		switch {
		case err == nil:
			payer = &p
		case errs.Is(err, errs.InviteRequired), errs.Is(err, errs.PaymentRequired), errs.Is(err, errs.BudgetExhausted):
			// Nobody would pay: the quote says so (payer null), and prices
			// the chat all the same.
		default:
			return QuoteBody{}, err
		}
	}
	select {
	case a.pricing <- struct{}{}:
	case <-ctx.Done():
		return QuoteBody{}, ctx.Err()
	}
	view, most, err := a.priceChat(ctx, payer, c)
	<-a.pricing
	if err != nil {
		return QuoteBody{}, err
	}
	id, err := ids.RandomHex(a.random, 16)
	if err != nil {
		return QuoteBody{}, err
	}
	now := a.clock.Now()
	q := credit.ChatQuote{ID: "quo_" + id, ThreadSHA256: chatSHA256(c.thread, c.run.Settings), RunID: req.RunID, Max: most,
		Payer: payerName(payer), ExpiresAt: now.Add(credit.QuoteTTL), CreatedAt: now}
	refund, err := a.budget.Spend(ctx, caller.Subject, snapshotsapp.RowBytes)
	if err != nil {
		return QuoteBody{}, err
	}
	if err := a.quotes.CreateChatQuote(ctx, q); err != nil {
		refund()
		return QuoteBody{}, err
	}
	a.quoted.Add(1, "made")
	view.ID, view.ExpiresAt = q.ID, q.ExpiresAt.UTC()
	return QuoteBody{Quote: view}, nil
}

// priceChat is a quote's figures and its max.
func (a *AgentService) priceChat(ctx context.Context, payer *credit.Payer, c quotedChat) (QuoteView, credit.Micros, error) {
	rounds, err := a.chatWorstCase(ctx, payer, c)
	if err != nil {
		return QuoteView{}, 0, err
	}
	view := QuoteView{LineItems: []QuoteLine{}, Fees: []QuoteFee{},
		Limits: QuoteLimits{Rounds: runs.MaxToolRounds, Seconds: int(a.cfg.RunMax.Seconds())}}
	// The most the chat may take: its cap and what its payer has left.
	limit := credit.Micros(-1)
	if payer != nil {
		left, err := a.leftFor(ctx, *payer)
		if err != nil {
			return QuoteView{}, 0, err
		}
		limit = max0(left)
		if payer.PerChat > 0 {
			limit = min(limit, payer.PerChat)
		}
	}
	var total, listed, feeA, feeC, feeD, tip credit.Micros
	for i, r := range rounds {
		total += r.hold.Total()
		if i > 0 && limit >= 0 && listed+r.hold.Total() > limit {
			continue // a round the caps can't pay for is not listed
		}
		listed += r.hold.Total()
		what := fmt.Sprintf("model call %d of %d", i+1, len(rounds))
		if i == 0 {
			what += ": your messages, exactly"
		} else {
			what += ": the thread grown by earlier rounds, estimated"
		}
		view.LineItems = append(view.LineItems, QuoteLine{What: what, Model: r.call.Model, InputTokensMax: r.call.InputTokensMax,
			OutputTokensMax: r.call.OutputTokensMax, USDPerMTokIn: r.call.InPerMTok.USD(), USDPerMTokOut: r.call.OutPerMTok.USD(), USD: r.hold.Bill.USD()})
		feeA, feeC, feeD, tip = feeA+r.hold.A, feeC+r.hold.C, feeD+r.hold.D, tip+r.hold.Tip
	}
	for _, f := range []QuoteFee{{"A", feeA.USD()}, {"C", feeC.USD()}, {"D", feeD.USD()}} {
		if f.USD > 0 {
			view.Fees = append(view.Fees, f)
		}
	}
	view.TipUSD = tip.USD()
	most := total
	if payer != nil {
		name := payerName(payer)
		view.Payer = &name
		if payer.PerChat > 0 {
			perChat := payer.PerChat.USD()
			view.Limits.PerChatUSD = &perChat
			most = min(most, payer.PerChat)
		}
		left, err := a.leftFor(ctx, *payer)
		if err != nil {
			return QuoteView{}, 0, err
		}
		l := max0(left).USD()
		view.LeftUSD = &l
		most = min(most, max0(left))
	}
	view.MaxUSD = most.USD()
	return view, most, nil
}

func max0(m credit.Micros) credit.Micros { return max(m, 0) }

// payerName is who pays, as a quote names it.
func payerName(p *credit.Payer) string {
	if p == nil {
		return ""
	}
	switch p.Kind {
	case credit.PayPerson:
		return "credit"
	case credit.PayInvite:
		return "invite"
	default:
		return "open"
	}
}
