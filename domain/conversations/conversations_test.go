package conversations

import (
	"strings"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/errs"
)

func TestCleanTitleKeepsPlainTextOnOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"Holders":                            "Holders",
		"  The marketing\n\tDAO  ":           "The marketing DAO",
		"Astro\r\nstakers":                   "Astro stakers",
		"Dekan's 👩‍💻 wallets":                "Dekan's 👩‍💻 wallets", // a joiner inside an emoji stays
		strings.Repeat("é", MaxTitle):        strings.Repeat("é", MaxTitle),
		"a" + strings.Repeat(" ", 500) + "b": "a b",
	} {
		got, err := CleanTitle("title", in)
		if err != nil || got != want {
			t.Errorf("CleanTitle(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "   \n", strings.Repeat("é", MaxTitle+1), "evil\u202Eoverride", "bell\a", "nul\x00", "bad \xff utf-8"} {
		if _, err := CleanTitle("title", in); !errs.Is(err, errs.BadInput) {
			t.Errorf("CleanTitle(%q): %v, want bad_input", in, err)
		} else if !strings.Contains(err.Error(), "title") {
			t.Errorf("CleanTitle(%q): %v does not name the field", in, err)
		}
	}
}

func TestCursorRoundTripsAndRefusesWhatThisSiteDidNotGive(t *testing.T) {
	at := time.Date(2026, 11, 30, 20, 0, 0, 123456000, time.UTC)
	c := Cursor{At: at, Key: "run_" + strings.Repeat("ab", 16)}
	got, err := ParseCursor(c.String())
	if err != nil || got != c {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if first, err := ParseCursor(""); err != nil || !first.IsStart() || first.String() != "" {
		t.Fatalf("the first page: %+v, %v", first, err)
	}
	for _, s := range []string{"nope", "MS4xLnJ1bl94", strings.Repeat("A", 201),
		Cursor{At: at, Key: "prs_" + strings.Repeat("ab", 16)}.String()} {
		if _, err := ParseCursor(s); !errs.Is(err, errs.BadInput) {
			t.Errorf("ParseCursor(%q): %v", s, err)
		}
	}
}

func TestPageLimit(t *testing.T) {
	for in, want := range map[int]int{0: DefaultLimit, 1: 1, MaxLimit: MaxLimit} {
		if got, err := PageLimit(in); err != nil || got != want {
			t.Errorf("PageLimit(%d) = %d, %v", in, got, err)
		}
	}
	for _, in := range []int{-1, MaxLimit + 1} {
		if _, err := PageLimit(in); !errs.Is(err, errs.BadInput) {
			t.Errorf("PageLimit(%d): %v", in, err)
		}
	}
}
