package httpapi

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/maps"
	"github.com/petal-near/petal/domain/snapshots"
)

// comparePageLimit is how many of each list /compare shows at a time.
const comparePageLimit = 10

// compareBody is /compare's: compare_figures' answer put in words a person
// reads, each share as a percentage and each change signed.
type compareBody struct {
	A, B       compareSideView
	Figures    []compareRow
	Groups     []compareRow
	Entered    compareList
	Left       compareList
	MoversUp   compareList
	MoversDown compareList
	Demo       bool
	Map        string // the map this comparison came from, for the way back
	Prev, Next string // the lists' previous and next pages, "" when none
	Offset     int
}

type compareSideView struct {
	Title, SHA, AsOf string
}

// compareRow is one figure or group: before, after and the change, and
// whether it rose or fell (a class, not the only sign: the text says it).
type compareRow struct {
	Name, Before, After, Change, Members string
	Dir                                  string // "up", "down" or ""
}

type compareList struct {
	Total int
	Rows  []compareAccountRow
}

type compareAccountRow struct {
	ID, Label, WeightBefore, WeightAfter, Before, After, Change, Dir string
}

func (s *Server) comparePage(c echo.Context) error {
	a, b := strings.TrimSpace(c.QueryParam("a")), strings.TrimSpace(c.QueryParam("b"))
	if a == "" || b == "" {
		return s.errorPage(c, errs.New(errs.BadInput, "this address names no two readings to compare",
			"a comparison is /compare?a=<the earlier reading's sha256>&b=<the later one's>; a map's page links each reading to the one before"), "map")
	}
	offset := 0
	if o := c.QueryParam("offset"); o != "" {
		n, err := strconv.Atoi(o)
		if err != nil || n < 0 || n > snapshots.MaxCompareOffset {
			return s.errorPage(c, errs.Newf(errs.BadInput, "offset: a whole number from 0 to %d", snapshots.MaxCompareOffset), "map")
		}
		offset = n
	}
	mapID := c.QueryParam("map")
	if len(mapID) > 300 {
		mapID = ""
	}
	// Through the registry, as POST /api/v1/figures/compare: the same checks,
	// refusals and limits.
	input, err := json.Marshal(map[string]any{"a": a, "b": b, "offset": offset, "limit": comparePageLimit})
	if err != nil {
		return s.errorPage(c, err, "map")
	}
	out, err := s.deps.Registry.Call(c.Request().Context(), flowersapp.ToolCompareFigures, toolkit.Call{Input: input, Caller: s.caller(c)})
	if err != nil {
		return s.errorPage(c, err, "map")
	}
	r, ok := out.(flowersapp.CompareResult)
	if !ok {
		return s.errorPage(c, errs.New(errs.Internal, "compare_figures answered something other than a comparison"), "map")
	}
	body := compareBody{A: sideView(r.A), B: sideView(r.B), Demo: r.Demo, Map: mapID, Offset: offset}
	body.Figures = figureRows(r)
	for _, g := range r.Groups {
		body.Groups = append(body.Groups, compareRow{Name: cmpOr(g.Label, g.ID), Before: percent(g.ShareBefore), After: percent(g.ShareAfter),
			Change: points(g.Change), Dir: dirOf(g.Change), Members: strconv.Itoa(g.CountBefore) + " → " + strconv.Itoa(g.CountAfter)})
	}
	body.Entered, body.Left = accountList(r.Entered), accountList(r.Left)
	body.MoversUp, body.MoversDown = accountList(r.MoversUp), accountList(r.MoversDown)
	more := false
	for _, l := range []snapshots.AccountMoves{r.Entered, r.Left, r.MoversUp, r.MoversDown} {
		more = more || l.Total > offset+comparePageLimit
	}
	at := func(o int) string {
		q := url.Values{"a": {a}, "b": {b}}
		if mapID != "" {
			q.Set("map", mapID)
		}
		if o > 0 {
			q.Set("offset", strconv.Itoa(o))
		}
		return "/compare?" + q.Encode()
	}
	if more {
		body.Next = at(offset + comparePageLimit)
	}
	if offset > 0 {
		body.Prev = at(max(0, offset-comparePageLimit))
	}
	title := "What changed"
	if r.B.Title != "" {
		title = "What changed: " + r.B.Title
	}
	return s.renderPage(c, http.StatusOK, "compare.tmpl", pageShell{Title: title, Nav: "map", Body: body})
}

func sideView(s flowersapp.CompareSide) compareSideView {
	return compareSideView{Title: s.Title, SHA: s.SHA256, AsOf: s.AsOf}
}

func figureRows(r flowersapp.CompareResult) []compareRow {
	a, b, ch := r.A.Figures, r.B.Figures, r.Change
	rows := []compareRow{
		{Name: "Accounts", Before: strconv.Itoa(a.Count), After: strconv.Itoa(b.Count), Change: signedInt(ch.Count), Dir: dirInt(ch.Count)},
		{Name: "Total weight", Before: a.TotalWeight, After: b.TotalWeight, Change: signedDecimal(ch.TotalWeight), Dir: dirDecimal(ch.TotalWeight)},
		{Name: "Top account's share", Before: percent(a.Top1Share), After: percent(b.Top1Share), Change: points(ch.Top1Share), Dir: dirOf(ch.Top1Share)},
		{Name: "Top 10's share", Before: percent(a.Top10Share), After: percent(b.Top10Share), Change: points(ch.Top10Share), Dir: dirOf(ch.Top10Share)},
		{Name: "Top 1%'s share", Before: percent(a.Top1PctShare), After: percent(b.Top1PctShare), Change: points(ch.Top1PctShare), Dir: dirOf(ch.Top1PctShare)},
		{Name: "Accounts in the top 1%", Before: strconv.Itoa(a.Top1PctCount), After: strconv.Itoa(b.Top1PctCount), Change: signedInt(ch.Top1PctCount), Dir: dirInt(ch.Top1PctCount)},
		{Name: "Fewest holding half", Before: optInt(a.Nakamoto), After: optInt(b.Nakamoto), Change: optSigned(ch.Nakamoto), Dir: dirOptInt(ch.Nakamoto)},
		{Name: "Gini", Before: decimal(a.Gini), After: decimal(b.Gini), Change: signedFraction(ch.Gini), Dir: dirOf(ch.Gini)},
		{Name: "HHI", Before: decimal(a.HHI), After: decimal(b.HHI), Change: signedFraction(ch.HHI), Dir: dirOf(ch.HHI)},
	}
	return rows
}

func accountList(m snapshots.AccountMoves) compareList {
	l := compareList{Total: m.Total}
	for _, x := range m.Accounts {
		l.Rows = append(l.Rows, compareAccountRow{ID: x.ID, Label: cmpOr(x.Label, accountName(x.ID).Name), WeightBefore: x.WeightBefore, WeightAfter: x.WeightAfter,
			Before: percent(x.ShareBefore), After: percent(x.ShareAfter), Change: points(x.Change), Dir: dirOf(x.Change)})
	}
	return l
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// points writes a change of share in percentage points, signed, one decimal
// ("+37.5 pts", "−22.5 pts"); "–" when undefined.
func points(f snapshots.Fraction) string {
	if !f.Defined {
		return "–"
	}
	m := f.Millionths
	sign := "+"
	if m < 0 {
		sign, m = "−", -m
	}
	tenths := (m + 500) / 1000 // half away from zero, the sign kept apart
	if tenths == 0 {
		if m == 0 {
			return "0"
		}
		return sign + "<0.1 pts"
	}
	return sign + strconv.FormatInt(tenths/10, 10) + "." + strconv.FormatInt(tenths%10, 10) + " pts"
}

// decimal is a fraction as its published decimal, or "–".
func decimal(f snapshots.Fraction) string {
	if !f.Defined {
		return "–"
	}
	return f.String()
}

func signedFraction(f snapshots.Fraction) string {
	if !f.Defined {
		return "–"
	}
	return signedDecimal(f.String())
}

// signedDecimal writes an exact signed decimal with its sign shown ("+2",
// "−0.5", "0").
func signedDecimal(d string) string {
	switch {
	case strings.HasPrefix(d, "-"):
		return "−" + d[1:]
	case strings.Trim(d, "0.") == "":
		return "0"
	}
	return "+" + d
}

func signedInt(n int) string { return signedDecimal(strconv.Itoa(n)) }

func optInt(n *int) string {
	if n == nil {
		return "–"
	}
	return strconv.Itoa(*n)
}

func optSigned(n *int) string {
	if n == nil {
		return "–"
	}
	return signedInt(*n)
}

func dirOf(f snapshots.Fraction) string {
	if !f.Defined {
		return ""
	}
	return dirInt64(f.Millionths)
}

func dirInt(n int) string { return dirInt64(int64(n)) }

func dirOptInt(n *int) string {
	if n == nil {
		return ""
	}
	return dirInt(*n)
}

func dirDecimal(d string) string {
	switch {
	case strings.HasPrefix(d, "-"):
		return "down"
	case strings.Trim(d, "0.") == "":
		return ""
	}
	return "up"
}

func dirInt64(n int64) string {
	switch {
	case n > 0:
		return "up"
	case n < 0:
		return "down"
	}
	return ""
}

// movesView is one list of accounts as the "moves" template draws it.
type movesView struct {
	Title, ID string
	List      compareList
}

func movesOf(title, id string, l compareList) movesView {
	return movesView{Title: title, ID: id, List: l}
}

// mapBlocsLimit is how many pairs and blocs a map's page lists beside its
// proposals; voting_blocs pages through them all.
const mapBlocsLimit = 5

// blocsView is voting_blocs' answer as a map's page lists it.
type blocsView struct {
	Snapshot                     string
	Proposals, Voters, MinCommon int
	MinAgreement                 string
	Pairs                        []blocPairView
	MorePairs                    int
	Blocs                        []blocView
	MoreBlocs                    int
}

type blocPairView struct {
	A, B           blocAccount
	Agreed, Common int
	Share          string
}

type blocView struct {
	Accounts []blocAccount
	More     int
}

type blocAccount struct{ ID, Name string }

// accountName is a CAIP-10 id without its chain ("alice.near").
func accountName(id string) blocAccount {
	name := id
	if i := strings.LastIndexByte(id, ':'); i >= 0 && i+1 < len(id) {
		name = id[i+1:]
	}
	return blocAccount{ID: id, Name: name}
}

// mapBlocs is voting_blocs of a map's newest proposals reading, through
// the registry (its limits), for the map's page; nil when the map has no
// proposals reading or the blocs could not be counted (the page stands
// without them).
func (s *Server) mapBlocs(c echo.Context, history []maps.HistoryPoint) *blocsView {
	sha := ""
	for _, p := range history {
		if p.Network == snapshots.ProposalsNetwork {
			sha = p.Snapshot // oldest first: the last is the newest
		}
	}
	if sha == "" {
		return nil
	}
	ctx := c.Request().Context()
	input, _ := json.Marshal(map[string]any{"sha256": sha, "limit": mapBlocsLimit})
	out, err := s.deps.Registry.Call(ctx, flowersapp.ToolVotingBlocs, toolkit.Call{Input: input, Caller: s.caller(c)})
	if err != nil {
		s.deps.Log.WarnContext(ctx, "reading a map's voting blocs for its page", "snapshot", sha, "err", err)
		return nil
	}
	r, ok := out.(flowersapp.VotingBlocsResult)
	if !ok {
		return nil
	}
	v := &blocsView{Snapshot: sha, Proposals: r.Proposals, Voters: r.Voters, MinCommon: r.MinCommon, MinAgreement: percent(r.MinAgreement),
		MorePairs: r.Pairs.Total - len(r.Pairs.Items)}
	for _, p := range r.Pairs.Items {
		v.Pairs = append(v.Pairs, blocPairView{A: accountName(p.A), B: accountName(p.B), Agreed: p.Agreed, Common: p.Common, Share: percent(p.Agreement)})
	}
	for i, b := range r.Blocs {
		if i == mapBlocsLimit {
			v.MoreBlocs = len(r.Blocs) - i
			break
		}
		var bv blocView
		for j, a := range b.Accounts {
			if j == 8 {
				bv.More = len(b.Accounts) - j
				break
			}
			bv.Accounts = append(bv.Accounts, accountName(a))
		}
		v.Blocs = append(v.Blocs, bv)
	}
	return v
}
