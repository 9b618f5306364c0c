package maps

import (
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/snapshots"
)

// Headline is a reading's headline figures, kept with the reading when the
// map is built, so a map's history is never computed per request.
type Headline struct {
	Count     int                `json:"count"`
	Top1Share snapshots.Fraction `json:"top1_share"`
	Nakamoto  *int               `json:"nakamoto"` // the fewest holding more than half
	Gini      snapshots.Fraction `json:"gini"`
}

// HeadlineOf is the headline of a reading's figures; count is the reading's
// whole count (a cut reading still counts every account).
func HeadlineOf(count int, f snapshots.Figures) *Headline {
	return &Headline{Count: count, Top1Share: f.Top1Share, Nakamoto: f.Nakamoto, Gini: f.Gini}
}

// HistoryPoint is one reading in a map's history.
type HistoryPoint struct {
	Snapshot string    `json:"snapshot"`
	AsOf     time.Time `json:"as_of"` // its block's time
	Network  string    `json:"network"`
	Title    string    `json:"title"`
	Headline
	// Previous is the reading before it by the same reader, the one
	// compare_figures can set beside it ({ a: previous, b: snapshot }); null
	// for a reader's first.
	Previous *string `json:"previous"`
	// Refreshed is set (true) on a reading the map_refresh job made.
	Refreshed bool `json:"refreshed,omitempty"`
}

// History is a map's readings, the oldest first, each with its headline
// figures; ok is false for a map that isn't on the map. A reading whose
// headline wasn't made (its snapshot couldn't be ranked) counts its accounts
// and leaves the fractions null.
func (x *Index) History(id string) (points []HistoryPoint, ok bool) {
	c, found := x.byID[id]
	if !found {
		return nil, false
	}
	last := map[string]string{} // a reader's latest reading so far
	for i := len(c.readings) - 1; i >= 0; i-- {
		r := c.readings[i].Reading
		p := HistoryPoint{Snapshot: r.Snapshot, AsOf: r.AsOf, Network: r.Network, Title: r.Title, Headline: Headline{Count: r.Count},
			Refreshed: c.readings[i].refreshed}
		if r.Headline != nil {
			p.Headline = *r.Headline
		}
		if prev, ok := last[r.Network]; ok {
			p.Previous = &prev
		}
		last[r.Network] = r.Snapshot
		points = append(points, p)
	}
	return points, true
}

// The chart's size and margins, in CSS pixels.
const (
	chartWidth, chartHeight = 560, 220
	chartLeft, chartRight   = 48, 24
	chartTop, chartBottom   = 36, 40
)

// HistoryChart draws the top-1 share and the Gini of one reader's readings
// over time (the reader of the newest reading) as a small SVG: two lines on
// a 0-1 scale, every point's value written beside it, the first and last
// dates below, and a title and description for screen readers. "" when the
// history has no reading with figures.
func HistoryChart(points []HistoryPoint) string {
	if len(points) == 0 {
		return ""
	}
	network := points[len(points)-1].Network
	var series []HistoryPoint
	for _, p := range points {
		if p.Network == network && p.Top1Share.Defined {
			series = append(series, p)
		}
	}
	if len(series) == 0 {
		return ""
	}
	plotW := float64(chartWidth - chartLeft - chartRight)
	plotH := float64(chartHeight - chartTop - chartBottom)
	first, last := series[0].AsOf, series[len(series)-1].AsOf
	x := func(i int) float64 {
		span := last.Sub(first)
		if span <= 0 {
			if len(series) == 1 {
				return chartLeft + plotW/2
			}
			return chartLeft + plotW*float64(i)/float64(len(series)-1)
		}
		return chartLeft + plotW*float64(series[i].AsOf.Sub(first))/float64(span)
	}
	y := func(f snapshots.Fraction) float64 { return chartTop + plotH*(1-f.Float()) }

	var b strings.Builder
	desc := make([]string, 0, len(series))
	for _, p := range series {
		desc = append(desc, fmt.Sprintf("%s: top account %s, Gini %s", p.AsOf.Format("2 Jan 2006"), percent(p.Top1Share), p.Gini))
	}
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="history-chart" role="img" aria-labelledby="history-title history-desc" viewBox="0 0 %d %d" width="%d" height="%d" font-family="system-ui, sans-serif" font-size="13">`,
		chartWidth, chartHeight, chartWidth, chartHeight)
	fmt.Fprintf(&b, `<title id="history-title">%s over time</title><desc id="history-desc">%s</desc>`,
		html.EscapeString(network), html.EscapeString(strings.Join(desc, "; ")))
	// The scale: 0, 0.5 and 1, with light rules.
	for _, v := range []float64{0, 0.5, 1} {
		yy := chartTop + plotH*(1-v)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="currentColor" stroke-opacity="0.2"/>`, chartLeft, yy, chartWidth-chartRight, yy)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end" dominant-baseline="middle" fill="currentColor">%s</text>`, chartLeft-6, yy, []string{"0", "0.5", "1"}[int(v*2)])
	}
	line := func(name, colour, dash string, value func(HistoryPoint) snapshots.Fraction, above bool) {
		pts := make([]string, 0, len(series))
		for i, p := range series {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(value(p))))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2.5"%s points="%s"><title>%s</title></polyline>`, colour, dash, strings.Join(pts, " "), name)
		for i, p := range series {
			dy := 16.0
			if above {
				dy = -9
			}
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`, x(i), y(value(p)), colour)
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="currentColor">%s</text>`, x(i), y(value(p))+dy, value(p))
		}
	}
	// Blue and orange: told apart by colour-blind eyes, and by the dash.
	line("top account's share", "#0072b2", "", func(p HistoryPoint) snapshots.Fraction { return p.Top1Share }, true)
	line("Gini", "#e69f00", ` stroke-dasharray="6 4"`, func(p HistoryPoint) snapshots.Fraction { return p.Gini }, false)
	// Dates under the first and last points, and the key above.
	base := chartHeight - chartBottom + 22
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="start" fill="currentColor">%s</text>`, x(0), base, first.Format("2 Jan 2006"))
	if len(series) > 1 {
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="end" fill="currentColor">%s</text>`, x(len(series)-1), base, last.Format("2 Jan 2006"))
	}
	fmt.Fprintf(&b, `<line x1="%d" y1="14" x2="%d" y2="14" stroke="#0072b2" stroke-width="2.5"/><text x="%d" y="18" fill="currentColor">top account's share</text>`, chartLeft, chartLeft+24, chartLeft+30)
	fmt.Fprintf(&b, `<line x1="%d" y1="14" x2="%d" y2="14" stroke="#e69f00" stroke-width="2.5" stroke-dasharray="6 4"/><text x="%d" y="18" fill="currentColor">Gini</text>`, chartLeft+210, chartLeft+234, chartLeft+240)
	b.WriteString(`</svg>`)
	return b.String()
}

func percent(f snapshots.Fraction) string {
	if !f.Defined {
		return "none"
	}
	return fmt.Sprintf("%.1f%%", f.Float()*100)
}

// Before is the newest reading of a map by reader network older than asOf
// (another snapshot than snapshot): the earlier reading a new one of the
// same target is compared with. ok is false when the map has none.
func (x *Index) Before(mapID, network, snapshot string, asOf time.Time) (Reading, bool) {
	c, found := x.byID[mapID]
	if !found {
		return Reading{}, false
	}
	for _, r := range c.readings { // the newest first
		if r.Network == network && r.Snapshot != snapshot && r.AsOf.Before(asOf) {
			return r.Reading, true
		}
	}
	return Reading{}, false
}
