package ports

import "context"

// The agent's eyes outside the map: any contract's view method, a public web
// page, a web search. Each reaches outside the site, so a public site refuses
// the tools over them (app: OnTheirMachine).

// NearViews calls any contract's view method on NEAR's RPC at the final block.
// chain is near:mainnet or near:testnet. Errors as NearContracts': errs.NotFound
// for an unknown account or one with no contract, errs.CannotRead when the
// call fails in the contract (a panic, no such method), errs.SourceFailed when
// the RPC could not answer or its answer is larger than max bytes.
type NearViews interface {
	View(ctx context.Context, chain, contract, method string, args []byte, max int) (NearView, error)
}

// NearView is one view call's answer: the method's raw bytes (at most the
// max asked for), its logs, and the block it was read at.
type NearView struct {
	Result      []byte
	Logs        []string
	BlockHeight uint64
	BlockHash   string
}

// WebPages fetches a public web page and gives its readable text. An adapter
// refuses (errs.BadInput, with a reason) any URL that is not http or https,
// carries credentials, or leads (by its name or any redirect) to an address
// on this machine or a private network; errs.SourceFailed when the page could
// not be read.
type WebPages interface {
	Fetch(ctx context.Context, rawURL string) (WebPage, error)
}

// WebPage is a fetched page as text.
type WebPage struct {
	URL         string // where the page was read, after redirects
	Title       string
	ContentType string // the media type the server sent, without parameters
	Text        string // readable text: Markdown for HTML, the body for plain text
	// Cut is true when the page was longer than the adapter reads and its
	// text stops where reading stopped.
	Cut bool
}

// WebSearch asks a web search provider. errs.SourceFailed when it could not
// answer; Configured false means no provider is set up here (no key).
type WebSearch interface {
	Configured() bool
	Search(ctx context.Context, query string, max int) ([]WebResult, error)
}

// WebResult is one answer of a web search.
type WebResult struct {
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
	Age     string `json:"age,omitempty"` // how old the page is, as the provider says it
}
