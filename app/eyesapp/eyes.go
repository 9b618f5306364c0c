package eyesapp

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/internal/bytecache"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// The reading tools' contract names (the agent's eyes outside the map).
const (
	ToolReadChain = "read_chain"
	ToolReadPage  = "read_page"
	ToolSearch    = "search"
)

// Bounds of the reading tools.
const (
	MaxChainAnswer   = 1 << 20 // read_chain's answer, in bytes
	maxChainArgs     = 64 << 10
	readChainTimeout = 20 * time.Second
	searchTimeout    = 15 * time.Second
	maxSearchResults = 10
	maxSearchQuery   = 400
	maxPageURL       = 2048
)

// EyesService reads what the map doesn't hold: any contract's view method
// (read_chain), a public web page (read_page) and the web's search (search).
// Each reaches outside the site, so each is OnTheirMachine.
type EyesService struct {
	views  ports.NearViews
	pages  ports.WebPages
	search ports.WebSearch
	clock  ports.Clock

	pageCache *bytecache.ByteCache[string, cachedPage]
	pageSlots chan struct{}
}

var _ toolkit.ToolSet = (*EyesService)(nil)

// NewEyesService makes the reading tools over the chain's view calls, the
// page fetcher and the search provider (which may be unconfigured).
func NewEyesService(views ports.NearViews, pages ports.WebPages, search ports.WebSearch, clock ports.Clock) *EyesService {
	return &EyesService{views: views, pages: pages, search: search, clock: clock,
		pageCache: bytecache.NewByteCache[string, cachedPage](pageCacheBytes, pageCacheItem, func(p cachedPage) int { return len(p.page.Text) + len(p.page.URL) + 256 }),
		pageSlots: make(chan struct{}, pageReadsAtOnce)}
}

// Tools implements ToolSet.
func (s *EyesService) Tools() []toolkit.Tool {
	return []toolkit.Tool{
		toolkit.WithIO(toolkit.Tool{
			Name:           ToolReadChain,
			Description:    "Call any NEAR contract's view method at the final block, as the chain answers it: the answer decoded as JSON where it is JSON (encoding: json), else its bytes in base64 (encoding: base64), at most 1 MiB, with the block it was read at and the contract's logs. A contract that panics answers cannot_read with its own words. Use it for what no reader reads (a contract's config, one balance, one proposal); the brain's recipes name the usual methods.",
			OnTheirMachine: true,
		}, s.readChain),
		toolkit.WithIO(toolkit.Tool{
			Name:           ToolReadPage,
			Description:    "Read a public web page (http or https) as text: HTML becomes Markdown with its links, plain text stays as it is. About 20,000 characters a page: start is where to begin, in characters, and next is the start of the page after (null at the end). Never this machine or a private network; at most 5 MiB of the page is read, in at most 15 s.",
			OnTheirMachine: true,
		}, s.readPage),
		toolkit.WithIO(toolkit.Tool{
			Name:            ToolSearch,
			Description:     "Search the web: up to 10 answers, each with its title, address and a snippet. Read one with read_page. Answers source_failed where this site has no search provider set up.",
			OnTheirMachine:  true,
			HiddenFromAgent: s.search == nil || !s.search.Configured(),
		}, s.webSearch),
	}
}

type (
	readChainInput struct {
		Network  string          `json:"network" jsonschema:"the chain: near:mainnet or near:testnet (mainnet and testnet are read the same)"`
		Contract string          `json:"contract" jsonschema:"the contract's account id, like marketing.sputnik-dao.near"`
		Method   string          `json:"method" jsonschema:"a view method of the contract, like get_config"`
		Args     json.RawMessage `json:"args,omitempty" jsonschema:"the method's arguments, a JSON object; {} without it"`
	}
	readPageInput struct {
		URL   string `json:"url" jsonschema:"a public page's address, http or https"`
		Start int    `json:"start,omitempty" jsonschema:"where to begin in the page's text, in characters: 0, or the next of the page before"`
	}
	searchInput struct {
		Query string `json:"query" jsonschema:"what to search the web for, in plain words"`
	}
)

func (readChainInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "network").Enum = []any{"near:mainnet", "near:testnet", "mainnet", "testnet"}
	c := toolkit.Property(s, "contract")
	c.MinLength, c.MaxLength = jsonschema.Ptr(2), jsonschema.Ptr(64)
	m := toolkit.Property(s, "method")
	m.Pattern, m.MaxLength = `^[A-Za-z_][A-Za-z0-9_]*$`, jsonschema.Ptr(256)
	toolkit.Property(s, "args").Type = "object"
}

func (readPageInput) RefineSchema(s *jsonschema.Schema) {
	u := toolkit.Property(s, "url")
	u.MinLength, u.MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(maxPageURL)
	st := toolkit.Property(s, "start")
	st.Minimum, st.Maximum = jsonschema.Ptr(0.0), jsonschema.Ptr(float64(6<<20))
}

func (searchInput) RefineSchema(s *jsonschema.Schema) {
	q := toolkit.Property(s, "query")
	q.MinLength, q.MaxLength = jsonschema.Ptr(1), jsonschema.Ptr(maxSearchQuery)
}

// SearchAnswer is what search answers.
type SearchAnswer struct {
	Query   string            `json:"query"`
	Results []ports.WebResult `json:"results"`
}

func (s *EyesService) webSearch(ctx context.Context, _ toolkit.Call, in searchInput) (SearchAnswer, error) {
	if s.search == nil || !s.search.Configured() {
		return SearchAnswer{}, errs.New(errs.SourceFailed, "web search is not set up on this site",
			"the site's operator turns it on with PETAL_SEARCH_API_KEY (a Brave Search API key); read_page still reads a page you name")
	}
	q := strings.Join(strings.Fields(in.Query), " ")
	if q == "" {
		return SearchAnswer{}, errs.New(errs.BadInput, "query: say what to search for")
	}
	ctx, cancel := context.WithTimeout(ctx, searchTimeout)
	defer cancel()
	results, err := s.search.Search(ctx, q, maxSearchResults)
	if err != nil {
		return SearchAnswer{}, err
	}
	if results == nil {
		results = []ports.WebResult{}
	}
	return SearchAnswer{Query: q, Results: results}, nil
}
